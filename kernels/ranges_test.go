package kernels

import (
	"encoding/binary"
	"math/rand"
	"strings"
	"testing"
)

// blockCosts is each block's cost under ranges r: its whole tiles (t < t0,
// tile t on block t % grid) and its stream-K chunks.
func blockCosts(cost []float64, kch, grid, t0 int, r []int) []float64 {
	out := make([]float64, grid)
	for t := 0; t < t0; t++ {
		out[t%grid] += float64(kch) * cost[t]
	}
	for b := range grid {
		for x := r[b]; x < r[b+1]; x++ {
			out[b] += cost[t0+x/kch]
		}
	}
	return out
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// costRanges' contract on random launches: grid + 1 ascending indices from
// 0 to the stream-K part's chunk count, every block at least one chunk; the
// most loaded block never above equal ranges' (beyond a chunk), and equal
// costs give equal ranges within a chunk.
func TestCostRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := range 300 {
		grid := 1 + rng.Intn(140)
		kch := 1 + rng.Intn(60)
		tiles := 1 + rng.Intn(400)
		if tiles*kch < grid {
			continue // the kernel's grid is at most the chunks
		}
		hybrid := i%2 == 0
		t0 := wgmmaHybridStart(tiles, kch, grid, hybrid)
		if t0 < 0 {
			continue // fewer tiles than a wave: the kernel's hybrid is stream-K over all
		}
		same := i%5 == 0
		cost := make([]float64, tiles)
		for j := range cost {
			cost[j] = 1
			if !same {
				cost[j] = wgmmaChunkCost(64*(1+rng.Intn(2)), 128)
			}
		}
		r := costRanges(cost, kch, grid, t0)
		n := (tiles - t0) * kch
		if len(r) != grid+1 || r[0] != 0 || r[grid] != n {
			t.Fatalf("case %d: %d ranges from %d to %d, want %d from 0 to %d", i, len(r), r[0], r[len(r)-1], grid+1, n)
		}
		for b := range grid {
			if n > 0 && r[b+1] <= r[b] {
				t.Fatalf("case %d (grid %d, %d chunks): block %d's range [%d, %d) is empty", i, grid, n, b, r[b], r[b+1])
			}
		}
		eq := make([]int, grid+1)
		for b := range eq {
			eq[b] = b * n / grid
		}
		got, want := maxOf(blockCosts(cost, kch, grid, t0, r)), maxOf(blockCosts(cost, kch, grid, t0, eq))
		if got > want+1.0001 {
			t.Errorf("case %d: most loaded block %.2f, equal ranges' %.2f", i, got, want)
		}
		if same && !hybrid {
			for b := range grid {
				if d := r[b] - eq[b]; d < -1 || d > 1 {
					t.Fatalf("case %d: equal costs, block %d starts at %d, equal ranges at %d", i, b, r[b], eq[b])
				}
			}
		}
	}
}

// On group bench1 (fit64: full and 64-token tail tiles under hybrid) the
// balanced ranges bring the most loaded block to within 1.5% of the mean,
// where equal ranges leave it over 4% above.
func TestCostRangesGroupBench1(t *testing.T) {
	s := Shape{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}
	p := wgmmaProblem(t)
	v, err := p.ResolveVariant("wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&registers=split&tokens=once&consumers=3&ranges=cost")
	if err != nil {
		t.Fatal(err)
	}
	k := v.Knobs
	tiles := FusedTiles(s, k)
	cost := make([]float64, len(tiles))
	var sum float64
	for i, tl := range tiles {
		cost[i] = wgmmaChunkCost(wgmmaFitWidth(k, min(k.TileM, s.M[tl.Group]-tl.M0)), k.TileM)
		sum += cost[i] * float64(s.K/128)
	}
	kch, grid := s.K/128, 132
	t0 := wgmmaHybridStart(len(tiles), kch, grid, true)
	n := (len(tiles) - t0) * kch
	eq := make([]int, grid+1)
	for b := range eq {
		eq[b] = b * n / grid
	}
	mean := sum / float64(grid)
	bal, equal := maxOf(blockCosts(cost, kch, grid, t0, costRanges(cost, kch, grid, t0)))/mean, maxOf(blockCosts(cost, kch, grid, t0, eq))/mean
	if bal > 1.015 || equal < 1.04 {
		t.Errorf("most loaded block over the mean: balanced %.3f, equal %.3f; want <= 1.015 and >= 1.04", bal, equal)
	}
}

