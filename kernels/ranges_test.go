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
