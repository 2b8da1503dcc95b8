package kernels

import "math"

// The split_k=auto rule of the fused group GEMM: a cost model of the
// persistent kernel on one device and the partition count it predicts
// fastest. docs/KNOBS.md explains the rule and its history.
//
// The model (second version, fitted on the H100 device call of
// 2026-11-22 00:47-00:51 UTC, docs/KNOBS.md): work items are dealt to the
// persistent blocks round-robin (block b on SM b mod SMs); an SM runs its
// blocks concurrently, each of two sharing it progressing one chunk per
// fgChunkUS, a block alone only fgLoneRate times faster (the kernel is
// issue- and latency-bound on the register decode: docs/kernel-notes.md, IPC 2.3 of 4
// at 8 warps per SM, so 4 warps cannot use the slots the other block
// leaves). The first version summed each SM's work as if a lone block ran
// twice as fast; it predicted split 2 on benchmark shape 3 at 1.17x and
// measured 0.92x. The constants below are the best of a grid fit on the 8
// paired medians of that call (split 1, 2, 4 on the four benchmark shapes,
// rms error 5.5%), with fgChunkUS pinned to shape 3 unsplit (90.7 us for
// one 256 x 32 tile of 32 chunks per block).
const (
	// fgChunkUS: microseconds per 128-wide K chunk of a full 256 x 32 tile
	// for one of two blocks sharing an SM.
	fgChunkUS = 2.79
	// fgLoneRate: how much faster one block alone on an SM runs than each
	// of two sharing it (fitted).
	fgLoneRate = 1.2
	// fgDecodeA: the per-warp-row work of a tile that does not depend on
	// its live token rows, in units of one live n8 tile (fitted: tail tiles
	// cost nearly in proportion to their rows).
	fgDecodeA = 0.5
	// fgItemChunks: the fixed cost of one work item (pipeline fill, tile
	// bookkeeping, the epilogue's stores), in chunks of a full tile.
	fgItemChunks = 0.5
	// fgReduceLaunchUS and fgReduceBps: the reduction launch's fixed cost
	// (launch gap and one short wave) and the rate at which the partial
	// sums are written, read back and C written (fitted).
	fgReduceLaunchUS = 3.0
	fgReduceBps      = 2.5e12
	// fgAutoMinGain: auto splits only when the model predicts at least this
	// fraction of the unsplit time saved.
	fgAutoMinGain = 0.03
)

// splitChoices are the partition counts split_k=auto picks from.
var splitChoices = []int{1, 2, 4}

// FusedSplitK is the K partitions per output tile of the fused group
// kernel for shape s: k.SplitK itself, or for split_k=auto the count with
// the smallest FusedSplitCostUS. Auto without the device's SM count (a
// plan made without a device) does not split.
func FusedSplitK(s Shape, k Knobs, lim Limits) int {
	if k.SplitK != SplitKAuto {
		return k.SplitK
	}
	if lim.SMs <= 0 {
		return 1
	}
	best, bestUS := 1, FusedSplitCostUS(s, k, lim, 1)
	limit := bestUS * (1 - fgAutoMinGain)
	for _, n := range splitChoices[1:] {
		// A partition shorter than the pipeline never fills it.
		if s.K/128/n < k.Stages {
			continue
		}
		if us := FusedSplitCostUS(s, k, lim, n); us < limit && us < bestUS {
			best, bestUS = n, us
		}
	}
	return best
}

// FusedSplitCostUS is the model's time of the fused group kernel on shape s
// with splits partitions on a device of lim.SMs SMs: the last SM to finish
// (smTime over the blocks it holds, items dealt round-robin as the
// persistent grid walks them) plus, when split, the reduction launch.
func FusedSplitCostUS(s Shape, k Knobs, lim Limits, splits int) float64 {
	sms := max(lim.SMs, 1)
	tiles := FusedTiles(s, k)
	kch := s.K / 128
	_, warpsM := FusedWarps("nvfp4_group_gemm", k)
	full := float64(warpsM) * (fgDecodeA + float64(fusedWarpM/8))
	weight := func(t FusedTile) float64 {
		rows := min(k.TileM, s.M[t.Group]-t.M0)
		w := 0.0
		for wm := 0; wm < warpsM; wm++ {
			if live := min(max((rows-wm*fusedWarpM+7)/8, 0), fusedWarpM/8); live > 0 {
				w += fgDecodeA + float64(live)
			}
		}
		return w / full
	}
	items := fusedItems(tiles, splits)
	blocks := len(items)
	if k.Grid == "persistent" {
		blocks = min(blocks, sms*max(k.BlocksPerSM, 1))
	}
	// Each block's queue of work (in full-tile chunks), items dealt
	// round-robin; block b runs on SM b mod SMs.
	queues := make([][]float64, blocks)
	for i, it := range items {
		kb, ke := FusedSplitRange(kch, it.ks, splits)
		queues[i%blocks] = append(queues[i%blocks], weight(tiles[it.base])*float64(ke-kb)+fgItemChunks)
	}
	busiest := 0.0
	for sm := 0; sm < min(sms, blocks); sm++ {
		var qs [][]float64
		for b := sm; b < blocks; b += sms {
			qs = append(qs, queues[b])
		}
		busiest = max(busiest, smTime(qs))
	}
	// fgChunkUS is per chunk with two blocks sharing an SM; the calibration
	// tile (256 x 32) is 4 warp tiles: other tiles cost proportionally.
	us := busiest * fgChunkUS * float64(FusedThreads("nvfp4_group_gemm", k)) / 128
	if splits > 1 {
		rows := 0
		for _, m := range s.M {
			rows += m
		}
		bytes := float64(FusedWorkspaceBytes(s, k, splits)) + float64(rows)*float64(s.N)*2
		us += fgReduceLaunchUS + bytes/fgReduceBps*1e6
	}
	return us
}

// smTime simulates one SM running the blocks whose work queues are qs, all
// started at once: with n blocks active each progresses at
// fgSMRate(n) / n chunks per time unit (a unit is one chunk at two blocks
// per SM), a block takes its next item when one ends, and the SM is done
// when every queue is empty.
func smTime(qs [][]float64) float64 {
	rem := make([]float64, len(qs))
	next := make([]int, len(qs))
	for b := range qs {
		if len(qs[b]) > 0 {
			rem[b], next[b] = qs[b][0], 1
		}
	}
	now := 0.0
	for {
		active := 0
		for _, r := range rem {
			if r > 0 {
				active++
			}
		}
		if active == 0 {
			return now
		}
		rate := fgSMRate(active) / float64(active)
		dt := math.Inf(1)
		for _, r := range rem {
			if r > 0 {
				dt = min(dt, r/rate)
			}
		}
		now += dt
		for b, r := range rem {
			if r <= 0 {
				continue
			}
			if rem[b] = r - dt*rate; rem[b] <= 1e-9 {
				rem[b] = 0
				if next[b] < len(qs[b]) {
					rem[b], next[b] = qs[b][next[b]], next[b]+1
				}
			}
		}
	}
}

// fgSMRate is an SM's throughput with n blocks resident, in chunks per
// time unit: 2 at two blocks (the calibration point). One block of 4 warps
// cannot hide the decode chains' latency (docs/kernel-notes.md: IPC 2.3 of 4 even at 8
// warps), so it runs only fgLoneRate, not 2, times as fast as each of two.
func fgSMRate(n int) float64 {
	switch {
	case n <= 1:
		return fgLoneRate
	case n == 2:
		return 2
	}
	return 2 + 0.25*float64(n-2)
}
