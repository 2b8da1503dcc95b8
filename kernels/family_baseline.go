package kernels

import (
	"fmt"
	"strconv"
)

// The baseline family (gemm.cu): the seeds' baseline on Hopper, one output
// tile per block of 128 threads, raw FP4 staged by cp.async and decoded in
// registers, mma.sync m16n8k16, one launch per group or one grouped launch.
// Its tile sizes may be "auto" (tiles.go's cost model picks per shape).

func init() { registerFamily(baselineFamily{}) }

type baselineFamily struct{}

func (baselineFamily) Info() FamilyInfo { return FamilyInfo{Name: "baseline", Order: 10} }

func (baselineFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{
		Name: "baseline", Base: "baseline", Title: "Baseline: fused mma.sync, 1 stage", Problem: p.Name,
		Description: "The seeds' baseline on Hopper: one output tile per block of 128 threads, raw FP4 and scales staged in shared memory by cp.async, decoded in registers with the scale folded in to fp16, m16n8k16 fp16 MMA with fp32 accumulation, SIMT stores of C, one launch per group.",
		SourceFile:  "gemm.cu", MinArch: 80,
	}
	if p.Dual() {
		v.Description = "The seeds' baseline on Hopper for the dual GEMM: the A tile is shared by both products, two fp32 accumulators, silu(acc1)*acc2 in the epilogue; raw FP4 staged by cp.async and decoded in registers with scales folded in to fp16, m16n8k16 fp16 MMA. Default tile 64x128 because two 128x128 accumulators do not fit 128 threads' registers."
	}
	v.Knobs, _ = defaultKnobs(p.Name, baselineFamily{})
	return v, true
}

func (baselineFamily) KnobSpace(problem string) []KnobSpec { return KnobSpace(problem) }
func (baselineFamily) Fixed(string) Knobs                  { return Knobs{} }

// Check: an auto tile is valid when some declared size fits the other
// knobs; concrete tiles meet checkBaseline.
func (baselineFamily) Check(problem string, k Knobs) error {
	if k.tileAuto() {
		if len(tileCandidates(problem, k)) == 0 {
			return &KnobError{Knob: "tile_m,tile_n", Value: tileString(k.TileM) + "," + tileString(k.TileN),
				Reason: "no declared tile size fits with the other knobs (see the accumulator and shared-memory rules)"}
		}
		return nil
	}
	return checkBaseline(problem, k)
}

// MinArch: the TMA epilogue's bulk copies are sm_90.
func (baselineFamily) MinArch(_ string, k Knobs) int {
	if k.Epilogue == "tma" {
		return 90
	}
	return 80
}

func (baselineFamily) CheckDevice(v Variant, arch string) error { return checkArchAtLeast(v, arch) }

func (baselineFamily) isAuto(k Knobs) bool                        { return k.tileAuto() }
func (baselineFamily) candidates(problem string, k Knobs) []Knobs { return tileCandidates(problem, k) }
func (baselineFamily) resolve(problem string, s Shape, k Knobs, lim Limits) (Knobs, error) {
	return BaselineTile(problem, s, k, lim)
}

// Defines: gemm.cu's macros. An auto tile is no macro value: engines
// compile Candidates() instead ("auto" here names it in records and fails
// a direct compile).
func (baselineFamily) Defines(v Variant, d map[string]string) map[string]string {
	d["TILE_M"] = tileString(v.Knobs.TileM)
	d["TILE_N"] = tileString(v.Knobs.TileN)
	d["TILE_K"] = strconv.Itoa(v.Knobs.TileK)
	d["STAGES"] = strconv.Itoa(v.Knobs.Stages)
	d["THREADS"] = strconv.Itoa(baselineThreads)
	d["SWAP_AB"], d["EPI_TMA"] = "0", "0"
	if v.Knobs.SwapAB {
		d["SWAP_AB"] = "1"
	}
	if v.Knobs.Epilogue == "tma" {
		d["EPI_TMA"] = "1"
	}
	return d
}

func (baselineFamily) Entries(v Variant) []string {
	if isDual(v.Problem) {
		return []string{"gemm_dual"}
	}
	return []string{"gemm_group", "gemm_grouped"}
}

// Plan: the launch knob's per-group or grouped launches (perGroupPlan).
func (baselineFamily) Plan(v Variant, s Shape, lim Limits) (*Plan, error) {
	k := v.Knobs
	if k.Epilogue == "tma" {
		if a := archNumber(lim.Arch); a > 0 && a < 90 {
			return nil, &KnobError{Knob: "epilogue", Value: "tma",
				Reason: fmt.Sprintf("the bulk async copy (cp.async.bulk) needs sm_90 or newer; the device is %s (use epilogue=simt)", lim.Arch)}
		}
	}
	smem := SharedBytes(v.Problem, k)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block; the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	return perGroupPlan(v.Name, k.Launch, isDual(v.Problem), s, perGroup{
		Group: "gemm_group", Dual: "gemm_dual", Grouped: "gemm_grouped",
		Block: [3]uint32{baselineThreads, 1, 1}, TileM: k.TileM, TileN: k.TileN, SharedBytes: smem,
		Launches: KnobSpace(v.Problem)[6].Values,
	})
}