// ranges=cost: the rule, the define only on modules that cut tiles, the
// table after the flags as the GEMM's last argument, and nothing where
// auto runs whole tiles.
func TestWgmmaRangesPlan(t *testing.T) {
	p := wgmmaProblem(t)
	for _, spec := range []string{
		"wgmma?tail_width=fit64&ranges=cost",                                               // whole tiles
		"wgmma?schedule=hybrid&ranges=cost",                                                // every chunk the same width
		"wgmma?tail_width=fit64&schedule=hybrid&tokens=once&prefetch=producer&ranges=cost", // the copiers walk equal ranges
	} {
		if _, err := p.ResolveVariant(spec); err == nil || !strings.Contains(err.Error(), "ranges") {
			t.Errorf("%s: %v, want a refusal naming ranges", spec, err)
		}
	}
	d, _ := LookupProblem("nvfp4_dual_gemm")
	if _, err := d.ResolveVariant("wgmma?schedule=streamk&ranges=cost"); err == nil {
		t.Error("the dual GEMM took ranges=cost")
	}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	best := "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3"
	s := Shape{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168}
	d0, pl0 := resolvePlan(t, p, best, s, lim)
	d1, pl1 := resolvePlan(t, p, best+"&ranges=cost", s, lim)
	if d0["WG_RANGES"] != "0" || d1["WG_RANGES"] != "1" || d1["WG_SK"] != "2" {
		t.Fatalf("defines: without %v, with %v", d0, d1)
	}
	g0, g1 := pl0.Launches[1], pl1.Launches[1]
	if len(g1.Args) != len(g0.Args)+1 {
		t.Fatalf("GEMM args: %d with ranges=cost, %d without", len(g1.Args), len(g0.Args))
	}
	tb0 := pl0.TableBytes(func(Buffer, int) uint64 { return 1 })
	tb1 := pl1.TableBytes(func(Buffer, int) uint64 { return 1 })
	off := g1.Args[len(g1.Args)-1]
	if off.Kind != ArgPtr || off.Buf != BufTable || off.Value != int64(len(tb0)) || string(tb1[:len(tb0)]) != string(tb0) {
		t.Fatalf("ranges at %+v, table %d bytes after %d unchanged ones", off, len(tb1), len(tb0))
	}
	le := binary.LittleEndian
	grid := int(g1.Grid[0])
	if len(tb1) != len(tb0)+4*(grid+2) || int(le.Uint32(tb1[off.Value:])) != grid {
		t.Fatalf("ranges table %d bytes for grid %d (first word %d)", len(tb1)-len(tb0), grid, le.Uint32(tb1[off.Value:]))
	}
	kch, prev := s.K/128, -1
	tiles := len(FusedTiles(s, resolveFor(t, p, best, s, lim).Knobs))
	for b := 0; b <= grid; b++ {
		x := int(le.Uint32(tb1[int(off.Value)+4+4*b:]))
		if x <= prev && b > 0 || b == 0 && x != 0 {
			t.Fatalf("range start %d of block %d after %d", x, b, prev)
		}
		prev = x
	}
	if want := (tiles - wgmmaHybridStart(tiles, kch, grid, true)) * kch; prev != want {
		t.Errorf("ranges end at chunk %d, want %d", prev, want)
	}
	// Group bench3 runs whole tiles under autohybrid: the same module and
	// launch as without ranges=cost.
	s3 := Shape{M: []int{192, 320}, N: 3072, K: 4096}
	d3, pl3 := resolvePlan(t, p, best+"&ranges=cost", s3, lim)
	_, pl3b := resolvePlan(t, p, best, s3, lim)
	if d3["WG_RANGES"] != "0" || len(pl3.Launches[1].Args) != len(pl3b.Launches[1].Args) {
		t.Errorf("whole tiles with ranges=cost: defines %v, %d args against %d", d3, len(pl3.Launches[1].Args), len(pl3b.Launches[1].Args))
	}
}

