package kernels_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// The K ranges of the partitions cover every chunk exactly once, in order,
// and are balanced to within one chunk, for any chunk count and split.
func TestFusedSplitRange(t *testing.T) {
	for kch := 1; kch <= 80; kch++ {
		for _, s := range []int{1, 2, 3, 4, 8} {
			next, lo, hi := 0, kch, 0
			for ks := 0; ks < s; ks++ {
				kb, ke := kernels.FusedSplitRange(kch, ks, s)
				if kb != next || ke < kb {
					t.Fatalf("kch %d split %d: partition %d is [%d,%d), want it to start at %d", kch, s, ks, kb, ke, next)
				}
				next = ke
				lo, hi = min(lo, ke-kb), max(hi, ke-kb)
			}
			if next != kch || hi-lo > 1 {
				t.Errorf("kch %d split %d: covers [0,%d), lengths %d..%d", kch, s, next, lo, hi)
			}
		}
	}
}

// A split-K plan: the main launch walks S entries per output tile (slots
// base*S+ks, each once), the reduce launch one entry per tile (pad = its
// base index, the tile's place in the main table's order); the descriptors
// carry S and the workspace address; the workspace holds S fp32 tiles per
// output tile.
func TestFusedSplitKPlan(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	s := kernels.Shape{M: []int{40, 300, 1, 129}, N: 320, K: 1024}
	for _, spec := range []string{"fused?split_k=2", "fused?split_k=4", "fused?tile_n=128&tile_m=64&stages=3&layout=half&blocks_per_sm=3&grid=tiles&split_k=4"} {
		v := resolve(t, g, spec)
		if v.Name != spec {
			t.Errorf("%s: canonical name %q", spec, v.Name)
		}
		split := v.Knobs.SplitK
		pl, err := v.Plan(s, h100)
		if err != nil {
			t.Fatal(err)
		}
		base := kernels.FusedTiles(s, v.Knobs)
		T := len(base)
		tileN, tileM := v.Knobs.TileN, v.Knobs.TileM
		if pl.SplitK != split || len(pl.Launches) != 2 || pl.Mode != "grouped" {
			t.Fatalf("%s: %+v", spec, pl)
		}
		if want := int64(split * T * tileN * tileM * 4); pl.WorkspaceBytes != want || kernels.FusedWorkspaceBytes(s, v.Knobs, split) != want {
			t.Errorf("%s: workspace %d bytes, want %d", spec, pl.WorkspaceBytes, want)
		}
		main, red := pl.Launches[0], pl.Launches[1]
		if main.Kernel != "fast_group_gemm" || main.Tiles != split*T || main.Args[2].Value != int64(split*T) {
			t.Errorf("%s: main launch %+v", spec, main)
		}
		if red.Kernel != "fast_group_reduce" || red.Grid[0] != uint32(T) || red.Args[2].Value != int64(T) || red.PersistentPerSM != 0 ||
			red.Block != main.Block || red.SharedBytes != uint32(tileM*(2*tileN+16)) || red.Stream != 0 {
			t.Errorf("%s: reduce launch %+v", spec, red)
		}
		const ws = 0xABCD0000
		addr := func(b kernels.Buffer, grp int) uint64 {
			if b == kernels.BufWork {
				return ws
			}
			return uint64(b)<<32 | uint64(grp)<<8
		}
		tb := pl.TableBytes(addr)
		le := binary.LittleEndian
		for grp := range s.M {
			d := tb[grp*64:]
			if le.Uint32(d[52:]) != uint32(split) || le.Uint64(d[56:]) != ws {
				t.Errorf("%s group %d: splits %d, ws %#x", spec, grp, le.Uint32(d[52:]), le.Uint64(d[56:]))
			}
		}
		entry := func(off int64, i int) (int, int, int, int) {
			e := tb[off+int64(16*i):]
			return int(le.Uint32(e)), int(le.Uint32(e[4:])), int(le.Uint32(e[8:])), int(le.Uint32(e[12:]))
		}
		if main.Args[1].Value+int64(16*split*T) != red.Args[1].Value || int(red.Args[1].Value)+16*T != len(tb) {
			t.Fatalf("%s: table offsets %d, %d, length %d", spec, main.Args[1].Value, red.Args[1].Value, len(tb))
		}
		slots := map[int]bool{}
		for i := 0; i < split*T; i++ {
			grp, m0, n0, slot := entry(main.Args[1].Value, i)
			b := base[slot/split]
			if slot < 0 || slot >= split*T || slots[slot] || b.Group != grp || b.M0 != m0 || b.N0 != n0 {
				t.Fatalf("%s: item %d (%d,%d,%d) slot %d: bad, repeated or not its tile's", spec, i, grp, m0, n0, slot)
			}
			slots[slot] = true
		}
		for i := 0; i < T; i++ {
			grp, m0, n0, idx := entry(red.Args[1].Value, i)
			if idx != i || base[i] != (kernels.FusedTile{Group: grp, M0: m0, N0: n0}) {
				t.Errorf("%s: reduce entry %d = (%d,%d,%d,%d)", spec, i, grp, m0, n0, idx)
			}
		}
	}
}