// Threads per block of the baseline family: 4 warps in a 2x2 layout.
const baselineThreads = 128

// KnobSpace is the declared knob space of a problem's baseline family, in
// canonical order (VariantKnobSpace(problem, "baseline")). The dual GEMM has one group, so it offers no per-group
// streams or grouped launch, and its default tile is 64x128: two 128x128
// fp32 accumulators over 128 threads would need 256 registers per thread
// for accumulators alone and spill.
func KnobSpace(problem string) []KnobSpec {
	dual := isDual(problem)
	tm := "128"
	launches := []string{"sequential", "streams", "graph", "grouped"}
	if dual {
		tm = "64"
		launches = []string{"sequential", "graph"}
	}
	return []KnobSpec{
		{Key: "tile_m", Values: []string{"64", "128", "auto"}, Default: tm, Doc: "output tile rows per block (M, token rows); auto = the size a per-shape cost model (docs/KNOBS.md) predicts fastest on the device, among those the other knobs allow"},
		{Key: "tile_n", Values: []string{"64", "128", "256", "auto"}, Default: "128", Doc: "output tile columns per block (N, weight rows); auto = as for tile_m"},
		{Key: "tile_k", Values: []string{"128", "256"}, Default: "256", Doc: "K elements per main-loop step (a short last step covers K % tile_k)"},
		{Key: "stages", Values: []string{"1", "2", "3", "4"}, Default: "1", Doc: "shared-memory ring of cp.async stages: loads of later K steps overlap the MMAs of this one"},
		{Key: "epilogue", Values: []string{"simt", "tma"}, Default: "simt", Doc: "how C leaves the block: simt = stores by the threads (straight from the accumulators, or with swap_ab=true 16-byte stores of the tile staged in shared memory); tma = the tile staged in shared memory, one bulk async copy per row (cp.async.bulk, sm_90 and CUDA 12 or newer)"},
		{Key: "warp_roles", Values: []string{"uniform"}, Default: "uniform", Doc: "uniform = every warp loads, decodes and issues MMAs"},
		{Key: "launch", Values: launches, Default: "sequential", Doc: "sequential = one launch per group on one stream; streams = one stream per group joined by events; graph = the per-group launches captured in one CUDA graph; grouped = one launch over a precomputed tile table, largest groups first"},
		{Key: "split_k", Values: []string{"1"}, Default: "1", Doc: "K partitions per output tile"},
		{Key: "swap_ab", Values: []string{"false", "true"}, Default: "false", Doc: "true = compute C^T = B A^T: the weight rows (N) fill the MMA's 16-row side and the token rows (M) its 8-column side, token slices past M are skipped; tile_m and tile_n keep their meaning (token rows, output columns per block) and C is staged in shared memory to leave row by row"},
	}
}

// Accumulators is how many fp32 accumulator tiles a block keeps (two for
// the dual GEMM).
func accumulators(problem string) int {
	if isDual(problem) {
		return 2
	}
	return 1
}

// SharedBytes is the dynamic shared memory the baseline family needs for
// knobs k: per stage, each operand row holds TileK/2 data bytes plus 16
// bytes of padding (rows land 4 banks apart, so a warp's fragment loads
// are conflict-free) and TileK/16 scale bytes.
//
// With swap_ab=true or epilogue=tma the C tile is staged in the same memory
// after the main loop (fp16 rows of 2 x TileN + 16 bytes: gemm.cu's
// EP_STRIDE), so the block needs the larger of the two.
func SharedBytes(problem string, k Knobs) int {
	row := k.TileK/2 + 16 + k.TileK/16
	bRows := k.TileN * accumulators(problem)
	pipe := k.Stages * (k.TileM + bRows) * row
	if baselineStaged(k) {
		return max(pipe, k.TileM*(2*k.TileN+16))
	}
	return pipe
}

// baselineStaged reports whether the baseline kernel stages C in shared
// memory (gemm.cu's STAGED).
func baselineStaged(k Knobs) bool { return k.SwapAB || k.Epilogue == "tma" }

// checkBaseline applies the baseline family's rules to concrete tile sizes.
func checkBaseline(problem string, k Knobs) error {
	// Each of the 4 warps owns (TileM/2)x(TileN/2) outputs per accumulator;
	// past 128 fp32 accumulator registers per thread the compiler spills.
	if acc := k.TileM * k.TileN * accumulators(problem) / baselineThreads; acc > 128 {
		return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN),
			Reason: fmt.Sprintf("needs %d fp32 accumulator registers per thread at %d threads; at most 128 fit without spilling", acc, baselineThreads)}
	}
	if sb := SharedBytes(problem, k); sb > hopperSharedOptin {
		return &KnobError{Knob: "stages", Value: strconv.Itoa(k.Stages),
			Reason: fmt.Sprintf("%d stages of a %dx%dx%d tile need %d bytes of shared memory; at most %d per block", k.Stages, k.TileM, k.TileN, k.TileK, sb, hopperSharedOptin)}
	}
	return nil
}
