package kernels

// The split_k=auto rule of the fused group GEMM: a cost model of the
// persistent kernel on one device, calibrated on the H100 measurements of
// dev/fastkern/NOTES.md and docs/VARIANTS.md (fused, 2026-11-22), and the
// partition count it predicts fastest. docs/KNOBS.md explains the rule.
//
// What the measurements say: the kernel is issue-bound on the register
// decode, with two blocks of 4 warps per SM sharing one SM's issue slots,
// so an SM's time is the work of all the tiles its blocks walk, not the
// longest tile. Bench shape 3 (2 x (N3072, K4096), 192 tiles of 256 x 32)
// puts two tiles on 60 SMs and one on 72: 88.5 us for 2 tiles x 32 chunks,
// 1.38 us per full-tile K chunk per SM. The same constant predicts the
// other three shapes within 3-10% (363 / 177 / 33 us against 332 / 171 /
// 36 measured) once tail tiles are weighted by their live n8 tiles.
const (
	// fgChunkUS: microseconds an SM needs per 128-wide K chunk of a full
	// tile (bench shape 3 above).
	fgChunkUS = 1.38
	// fgDecodeA: the work of a k16 step that does not depend on the token
	// rows (decoding the 4 m16 weight tiles: 16 fp16x2 registers at ~5
	// instructions), in units of one live n8 tile's work (2 decodes and 4
	// MMAs, ~14 instructions): 80 / 14.
	fgDecodeA = 5.7
	// fgItemChunks: the fixed cost of one work item (pipeline fill, tile
	// bookkeeping, the epilogue's stores), in chunks of a full tile.
	fgItemChunks = 0.5
	// fgReduceLaunchUS and fgReduceBps: the reduction launch's fixed cost
	// (launch gap and one short wave) and the rate it reads the partial sums
	// (just written, mostly still in the 50 MB L2) and writes C.
	fgReduceLaunchUS = 3.0
	fgReduceBps      = 3.0e12
	// fgAutoMinGain: auto splits only when the model predicts at least this
	// fraction of the unsplit time saved (the model is rough).
	fgAutoMinGain = 0.05
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
// with splits partitions on a device of lim.SMs SMs: the busiest SM's work
// (the launch's work items dealt to blocks round-robin, block b on SM
// b mod SMs, as the persistent grid walks them) plus, when split, the
// reduction launch.
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
	load := make([]float64, sms)
	for i, it := range items {
		kb, ke := FusedSplitRange(kch, it.ks, splits)
		load[(i%blocks)%sms] += weight(tiles[it.base])*float64(ke-kb) + fgItemChunks
	}
	busiest := 0.0
	for _, l := range load {
		busiest = max(busiest, l)
	}
	// The calibration tile (256 x 32) is 4 warp tiles: a tile of more or
	// fewer warp tiles costs proportionally more or less per chunk.
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