// split_k=auto: the cost model's choice per shape, documented in
// docs/KNOBS.md. On an H100 (132 SMs) it splits only the third benchmark
// shape (192 tiles for 264 resident blocks), into 4; without an SM count, or with
// partitions shorter than the pipeline, it does not split.
func TestFusedSplitAuto(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "fused?split_k=auto")
	if v.Name != "fused?split_k=auto" || v.Knobs.SplitK != kernels.SplitKAuto {
		t.Fatalf("%q %+v", v.Name, v.Knobs)
	}
	want := []int{1, 1, 4, 1}
	for i, s := range g.Benchmarks {
		pl, err := v.Plan(s, h100)
		if err != nil {
			t.Fatal(err)
		}
		if pl.SplitK != want[i] || kernels.FusedSplitK(s, v.Knobs, h100) != want[i] {
			t.Errorf("%v: auto chose %d, want %d (model: %.1f / %.1f / %.1f us for 1 / 2 / 4)", s, pl.SplitK, want[i],
				kernels.FusedSplitCostUS(s, v.Knobs, h100, 1), kernels.FusedSplitCostUS(s, v.Knobs, h100, 2), kernels.FusedSplitCostUS(s, v.Knobs, h100, 4))
		}
		if (pl.SplitK > 1) != (len(pl.Launches) == 2) {
			t.Errorf("%v: %d launches for split %d", s, len(pl.Launches), pl.SplitK)
		}
	}
	if n := kernels.FusedSplitK(g.Benchmarks[2], v.Knobs, kernels.Limits{}); n != 1 {
		t.Errorf("no SM count: split %d", n)
	}
	// Few tiles but K of 2 chunks: a split would not fill the pipeline.
	if n := kernels.FusedSplitK(kernels.Shape{M: []int{32}, N: 256, K: 256}, v.Knobs, h100); n != 1 {
		t.Errorf("K=256: split %d", n)
	}
	// One small tile over a long K on a big device: splitting is the only
	// parallelism there is.
	if n := kernels.FusedSplitK(kernels.Shape{M: []int{32}, N: 256, K: 16384}, v.Knobs, h100); n != 4 {
		t.Errorf("one tile, K=16384: split %d, want 4", n)
	}
	// Explicit values are kept whatever the shape, K=128 included (the
	// empty partitions write zero partial sums).
	v4 := resolve(t, g, "fused?split_k=4")
	pl, err := v4.Plan(kernels.Shape{M: []int{7}, N: 64, K: 128}, h100)
	if err != nil || pl.SplitK != 4 {
		t.Errorf("split_k=4 on K=128: %+v %v", pl, err)
	}
	// The knob is the group kernel's only.
	d := problem(t, "nvfp4_dual_gemm")
	var ke *kernels.KnobError
	if _, err := d.ResolveVariant("fused?split_k=2"); !errors.As(err, &ke) {
		t.Errorf("dual split_k: %v", err)
	}
	if _, err := g.ResolveVariant("fused?split_k=3"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "1, 2, 4, auto") {
		t.Errorf("split_k=3: %v", err)
	}
}

// epilogue=tma: declared for the fused group kernel, compiled with
// FG_EPI_TMA=1, needs sm_90 (MinArch, and the plan refuses an older
// device with a message naming the knob).
func TestFusedEpilogueTMA(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "fused?epilogue=tma")
	if v.Name != "fused?epilogue=tma" || v.MinArch != 90 || v.Defines()["FG_EPI_TMA"] != "1" {
		t.Errorf("%q MinArch %d defines %v", v.Name, v.MinArch, v.Defines())
	}
	if f := resolve(t, g, "fused"); f.MinArch != 80 || f.Defines()["FG_EPI_TMA"] != "0" {
		t.Errorf("fused: MinArch %d, defines %v", f.MinArch, f.Defines())
	}
	s := g.Benchmarks[3]
	var ke *kernels.KnobError
	_, err := v.Plan(s, kernels.Limits{SMs: 108, MaxSharedOptin: 166912, Arch: "sm_80"})
	if !errors.As(err, &ke) || ke.Knob != "epilogue" || !strings.Contains(err.Error(), "sm_90") {
		t.Errorf("sm_80: %v", err)
	}
	if _, err := v.Plan(s, h100); err != nil {
		t.Errorf("sm_90a: %v", err)
	}
	both := resolve(t, g, "fused?split_k=auto&epilogue=tma")
	if both.Name != "fused?split_k=auto&epilogue=tma" || both.MinArch != 90 {
		t.Errorf("%q %d", both.Name, both.MinArch)
	}
	k := both.Knobs
	if w, err := g.WithKnobs(resolve(t, g, "fused"), k); err != nil || w.MinArch != 90 || w.Name != both.Name {
		t.Errorf("WithKnobs: %+v %v", w, err)
	}
	d := problem(t, "nvfp4_dual_gemm")
	if _, err := d.ResolveVariant("fused?epilogue=tma"); !errors.As(err, &ke) {
		t.Errorf("dual tma: %v", err)
	}
}
