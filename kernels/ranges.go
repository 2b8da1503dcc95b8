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

// Stream-K's costs per piece (ranges=pieces), in chunks of the tile: on an
// H100 (dual bench4's tall tiles under stream-K, WG_TL=2 marks, kernel-notes
// step 33) the blocks with two pieces ended their mainloop 4.9 us after
// those with one, at ~2.2 us per chunk, and an owner took 4.5-5.4 us from
// its mainloop's end to its stores against 2.4 us for a whole tile: its
// fixup waits for and adds the other pieces' partial sums.
const (
	wgmmaPieceChange = 2.25 // a block's second and later pieces, each
	wgmmaOwnerFixup  = 1.1  // a block whose last piece owns a cut tile
)

// pieceCoster prices a block's work for pieceRanges: its whole tiles, then
// stream-K chunks [x, y) of the part after them.
type pieceCoster struct {
	kch           int
	prefix        []float64 // prefix[x]: the part's chunks [0, x) summed
	whole         []float64 // each block's whole tiles (hybrid)
	wholeN        []int     // and how many
	change, fixup float64
}

// cost is block b's estimated time with stream-K chunks [x, y): whole
// tiles, chunks, a change per piece after its first, and an owner's fixup
// when its last piece starts a tile and stops short of the tile's end.
func (p *pieceCoster) cost(b, x, y int) float64 {
	c := p.whole[b] + p.prefix[y] - p.prefix[x]
	pieces := p.wholeN[b] + (y-1)/p.kch - x/p.kch + 1
	c += p.change * float64(pieces-1)
	last := (y - 1) / p.kch * p.kch // the last piece's tile starts here
	if x <= last && y < last+p.kch {
		c += p.fixup // it starts the tile and stops short: an owner
	}
	return c
}

// cut assigns the part's n chunks to the blocks in order, each taking as
// many as fit in budget (at least one, and one left for each block after
// it) into r; it reports whether every block fits.
func (p *pieceCoster) cut(n, grid int, budget float64, r []int) bool {
	x := 0
	for b := range grid {
		r[b] = x
		limit := n - (grid - 1 - b)
		if b == grid-1 {
			limit = n
		}
		y := x + 1
		for z := x + 2; z <= limit; z++ {
			if p.prefix[z]-p.prefix[x]+p.whole[b] > budget {
				break // the chunks alone are over: no later end fits
			}
			if p.cost(b, x, z) <= budget {
				y = z
			}
		}
		if b == grid-1 {
			y = n
		}
		if p.cost(b, x, y) > budget {
			return false
		}
		x = y
	}
	r[grid] = n
	return x == n
}

// pieceRanges cuts the stream-K part as costRanges does, but prices each
// block with its piece changes and its owner's fixup (wgmmaPieceChange,
// wgmmaOwnerFixup), which equal ranges and costRanges leave out: it finds
// the least budget that every block's cost fits in, cutting greedily in
// block order. cost, kch, grid and t0 are costRanges'.
func pieceRanges(cost []float64, kch, grid, t0 int, change, fixup float64) []int {
	p := newPieceCoster(cost, kch, grid, t0, change, fixup)
	n := len(p.prefix) - 1
	r := make([]int, grid+1)
	if n == 0 {
		return r
	}
	// Every block's cost fits in hi: all pieces, every fixup, all whole tiles.
	hi := p.prefix[n] + change*float64(n+t0) + fixup
	for b := range grid {
		hi += p.whole[b]
	}
	lo := 0.0
	for range 50 {
		mid := (lo + hi) / 2
		if p.cut(n, grid, mid, r) {
			hi = mid
		} else {
			lo = mid
		}
	}
	p.cut(n, grid, hi, r)
	return r
}

// newPieceCoster prices blocks of a launch as pieceRanges does: tiles
// [0, t0) whole (tile t on block t % grid), then the stream-K part.
func newPieceCoster(cost []float64, kch, grid, t0 int, change, fixup float64) *pieceCoster {
	p := &pieceCoster{kch: kch, whole: make([]float64, grid), wholeN: make([]int, grid), change: change, fixup: fixup}
	for t := 0; t < t0; t++ {
		p.whole[t%grid] += float64(kch) * cost[t]
		p.wholeN[t%grid]++
	}
	n := (len(cost) - t0) * kch
	p.prefix = make([]float64, n+1)
	for x := range n {
		p.prefix[x+1] = p.prefix[x] + cost[t0+x/kch]
	}
	return p
}
