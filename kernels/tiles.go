package kernels

import (
	"fmt"
	"math"
	"sort"
)

// The tile_m=auto / tile_n=auto rule of the baseline family: a cost model
// of the baseline kernel (gemm.cu) on one device, and the declared tile
// size it predicts fastest for a shape. Tile sizes are compile-time macros,
// so an auto variant stands for several modules (Variant.Candidates, which
// the engine compiles at Build) and picks one per shape at Plan time
// (Variant.Resolve). docs/KNOBS.md explains the model and its choices.
//
// The model. One block computes one tile; a block alone on an SM takes
//
//	K/256 x (btRowUS x rows + btMACUS x outputs)
//
// microseconds, rows being the operand rows it loads and decodes (token
// rows plus weight rows, twice the weight rows for the dual GEMM) and
// outputs the products it accumulates (tile_m x tile_n, twice for the dual
// GEMM). With swap_ab=true the token slices past M are skipped, so a tail
// tile counts only its live token rows (of its busiest warp row, rounded up
// to 8) in both terms. An SM running n blocks at once does btSMRate(n)
// lone-block units of work per unit of time; the blocks of a launch go to
// free slots in launch order (resident blocks per SM from the shared
// memory and an estimate of the registers); sequential and graph plans add
// up their launches, streams and grouped plans run every tile in one pool.
//
// Calibration (H100, 132 SMs, from docs/VARIANTS.md's paired medians of
// baseline and baseline?tile_m=64, sequential launches, stages=1): on
// benchmark shape 1 every launch is one wave of lone blocks, so 1807 us
// for 128x128 and 1289 us for 64x128 tiles, less btLaunchUS per launch, are
// 8 launches of one tile each over 28 K steps: 7.92 and 5.61 us per step.
// Two tile sizes give the two constants. btSMRate(2) = 1.25 fits shape 4's
// 64x128 launch of 192 tiles (60 SMs run two blocks). Everything else is an
// extrapolation: tile_n, the swap, several resident blocks beyond two.
const (
	// btRowUS: microseconds per operand row per 256 K elements, one block
	// alone on an SM (loads, waits and the register decode dominate: the
	// kernel is latency-bound at 4 warps).
	btRowUS = 0.02578
	// btMACUS: microseconds per output element per 256 K elements.
	btMACUS = 8.06e-5
	// btLaunchUS: the gap per launch of a sequential plan (fitted with
	// the two constants above; it does not change which tile wins).
	btLaunchUS = 4.0
	// btRegOverhead: registers per thread beyond the fp32 accumulators
	// (ptxas: 233 for 128x128, 155 for 64x128 group tiles).
	btRegOverhead = 100
	// btDualScale: the dual kernel's lone-block time over the formula's,
	// from its one calibration point (H100, dual benchmark shape 1, 64x128
	// tiles, 128 lone blocks: 317.6 us measured, 11.3 us per K step, against
	// 9.6 predicted from the group constants). A common factor: it sets the
	// dual's absolute times, not which tile wins.
	btDualScale = 1.18
)

// btSMRate is an SM's throughput with n blocks resident, in lone-block
// units: a second block adds a quarter (fitted), each further block is
// assumed to add as much (not measured).
func btSMRate(n int) float64 {
	if n <= 1 {
		return 1
	}
	return 1 + 0.25*float64(n-1)
}

// TileAuto is Knobs.TileM or Knobs.TileN for tile_m=auto or tile_n=auto.
const TileAuto = 0

// The baseline's declared concrete tile sizes, the candidates of auto.
var (
	baselineTileMs = []int{64, 128}
	baselineTileNs = []int{64, 128, 256}
)

// tileAuto reports whether either tile size is auto.
func (k Knobs) tileAuto() bool { return k.TileM == TileAuto || k.TileN == TileAuto }

