package kernels_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// Every rung of the ladder and the demo's pitch specs resolve by name; the
// pitched but unbuilt knobs are refused with the allowed values.
func TestLadderSpecsResolve(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	for _, spec := range []string{"baseline", "baseline?launch=grouped", "baseline?launch=graph", "baseline?launch=streams",
		"baseline?stages=2", "baseline?stages=3", "baseline?stages=4", "baseline?tile_m=64", "fused",
		"fused?stages=3", "fused?tile_n=128&tile_m=64&stages=3&layout=half&blocks_per_sm=3&grid=tiles"} {
		v, err := g.ResolveVariant(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if v.Name != spec {
			t.Errorf("%s resolved to canonical name %q", spec, v.Name)
		}
	}
	var ke *kernels.KnobError
	for spec, allowed := range map[string]string{
		"baseline?epilogue=wgmma":                 "allowed: simt, tma",
		"baseline?warp_roles=producer_consumer":   "allowed: uniform",
		"fused?stages=1":                          "allowed: 2, 3, 4",
		"fused?tile_k=256":                        "known: tile_n, tile_m, stages, layout, blocks_per_sm, grid",
		"fused?launch=graph":                      "unknown knob for fused",
		"fused?tile_n=256&tile_m=64&stages=2":     "registers per thread", // 256 threads x 2 blocks
		"fused?layout=wide&blocks_per_sm=3":       "shared memory",
		"fused?tile_n=128&blocks_per_sm=3&grid=x": "allowed: persistent, tiles",
	} {
		_, err := g.ResolveVariant(spec)
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), allowed) {
			t.Errorf("%s: %v, want a KnobError containing %q", spec, err, allowed)
		}
	}
	d := problem(t, "nvfp4_dual_gemm")
	for _, spec := range []string{"fused", "fused?tile_n=128&tile_m=32&stages=4&layout=wide&blocks_per_sm=2"} {
		if v, err := d.ResolveVariant(spec); err != nil || v.Name != spec {
			t.Errorf("dual %s: %+v %v", spec, v.Name, err)
		}
	}
}

// The fused defaults are the configurations the nvcc harness measured
// fastest, and their defines are the sources' macros.
func TestFusedDefaults(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "fused")
	want := map[string]string{"WARP_N": "64", "WARP_M": "32", "WARPS_N": "4", "WARPS_M": "1", "STAGES": "4", "FG_HALF": "0", "MIN_BLOCKS": "2"}
	for k, x := range want {
		if v.Defines()[k] != x {
			t.Errorf("group fused %s=%s, want %s (%v)", k, v.Defines()[k], x, v.Defines())
		}
	}
	if sb := kernels.FusedSharedBytes(g.Name, v.Knobs); sb != 82944 {
		t.Errorf("group fused shared %d, want 82944 (FG_SMEM_BYTES)", sb)
	}
	d := problem(t, "nvfp4_dual_gemm")
	dv := resolve(t, d, "fused")
	want = map[string]string{"WARPS_N": "2", "WARPS_M": "2", "STAGES": "3", "FG_HALF": "1", "MIN_BLOCKS": "3"}
	for k, x := range want {
		if dv.Defines()[k] != x {
			t.Errorf("dual fused %s=%s, want %s", k, dv.Defines()[k], x)
		}
	}
	if sb := kernels.FusedSharedBytes(d.Name, dv.Knobs); sb != 50688 {
		t.Errorf("dual fused shared %d, want 50688", sb)
	}
	if n := dv.KernelNames(); len(n) != 1 || n[0] != "fast_dual_gemm" {
		t.Errorf("dual kernel names %v", n)
	}
}

