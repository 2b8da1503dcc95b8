package kernels

// Cost-balanced stream-K ranges (ranges=cost, WG_RANGES): the group GEMM's
// stream-K part cuts its chunks into one contiguous range per block. With
// equal chunk counts a block whose range falls on narrow tail tiles
// (tail_width=fit64: 64-token wgmmas) finishes early and the launch waits
// for the blocks on full-width tiles: on an H100 the last block of group
// bench1 ended 16 us after the median (kernel-notes step 33). Here each
// block gets an equal share of the estimated cost instead, its whole tiles
// (hybrid) included.

// wgmmaChunkOverhead is a chunk's cost that does not scale with its wgmma
// width, in units of a full-width chunk's scaled part: the weight copies
// and decode, which a chunk pays whatever its token count. 2.125 makes a
// 64-token chunk 0.84 of a 128-token one: on an H100, group bench1's
// blocks whose 47 stream-K chunks were all 64 tokens wide ended their
// mainloop ~11 us before those whose chunks were all 128 wide, of ~103
// chunks at ~1.45 us (WG_TL=2, kernel-notes step 33). A first guess of
// 0.65 (0.43 here), fitted to the blocks' spread alone, overcorrected.
const wgmmaChunkOverhead = 2.125

// wgmmaChunkCost is the estimated cost of one K chunk of a tile computed at
// wgmma width w of a tile_m-wide tile, relative to a full-width chunk.
func wgmmaChunkCost(w, tileM int) float64 {
	return (wgmmaChunkOverhead + float64(w)/float64(tileM)) / (wgmmaChunkOverhead + 1)
}

// wgmmaHybridStart is the first tile of the stream-K part, as the kernel's
// wg_pieces computes it: 0 for stream-K over every tile; for hybrid the
// tiles past the whole waves, with one more wave where the last has fewer
// chunks than blocks (every block needs a chunk of the stream-K part).
func wgmmaHybridStart(tiles, kch, grid int, hybrid bool) int {
	if !hybrid {
		return 0
	}
	t0 := tiles / grid * grid
	if t0 < tiles && (tiles-t0)*kch < grid {
		t0 -= grid
	}
	return t0
}

// costRanges cuts the stream-K part into grid contiguous chunk ranges of
// about equal cost. cost[t] is tile t's cost per chunk (every tile of the
// launch, in table order); tiles [0, t0) run whole, tile t on block
// t % grid. It returns grid + 1 ascending chunk indices over the stream-K
// part (tiles [t0, len(cost)), kch chunks each): block b's range is
// [r[b], r[b + 1]), at least one chunk, r[grid] the part's chunk count.
// The share of block b is max(L - whole[b], one chunk) with the level L at
// which the shares add up to the part's cost (water-filling), so a block
// whose whole tiles cost more than the others' takes fewer chunks.
func costRanges(cost []float64, kch, grid, t0 int) []int {
	whole := make([]float64, grid)
	for t := 0; t < t0; t++ {
		whole[t%grid] += float64(kch) * cost[t]
	}
	n := (len(cost) - t0) * kch
	r := make([]int, grid+1)
	if n == 0 {
		return r // whole waves only: no stream-K part
	}
	chunk := func(x int) float64 { return cost[t0+x/kch] }
	var part float64
	for x := 0; x < n; x++ {
		part += chunk(x)
	}
	unit := part / float64(n) // a mean chunk: the least a block's share is
	share := func(L float64, b int) float64 { return max(L-whole[b], unit) }
	// The level: the shares grow with it, so bisect on their sum.
	lo, hi := 0.0, part
	for _, w := range whole {
		hi = max(hi, w+part)
	}
	sumAt := func(L float64) (t float64) {
		for b := range grid {
			t += share(L, b)
		}
		return t
	}
	for range 60 {
		if mid := (lo + hi) / 2; sumAt(mid) >= part {
			hi = mid
		} else {
			lo = mid
		}
	}
	level := hi
	// The bisection's last step, summed over the blocks, would drift the
	// cuts: scale the shares to add up to the part exactly.
	sum := sumAt(level)
	r[grid] = n
	x, acc, want := 0, 0.0, 0.0
	for b := range grid {
		r[b] = x
		want += share(level, b) * part / sum
		// Take chunks while the next one's midpoint is under the running
		// target; at least one, and leave one for each block after b.
		for x < n-(grid-1-b) && (x == r[b] || acc+chunk(x)/2 < want) {
			acc += chunk(x)
			x++
		}
	}
	return r
}