// tileCandidates lists the concrete knob sets an auto setting stands for:
// every declared size in the auto places, the other knobs kept, and only
// those that pass the combination rules. Concrete knobs give themselves.
func tileCandidates(problem string, k Knobs) []Knobs {
	if !k.tileAuto() {
		return []Knobs{k}
	}
	ms, ns := []int{k.TileM}, []int{k.TileN}
	if k.TileM == TileAuto {
		ms = baselineTileMs
	}
	if k.TileN == TileAuto {
		ns = baselineTileNs
	}
	var out []Knobs
	for _, m := range ms {
		for _, n := range ns {
			c := k
			c.TileM, c.TileN = m, n
			if checkBaseline(problem, c) == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Candidates returns the concrete variants v stands for: for an auto
// variant (a baseline with tile_m=auto or tile_n=auto, wgmma with
// schedule=auto) one per candidate (the modules an engine must compile to
// run it on any shape), otherwise v.
func (v Variant) Candidates() []Variant {
	tr, ok := v.family().(autoResolver)
	if !ok || !tr.isAuto(v.Knobs) {
		return []Variant{v}
	}
	p, err := LookupProblem(v.Problem)
	if err != nil {
		return []Variant{v}
	}
	var out []Variant
	for _, k := range tr.candidates(v.Problem, v.Knobs) {
		out = append(out, p.withValidKnobs(v, k))
	}
	return out
}

// Resolve returns the concrete variant v runs as on shape s on a device
// with limits lim: for an auto variant the candidate its family picks
// (BaselineTile, wgmmaAutoStreamK), otherwise v itself.
func (v Variant) Resolve(s Shape, lim Limits) (Variant, error) {
	tr, ok := v.family().(autoResolver)
	if !ok || !tr.isAuto(v.Knobs) {
		return v, nil
	}
	p, err := LookupProblem(v.Problem)
	if err != nil {
		return Variant{}, err
	}
	if err := p.CheckShape(s); err != nil {
		return Variant{}, err
	}
	k, err := tr.resolve(v.Problem, s, v.Knobs, lim)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: %s: %w", v.Name, err)
	}
	return p.withValidKnobs(v, k), nil
}

// BaselineTile resolves the auto tile sizes of k for shape s: the
// candidate with the smallest BaselineCostUS (the first of equals, in
// tile_m then tile_n order). Without the device's SM count (lim.SMs = 0, a
// plan made without a device) it takes the family's default tile when
// that is a candidate, else the first candidate, so such plans are stable.
func BaselineTile(problem string, s Shape, k Knobs, lim Limits) (Knobs, error) {
	cands := tileCandidates(problem, k)
	if len(cands) == 0 {
		return Knobs{}, &KnobError{Knob: "tile_m,tile_n", Value: tileString(k.TileM) + "," + tileString(k.TileN),
			Reason: "no declared tile size fits with the other knobs"}
	}
	if !k.tileAuto() {
		return k, nil
	}
	if lim.SMs <= 0 {
		def, _ := defaultKnobs(problem, baselineFamily{})
		for _, c := range cands {
			if c.TileM == def.TileM && c.TileN == def.TileN {
				return c, nil
			}
		}
		return cands[0], nil
	}
	best, bestUS := cands[0], math.Inf(1)
	for _, c := range cands {
		if us := BaselineCostUS(problem, s, c, lim); us < bestUS {
			best, bestUS = c, us
		}
	}
	return best, nil
}

func tileString(n int) string {
	if n == TileAuto {
		return "auto"
	}
	return fmt.Sprint(n)
}

// baselineResident estimates the blocks of a baseline tile resident on one
// SM: shared memory (with the 1 KiB the driver reserves per block) against
// Hopper's 228 KiB, registers (accumulators plus btRegOverhead, allocated
// per warp in units of 256) against 64 K, and 16 blocks of 128 threads.
func baselineResident(problem string, k Knobs) int {
	n := 2048 / baselineThreads
	n = min(n, hopperSharedPerSM/(SharedBytes(problem, k)+sharedPerBlockRes))
	regs := min(255, k.TileM*k.TileN*accumulators(problem)/baselineThreads+btRegOverhead)
	perWarp := (regs*32 + 255) / 256 * 256
	n = min(n, 65536/(perWarp*baselineThreads/32))
	return max(1, n)
}

// baselineBlockUS is the model's lone-block time of one tile with rows
// token rows below M (rows <= TileM).
func baselineBlockUS(problem string, s Shape, k Knobs, rows int) float64 {
	tm := k.TileM
	if k.SwapAB {
		// The busiest warp row's live n8 slices, for both warp rows.
		half := k.TileM / 2
		tm = 2 * min(half, (rows+7)/8*8)
	}
	acc := accumulators(problem)
	steps := float64(s.K) / 256
	us := steps * (btRowUS*float64(tm+acc*k.TileN) + btMACUS*float64(acc*tm*k.TileN))
	if acc == 2 {
		us *= btDualScale
	}
	return us
}

// baselineLaunchBlocks lists one group's blocks in launch order (gemm.cu's
// grid: x over tile columns, y over tile rows) as lone-block times.
func baselineLaunchBlocks(problem string, s Shape, k Knobs, m int) []float64 {
	var out []float64
	for m0 := 0; m0 < m; m0 += k.TileM {
		us := baselineBlockUS(problem, s, k, min(k.TileM, m-m0))
		for n0 := 0; n0 < s.N; n0 += k.TileN {
			out = append(out, us)
		}
	}
	return out
}

// BaselineCostUS is the model's time of the baseline kernel with concrete
// tile knobs k on shape s on a device of lim.SMs SMs (132 when unknown).
func BaselineCostUS(problem string, s Shape, k Knobs, lim Limits) float64 {
	sms := lim.SMs
	if sms <= 0 {
		sms = 132
	}
	occ := baselineResident(problem, k)
	switch k.Launch {
	case "streams", "grouped":
		// Every group's tiles share the SMs: the grouped launch walks the
		// largest groups first, the streams start in group order.
		order := make([]int, len(s.M))
		for i := range order {
			order[i] = i
		}
		if k.Launch == "grouped" {
			sort.SliceStable(order, func(a, b int) bool { return s.M[order[a]] > s.M[order[b]] })
		}
		var blocks []float64
		for _, g := range order {
			blocks = append(blocks, baselineLaunchBlocks(problem, s, k, s.M[g])...)
		}
		return btLaunchUS + simulateLaunch(blocks, sms, occ)
	}
	us := 0.0
	for _, m := range s.M {
		us += btLaunchUS + simulateLaunch(baselineLaunchBlocks(problem, s, k, m), sms, occ)
	}
	return us
}

// simulateLaunch runs blocks (lone-block times, in launch order) on sms
// SMs of occ slots each: a block starts on the SM with a free slot that
// has the fewest blocks running (the first such SM), the blocks on an SM
// share its throughput btSMRate(n) equally, and the launch ends when the
// last block does.
func simulateLaunch(blocks []float64, sms, occ int) float64 {
	rem := make([][]float64, sms) // remaining lone-block work of each running block
	next := 0
	place := func() {
		for next < len(blocks) {
			best := -1
			for i := range rem {
				if len(rem[i]) < occ && (best < 0 || len(rem[i]) < len(rem[best])) {
					best = i
				}
			}
			if best < 0 {
				return
			}
			rem[best] = append(rem[best], blocks[next])
			next++
		}
	}
	place()
	now := 0.0
	for {
		// The next completion: on each SM every block progresses at
		// btSMRate(n)/n, so the shortest remaining block ends first.
		dt := math.Inf(1)
		for _, r := range rem {
			if len(r) == 0 {
				continue
			}
			rate := btSMRate(len(r)) / float64(len(r))
			for _, w := range r {
				dt = min(dt, w/rate)
			}
		}
		if math.IsInf(dt, 1) {
			return now
		}
		now += dt
		for i, r := range rem {
			if len(r) == 0 {
				continue
			}
			rate := btSMRate(len(r)) / float64(len(r))
			kept := r[:0]
			for _, w := range r {
				if w -= dt * rate; w > 1e-9 {
					kept = append(kept, w)
				}
			}
			rem[i] = kept
		}
		place()
	}
}