// The fused group plan: one persistent launch whose table holds 64-byte
// FgGroup descriptors, then 16-byte-aligned FgTile entries that cover every
// output tile exactly once, largest groups first and full tiles before
// tails.
func TestFusedGroupPlan(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	s := kernels.Shape{M: []int{40, 300, 1, 129}, N: 320, K: 256}
	v := resolve(t, g, "fused")
	pl, err := v.Plan(s, h100)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 1 || pl.Mode != "grouped" || pl.TableBytes == nil || pl.WorkspaceBytes != 0 || pl.SplitK != 1 {
		t.Fatalf("%+v", pl)
	}
	l := pl.Launches[0]
	if l.Kernel != "fast_group_gemm" || l.Block != [3]uint32{128, 1, 1} || l.SharedBytes != 82944 || l.PersistentPerSM != 2 {
		t.Errorf("launch %+v", l)
	}
	const tilesOff = 4 * 64 // 256, already a multiple of 16
	if len(l.Args) != 3 || l.Args[0].Buf != kernels.BufTable || l.Args[1].Buf != kernels.BufTable || l.Args[1].Value != tilesOff {
		t.Fatalf("args %+v", l.Args)
	}
	addr := func(b kernels.Buffer, grp int) uint64 { return uint64(b)<<32 | uint64(grp)<<8 }
	tb := pl.TableBytes(addr)
	le := binary.LittleEndian
	for grp := range s.M {
		d := tb[grp*64:]
		for i, b := range []kernels.Buffer{kernels.BufA, kernels.BufSA, kernels.BufB, kernels.BufSB, kernels.BufC} {
			if le.Uint64(d[8*i:]) != addr(b, grp) {
				t.Errorf("group %d pointer %d", grp, i)
			}
		}
		if int(le.Uint32(d[40:])) != s.M[grp] || le.Uint32(d[44:]) != 320 || le.Uint32(d[48:]) != 256 {
			t.Errorf("group %d m,n,k = %d,%d,%d", grp, le.Uint32(d[40:]), le.Uint32(d[44:]), le.Uint32(d[48:]))
		}
		if le.Uint32(d[52:]) != 1 || le.Uint64(d[56:]) != 0 {
			t.Errorf("group %d: splits %d, workspace %#x; want 1 and none", grp, le.Uint32(d[52:]), le.Uint64(d[56:]))
		}
	}
	tiles := tb[tilesOff:]
	n := len(tiles) / 16
	if l.Tiles != n || l.Args[2].Value != int64(n) || int(l.Grid[0]) != min(n, 132*2) {
		t.Fatalf("grid %v, %d tiles, arg %d", l.Grid, n, l.Args[2].Value)
	}
	want := 0
	for _, m := range s.M {
		want += (m + 31) / 32 * ((320 + 255) / 256)
	}
	if n != want {
		t.Errorf("%d tiles, want %d", n, want)
	}
	seen := map[[3]int]bool{}
	lastRows := 1 << 30
	for i := 0; i < n; i++ {
		grp, m0, n0 := int(le.Uint32(tiles[16*i:])), int(le.Uint32(tiles[16*i+4:])), int(le.Uint32(tiles[16*i+8:]))
		if grp >= len(s.M) || m0%32 != 0 || n0%256 != 0 || m0 >= s.M[grp] || n0 >= s.N || seen[[3]int{grp, m0, n0}] {
			t.Fatalf("tile %d: bad or repeated (%d,%d,%d)", i, grp, m0, n0)
		}
		seen[[3]int{grp, m0, n0}] = true
		rows := min(32, s.M[grp]-m0)
		if rows > lastRows {
			t.Errorf("tile %d has %d rows after a tile of %d", i, rows, lastRows)
		}
		lastRows = rows
	}
	// The first tile is from the largest group.
	if le.Uint32(tiles[0:]) != 1 {
		t.Errorf("first tile from group %d, want 1 (M 300)", le.Uint32(tiles[0:]))
	}
	// grid=tiles, and no SM count: one block per tile, not persistent.
	vt := resolve(t, g, "fused?grid=tiles")
	pt, err := vt.Plan(s, h100)
	if err != nil || int(pt.Launches[0].Grid[0]) != n || pt.Launches[0].PersistentPerSM != 0 {
		t.Errorf("grid=tiles: %+v %v", pt.Launches[0], err)
	}
	pn, _ := v.Plan(s, kernels.Limits{})
	if int(pn.Launches[0].Grid[0]) != n {
		t.Errorf("no SM count: grid %v", pn.Launches[0].Grid)
	}
}

