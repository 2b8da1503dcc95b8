package kernels_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

var h100 = kernels.Limits{SMs: 132, MaxSharedOptin: 232448, Arch: "sm_90a"}

func resolve(t *testing.T, p *kernels.Problem, spec string) kernels.Variant {
	t.Helper()
	v, err := p.ResolveVariant(spec)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPlanSequentialStreamsGraph(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	s := kernels.Shape{M: []int{1, 130, 64}, N: 192, K: 384}
	for _, mode := range []string{"sequential", "streams", "graph"} {
		v := resolve(t, g, "baseline?launch="+mode)
		pl, err := v.Plan(s, h100)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Mode != mode || len(pl.Launches) != 3 || pl.TableBytes != nil {
			t.Fatalf("%s: %+v", mode, pl)
		}
		for gi, l := range pl.Launches {
			wantY := uint32((s.M[gi] + 127) / 128)
			if l.Kernel != "gemm_group" || l.Grid != [3]uint32{2, wantY, 1} || l.Block != [3]uint32{128, 1, 1} || l.Group != gi {
				t.Errorf("%s launch %d: %+v", mode, gi, l)
			}
			if l.SharedBytes != uint32(kernels.SharedBytes(g.Name, v.Knobs)) {
				t.Errorf("%s: shared %d", mode, l.SharedBytes)
			}
			if (mode == "streams") != (l.Stream == gi+1) {
				t.Errorf("%s launch %d on stream %d", mode, gi, l.Stream)
			}
			// A, SA, B, SB, C, M, N, K
			if len(l.Args) != 8 || l.Args[4].Buf != kernels.BufC || l.Args[5].Value != int64(s.M[gi]) || l.Args[7].Value != 384 {
				t.Errorf("%s args %+v", mode, l.Args)
			}
		}
		if mode == "streams" && pl.Streams != 3 {
			t.Errorf("streams: %d", pl.Streams)
		}
	}
}

// The grouped table covers every output tile exactly once, largest groups
// first, and its descriptors carry each group's pointers and M.
func TestPlanGroupedTable(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	s := kernels.Shape{M: []int{40, 300, 1, 129}, N: 320, K: 256}
	v := resolve(t, g, "baseline?launch=grouped&tile_m=64&tile_n=64")
	pl, err := v.Plan(s, h100)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 1 || pl.Launches[0].Kernel != "gemm_grouped" || pl.Launches[0].Group != -1 || pl.TableBytes == nil {
		t.Fatalf("%+v", pl)
	}
	addr := func(b kernels.Buffer, grp int) uint64 { return uint64(b)<<32 | uint64(grp)<<8 }
	tb := pl.TableBytes(addr)
	le := binary.LittleEndian
	for grp := range s.M {
		d := tb[grp*48:]
		for i, b := range []kernels.Buffer{kernels.BufA, kernels.BufSA, kernels.BufB, kernels.BufSB, kernels.BufC} {
			if le.Uint64(d[8*i:]) != addr(b, grp) {
				t.Errorf("group %d pointer %d", grp, i)
			}
		}
		if le.Uint64(d[40:]) != uint64(s.M[grp]) {
			t.Errorf("group %d M", grp)
		}
	}
	tiles := tb[len(s.M)*48:]
	n := len(tiles) / 16
	if int(pl.Launches[0].Grid[0]) != n || pl.Launches[0].Args[2].Value != int64(n) {
		t.Fatalf("grid %v, %d tiles", pl.Launches[0].Grid, n)
	}
	seen := map[[3]int]bool{}
	lastM := 1 << 30
	for i := 0; i < n; i++ {
		grp, m0, n0 := int(le.Uint32(tiles[16*i:])), int(le.Uint32(tiles[16*i+4:])), int(le.Uint32(tiles[16*i+8:]))
		if s.M[grp] > lastM {
			t.Errorf("tile %d: group %d (M %d) after a smaller group", i, grp, s.M[grp])
		}
		lastM = s.M[grp]
		if m0%64 != 0 || n0%64 != 0 || m0 >= s.M[grp] || n0 >= s.N || seen[[3]int{grp, m0, n0}] {
			t.Errorf("tile %d: bad or repeated (%d,%d,%d)", i, grp, m0, n0)
		}
		seen[[3]int{grp, m0, n0}] = true
	}
	want := 0
	for _, m := range s.M {
		want += (m + 63) / 64 * (320 / 64)
	}
	if n != want {
		t.Errorf("%d tiles, want %d", n, want)
	}
}

func TestPlanDualAndReference(t *testing.T) {
	d := problem(t, "nvfp4_dual_gemm")
	s := kernels.Shape{M: []int{33}, N: 64, K: 128}
	pl, err := resolve(t, d, "baseline").Plan(s, h100)
	if err != nil || len(pl.Launches) != 1 || pl.Launches[0].Kernel != "gemm_dual" || len(pl.Launches[0].Args) != 10 {
		t.Fatalf("%+v %v", pl, err)
	}
	if pl.Launches[0].Grid != [3]uint32{1, 1, 1} {
		t.Errorf("grid %v", pl.Launches[0].Grid)
	}
	rp, err := resolve(t, d, "reference").Plan(s, kernels.Limits{})
	if err != nil || rp.Launches[0].Kernel != "ref_dual" || rp.Launches[0].Args[6].Buf != kernels.BufRef {
		t.Fatalf("%+v %v", rp, err)
	}
	if rp.Launches[0].Grid != [3]uint32{4, 3, 1} {
		t.Errorf("reference grid %v", rp.Launches[0].Grid)
	}
}

func TestPlanRejects(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "baseline?stages=4")
	if _, err := v.Plan(kernels.Shape{M: []int{5}, N: 100, K: 128}, h100); err == nil || !strings.Contains(err.Error(), "multiple of 64") {
		t.Errorf("bad shape: %v", err)
	}
	small := h100
	small.MaxSharedOptin = 101376 // an sm_86 card
	if _, err := v.Plan(kernels.Shape{M: []int{5}, N: 64, K: 128}, small); err == nil || !strings.Contains(err.Error(), "shared memory") {
		t.Errorf("over the device's shared memory: %v", err)
	}
}