// pieceMax is the most loaded block's and the mean block's estimated cost
// under ranges r, priced as pieceRanges prices them.
func pieceMax(p *pieceCoster, grid int, r []int) (most, mean float64) {
	for b := range grid {
		c := p.cost(b, r[b], r[b+1])
		most = max(most, c)
		mean += c / float64(grid)
	}
	return most, mean
}

func equalRanges(n, grid int) []int {
	r := make([]int, grid+1)
	for b := range r {
		r[b] = b * n / grid
	}
	return r
}

// pieceRanges' contract on random launches: costRanges' shape (grid + 1
// ascending indices over the part, no empty range), the most loaded block
// never above equal ranges' under the same prices, and with free pieces
// and equal chunks the least possible maximum, ceil(n / grid) chunks.
func TestPieceRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i := range 300 {
		grid := 1 + rng.Intn(140)
		kch := 1 + rng.Intn(60)
		tiles := 1 + rng.Intn(300)
		if tiles*kch < grid {
			continue
		}
		t0 := wgmmaHybridStart(tiles, kch, grid, i%2 == 0)
		if t0 < 0 {
			continue
		}
		cost := make([]float64, tiles)
		for j := range cost {
			cost[j] = wgmmaChunkCost(64*(1+rng.Intn(2)), 128)
		}
		change, fixup := 3*rng.Float64(), 2*rng.Float64()
		if i%7 == 0 {
			change, fixup = 0, 0
			for j := range cost {
				cost[j] = 1
			}
		}
		r := pieceRanges(cost, kch, grid, t0, change, fixup)
		n := (tiles - t0) * kch
		if len(r) != grid+1 || r[0] != 0 || r[grid] != n {
			t.Fatalf("case %d: %d ranges from %d to %d, want %d from 0 to %d", i, len(r), r[0], r[len(r)-1], grid+1, n)
		}
		if n == 0 {
			continue // whole waves only
		}
		for b := range grid {
			if r[b+1] <= r[b] {
				t.Fatalf("case %d (grid %d, %d chunks): block %d's range [%d, %d) is empty", i, grid, n, b, r[b], r[b+1])
			}
		}
		p := newPieceCoster(cost, kch, grid, t0, change, fixup)
		got, _ := pieceMax(p, grid, r)
		want, _ := pieceMax(p, grid, equalRanges(n, grid))
		if got > want+1e-9 {
			t.Errorf("case %d (grid %d, kch %d, %d tiles from %d, change %.2f, fixup %.2f): most loaded block %.3f, equal ranges' %.3f",
				i, grid, kch, tiles, t0, change, fixup, got, want)
		}
		if i%7 == 0 && t0 == 0 {
			if most := float64(ceilDiv(n, grid)); got != most {
				t.Errorf("case %d: free pieces, equal chunks: most loaded block %.0f chunks, want %.0f", i, got, most)
			}
		}
	}
}

// On the dual best's stream-K shapes (bench3: 96 tiles of 32 chunks,
// bench4: 96 of 56, 132 SMs) the balanced ranges lower the estimated
// longest block: the prediction kernel-notes step 40 made before its run.
func TestPieceRangesDualBench(t *testing.T) {
	d, _ := LookupProblem("nvfp4_dual_gemm")
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	dt := "wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split&ranges=pieces"
	for _, c := range []struct {
		s        Shape
		min, max float64 // equal ranges' longest block over the balanced one
	}{
		{Shape{M: []int{256}, N: 3072, K: 4096}, 1.005, 1.02},
		{Shape{M: []int{512}, N: 3072, K: 7168}, 1.015, 1.03},
	} {
		d0, pl := resolvePlan(t, d, dt, c.s, lim)
		if d0["WG_RANGES"] != "1" || d0["WG_SK"] != "1" {
			t.Fatalf("%v: defines %v", c.s, d0)
		}
		k := resolveFor(t, d, dt, c.s, lim).Knobs
		tiles, kch, grid := wgmmaTiles(d.Name, c.s, k), c.s.K/128, int(pl.Launches[1].Grid[0])
		cost := make([]float64, tiles)
		for i := range cost {
			cost[i] = 1
		}
		p := newPieceCoster(cost, kch, grid, 0, wgmmaPieceChange, wgmmaOwnerFixup)
		bal, _ := pieceMax(p, grid, pieceRanges(cost, kch, grid, 0, wgmmaPieceChange, wgmmaOwnerFixup))
		eq, _ := pieceMax(p, grid, equalRanges(tiles*kch, grid))
		if g := eq / bal; g < c.min || g > c.max {
			t.Errorf("%v (%d tiles of %d chunks on %d blocks): equal ranges' longest block %.2f, balanced %.2f: %.3fx, want %.3f-%.3f",
				c.s, tiles, kch, grid, eq, bal, g, c.min, c.max)
		}
	}
}