func TestFusedDualPlan(t *testing.T) {
	d := problem(t, "nvfp4_dual_gemm")
	s := kernels.Shape{M: []int{200}, N: 448, K: 384}
	pl, err := resolve(t, d, "fused").Plan(s, h100)
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	tiles := 4 * 7 // ceil(200/64) x 448/64
	if len(pl.Launches) != 1 || l.Kernel != "fast_dual_gemm" || l.Grid[0] != uint32(tiles) || l.Tiles != tiles || l.SharedBytes != 50688 || l.Block[0] != 128 {
		t.Fatalf("%+v", l)
	}
	if len(l.Args) != 10 || l.Args[4].Buf != kernels.BufB2 || l.Args[6].Buf != kernels.BufC || l.Args[7].Value != 200 || l.Args[8].Value != 448 || l.Args[9].Value != 384 {
		t.Errorf("args %+v", l.Args)
	}
	pp, err := resolve(t, d, "fused?grid=persistent&blocks_per_sm=1&layout=wide&tile_n=128&tile_m=32").Plan(s, kernels.Limits{SMs: 10})
	if err != nil || pp.Launches[0].Grid[0] != 10 || pp.Launches[0].Tiles != 7*4 || pp.Launches[0].Block[0] != 128 {
		t.Errorf("persistent: %+v %v", pp.Launches[0], err)
	}
}

// Every enumerated fused combination passes its own rules and fits an
// H100 SM blocks_per_sm times.
func TestFusedCombinations(t *testing.T) {
	for _, p := range kernels.Problems() {
		combos := p.VariantCombinations("fused")
		if len(combos) < 20 {
			t.Errorf("%s: %d fused combinations", p.Name, len(combos))
		}
		for _, k := range combos {
			if sb := kernels.FusedSharedBytes(p.Name, k); k.BlocksPerSM*(sb+1024) > 233472 {
				t.Errorf("%s %+v: %d blocks of %d bytes", p.Name, k, k.BlocksPerSM, sb)
			}
			if th := kernels.FusedThreads(p.Name, k); th*k.BlocksPerSM > 390 || th < 32 {
				t.Errorf("%s %+v: %d threads x %d blocks", p.Name, k, th, k.BlocksPerSM)
			}
		}
	}
}

// The fused kernels' fixed launch mode is what their plans do: one launch
// over all groups, or the dual GEMM's single launch.
func TestFusedLaunchKnob(t *testing.T) {
	for name, want := range map[string]string{"nvfp4_group_gemm": "grouped", "nvfp4_dual_gemm": "sequential"} {
		p := problem(t, name)
		for _, spec := range []string{"fused", "fused?stages=2"} {
			v := resolve(t, p, spec)
			pl, err := v.Plan(p.Benchmarks[0], h100)
			if err != nil || v.Knobs.Launch != want || pl.Mode != want {
				t.Errorf("%s %s: knob launch %q, plan mode %v (%v), want %q", name, spec, v.Knobs.Launch, pl, err, want)
			}
		}
		for _, k := range p.VariantCombinations("fused") {
			if k.Launch != want || !k.SwapAB || k.TileK != 128 {
				t.Fatalf("%s combination %+v", name, k)
			}
		}
	}
}

// kernels/ladder.json (the demo's ladder pitches) parses with exactly the
// agreed fields, names variants that resolve canonically on their rung's
// problem, and its ranges and measurements are sane.
func TestLadderJSON(t *testing.T) {
	rungs, err := kernels.Ladder()
	if err != nil {
		t.Fatal(err)
	}
	if len(rungs) < 8 {
		t.Errorf("%d rungs", len(rungs))
	}
	for _, r := range rungs {
		v, err := problem(t, r.Problem).ResolveVariant(r.Variant)
		if err != nil || v.Name != r.Variant || v.Name == "baseline" {
			t.Errorf("%q: %v (canonical %q)", r.Variant, err, v.Name)
		}
		if r.Title == "" || r.Device == "" || r.Date == "" {
			t.Errorf("%q: incomplete %+v", r.Variant, r)
		}
		if r.Measured != nil && *r.Measured <= 0 {
			t.Errorf("%q: measured %v", r.Variant, *r.Measured)
		}
	}
}
