package kernels_test

import (
	"encoding/binary"
	"errors"
	"fmt"
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

// swap_ab=true: the knob resolves, compiles with SWAP_AB=1, keeps the
// grid (tile_m token rows, tile_n output columns) and the arguments, and
// asks for the staged C tile's shared memory where it exceeds the
// pipeline's.
func TestBaselineSwapAB(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "baseline?tile_m=64&swap_ab=true")
	if v.Name != "baseline?tile_m=64&swap_ab=true" || !v.Knobs.SwapAB || v.MinArch != 80 {
		t.Fatalf("%q swap %v MinArch %d", v.Name, v.Knobs.SwapAB, v.MinArch)
	}
	if d := v.Defines(); d["SWAP_AB"] != "1" || d["EPI_TMA"] != "0" || d["TILE_M"] != "64" {
		t.Errorf("defines %v", d)
	}
	if d := resolve(t, g, "baseline").Defines(); d["SWAP_AB"] != "0" || d["EPI_TMA"] != "0" {
		t.Errorf("baseline defines %v", d)
	}
	s := kernels.Shape{M: []int{1, 130}, N: 192, K: 384}
	pl, err := v.Plan(s, h100)
	if err != nil {
		t.Fatal(err)
	}
	for gi, l := range pl.Launches {
		if want := [3]uint32{2, uint32((s.M[gi] + 63) / 64), 1}; l.Grid != want || l.Kernel != "gemm_group" || len(l.Args) != 8 {
			t.Errorf("launch %d: %+v", gi, l)
		}
	}
	// 64x256 with one 128-wide K stage: the pipeline holds (64+256) rows of
	// 64+16+8 bytes = 28160, the staged tile 64 rows of 2*256+16 = 33792.
	k := resolve(t, g, "baseline?tile_m=64&tile_n=256&tile_k=128").Knobs
	if sb := kernels.SharedBytes(g.Name, k); sb != 28160 {
		t.Errorf("unstaged 64x256x128: %d bytes", sb)
	}
	k.SwapAB = true
	if sb := kernels.SharedBytes(g.Name, k); sb != 33792 {
		t.Errorf("swapped 64x256x128: %d bytes, want the staged tile's 33792", sb)
	}
	// The dual GEMM swaps too; B1 and B2 keep sharing the token tile.
	d := problem(t, "nvfp4_dual_gemm")
	dv := resolve(t, d, "baseline?swap_ab=true&launch=graph")
	if dv.Defines()["SWAP_AB"] != "1" || dv.Defines()["DUAL"] != "1" {
		t.Errorf("dual defines %v", dv.Defines())
	}
	if pl, err := dv.Plan(kernels.Shape{M: []int{33}, N: 256, K: 256}, h100); err != nil || pl.Mode != "graph" || pl.Launches[0].Grid != [3]uint32{2, 1, 1} {
		t.Errorf("dual swapped plan: %+v %v", pl, err)
	}
}

// epilogue=tma: MinArch 90, EPI_TMA=1, refused below sm_90 by a
// KnobError naming the knob, planned on Hopper, with the staged tile's
// shared memory counted.
func TestBaselineEpilogueTMA(t *testing.T) {
	for _, pname := range []string{"nvfp4_group_gemm", "nvfp4_dual_gemm"} {
		p := problem(t, pname)
		v := resolve(t, p, "baseline?epilogue=tma&swap_ab=true")
		if v.Name != "baseline?epilogue=tma&swap_ab=true" || v.MinArch != 90 || v.Defines()["EPI_TMA"] != "1" || v.Defines()["SWAP_AB"] != "1" {
			t.Errorf("%s: %q MinArch %d defines %v", pname, v.Name, v.MinArch, v.Defines())
		}
		s := p.Tests[0]
		var ke *kernels.KnobError
		_, err := v.Plan(s, kernels.Limits{SMs: 108, MaxSharedOptin: 166912, Arch: "sm_80"})
		if !errors.As(err, &ke) || ke.Knob != "epilogue" || !strings.Contains(err.Error(), "sm_90") {
			t.Errorf("%s sm_80: %v", pname, err)
		}
		if _, err := v.Plan(s, h100); err != nil {
			t.Errorf("%s sm_90a: %v", pname, err)
		}
		k := v.Knobs
		if w, err := p.WithKnobs(resolve(t, p, "baseline"), k); err != nil || w.MinArch != 90 || w.Name != v.Name {
			t.Errorf("%s WithKnobs: %q %d %v", pname, w.Name, w.MinArch, err)
		}
		if sb, tile := kernels.SharedBytes(pname, k), k.TileM*(2*k.TileN+16); sb < tile {
			t.Errorf("%s: %d bytes of shared memory, less than the staged tile's %d", pname, sb, tile)
		}
	}
}

// The declared baseline space holds every swap_ab and epilogue value, each
// with every tile size, and every combination fits Hopper's shared memory.
func TestBaselineNewValuesEnumerated(t *testing.T) {
	for _, p := range kernels.Problems() {
		seen := map[string]bool{}
		for _, k := range p.KnobCombinations() {
			seen[fmt.Sprintf("%v/%s/%dx%d", k.SwapAB, k.Epilogue, k.TileM, k.TileN)] = true
			if sb := kernels.SharedBytes(p.Name, k); sb > 232448 {
				t.Errorf("%s %+v: %d bytes", p.Name, k, sb)
			}
		}
		tiles := []string{"64x64", "64x128", "128x64"}
		if p.Name == "nvfp4_group_gemm" {
			tiles = append(tiles, "128x128", "64x256")
		}
		for _, swap := range []string{"false", "true"} {
			for _, epi := range []string{"simt", "tma"} {
				for _, tl := range tiles {
					if !seen[swap+"/"+epi+"/"+tl] {
						t.Errorf("%s: swap_ab=%s epilogue=%s tile %s not enumerated", p.Name, swap, epi, tl)
					}
				}
			}
		}
	}
}