// ranges=pieces on the dual GEMM: the rule, the define and the table after
// the flags as the GEMM's last argument on stream-K shapes, the same
// launch as without it where auto runs whole tiles.
func TestWgmmaDualRangesPlan(t *testing.T) {
	d, _ := LookupProblem("nvfp4_dual_gemm")
	if _, err := d.ResolveVariant("wgmma?schedule=tiles&ranges=pieces"); err == nil || !strings.Contains(err.Error(), "ranges") {
		t.Errorf("whole tiles with ranges=pieces: %v, want a refusal naming ranges", err)
	}
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	dt := "wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split"
	s4 := Shape{M: []int{512}, N: 3072, K: 7168}
	d0, pl0 := resolvePlan(t, d, dt, s4, lim)
	d1, pl1 := resolvePlan(t, d, dt+"&ranges=pieces", s4, lim)
	if d0["WG_RANGES"] != "0" || d1["WG_RANGES"] != "1" {
		t.Fatalf("defines: without %v, with %v", d0, d1)
	}
	g0, g1 := pl0.Launches[1], pl1.Launches[1]
	if len(g1.Args) != len(g0.Args)+1 {
		t.Fatalf("GEMM args: %d with ranges=pieces, %d without", len(g1.Args), len(g0.Args))
	}
	addr := func(Buffer, int) uint64 { return 1 }
	tb0, tb1 := pl0.TableBytes(addr), pl1.TableBytes(addr)
	off := g1.Args[len(g1.Args)-1]
	if off.Kind != ArgPtr || off.Buf != BufTable || off.Value != int64(len(tb0)) || string(tb1[:len(tb0)]) != string(tb0) {
		t.Fatalf("ranges at %+v, table %d bytes after %d unchanged ones", off, len(tb1), len(tb0))
	}
	le := binary.LittleEndian
	grid := int(g1.Grid[0])
	if len(tb1) != len(tb0)+4*(grid+2) || int(le.Uint32(tb1[off.Value:])) != grid {
		t.Fatalf("ranges table %d bytes for grid %d", len(tb1)-len(tb0), grid)
	}
	prev := -1
	for b := 0; b <= grid; b++ {
		x := int(le.Uint32(tb1[int(off.Value)+4+4*b:]))
		if x <= prev || b == 0 && x != 0 {
			t.Fatalf("range start %d of block %d after %d", x, b, prev)
		}
		prev = x
	}
	k := resolveFor(t, d, dt, s4, lim).Knobs
	if want := wgmmaTiles(d.Name, s4, k) * s4.K / 128; prev != want {
		t.Errorf("ranges end at chunk %d, want %d", prev, want)
	}
	// Bench2 runs whole tiles under auto: the same module and launch.
	s2 := Shape{M: []int{512}, N: 4096, K: 7168}
	d2, pl2 := resolvePlan(t, d, dt+"&ranges=pieces", s2, lim)
	_, pl2b := resolvePlan(t, d, dt, s2, lim)
	if d2["WG_RANGES"] != "0" || len(pl2.Launches[1].Args) != len(pl2b.Launches[1].Args) ||
		string(pl2.TableBytes(addr)) != string(pl2b.TableBytes(addr)) {
		t.Errorf("whole tiles with ranges=pieces: defines %v, %d args against %d", d2, len(pl2.Launches[1].Args), len(pl2b.Launches[1].Args))
	}
}
