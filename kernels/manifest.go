package kernels

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Knobs are the declared, implemented tuning choices of a kernel family.
// Only values that compile and run are declared (see VariantKnobSpace).
// A family uses the fields its knob space declares; the others keep the
// family's fixed values (e.g. the fused kernels always swap A and B).
type Knobs struct {
	TileM, TileN, TileK, Stages int
	Epilogue                    string // "simt" (stores by the threads) | "tma" (bulk async copies, sm_90+; fused group GEMM and baseline)
	WarpRoles                   string // "uniform" (every warp loads and computes) | "producer_consumer" (wgmma family)
	Launch                      string // "sequential"|"streams"|"graph"|"grouped"
	SplitK                      int    // 1
	SwapAB                      bool   // baseline: the swap_ab knob (default false); fused: always true
	// Fused family only.
	Layout      string // "wide" (16-byte shared loads per row) | "half" (8-byte loads, 80-byte rows, fewer registers)
	BlocksPerSM int    // __launch_bounds__ minimum resident blocks, and the persistent grid's blocks per SM
	Grid        string // "persistent" (min(tiles, SMs x resident blocks), blocks walk the tile table) | "tiles" (one block per tile)
	// wgmma family only: "full" (every tile at wgmma width tile_m) | "fit"
	// (tail tiles at their live token rows rounded up to 32).
	TailWidth string
	// Test-only fault family (fault.cu): "illegal_address" | "hang".
	Mode string
}

// KnobSpec declares one knob: its key in a variant spec, the allowed values,
// the default, and what it changes.
type KnobSpec struct {
	Key     string
	Values  []string
	Default string
	Doc     string
}

// KnobError says which knob (or knob combination) a spec got wrong and what
// is allowed.
type KnobError struct {
	Knob    string
	Value   string
	Allowed []string // empty for combination rules
	Reason  string
}

func (e *KnobError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("knob %s=%s: %s", e.Knob, e.Value, e.Reason)
	}
	if e.Value == "" {
		return fmt.Sprintf("knob %s: no value given (allowed: %s)", e.Knob, strings.Join(e.Allowed, ", "))
	}
	return fmt.Sprintf("knob %s: value %q not allowed (allowed: %s)", e.Knob, e.Value, strings.Join(e.Allowed, ", "))
}

// Hopper's opt-in shared memory per block (227 KiB); plans check the actual
// device limit too.
const hopperSharedOptin = 232448

// Threads per block of the baseline family: 4 warps in a 2x2 layout.
const baselineThreads = 128

// KnobSpace is the declared knob space of a problem's baseline family, in
// canonical order (VariantKnobSpace(problem, "baseline")). The dual GEMM has one group, so it offers no per-group
// streams or grouped launch, and its default tile is 64x128: two 128x128
// fp32 accumulators over 128 threads would need 256 registers per thread
// for accumulators alone and spill.
func KnobSpace(problem string) []KnobSpec {
	dual := problem == "nvfp4_dual_gemm"
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

// fusedKnobSpace is the declared knob space of the fused family
// (fast_group_gemm.cu, fast_dual_gemm.cu). tile_n is output columns per
// tile in both problems: the group kernel puts tile_n weight rows in a CTA
// tile, the dual kernel tile_n rows of B1 and the same tile_n rows of B2.
// Warp tiles are fixed at 64 weight rows x 32 token rows (the measured
// best; wider warp tiles spilled, dev/fastkern/NOTES.md), so the tile sizes
// set the warp grid. Defaults are the fastest configurations measured on
// H100 with the nvcc harness.
func fusedKnobSpace(problem string) []KnobSpec {
	if problem == "nvfp4_dual_gemm" {
		return []KnobSpec{
			{Key: "tile_n", Values: []string{"64", "128"}, Default: "64", Doc: "output columns per block: the block holds tile_n rows of B1 and the same rows of B2, so one A decode feeds both products"},
			{Key: "tile_m", Values: []string{"32", "64"}, Default: "64", Doc: "token rows (M) per block"},
			{Key: "stages", Values: []string{"2", "3", "4"}, Default: "3", Doc: "cp.async pipeline depth over 128-wide K chunks"},
			{Key: "layout", Values: []string{"wide", "half"}, Default: "half", Doc: "wide = each thread loads 16 bytes per row per K chunk; half = 8 bytes per 64-wide half (80-byte shared rows): fewer registers, more resident blocks"},
			{Key: "blocks_per_sm", Values: []string{"1", "2", "3"}, Default: "3", Doc: "minimum resident blocks per SM the compiler must allow (__launch_bounds__), and the persistent grid's blocks per SM"},
			{Key: "grid", Values: []string{"tiles", "persistent"}, Default: "tiles", Doc: "tiles = one block per output tile (the hardware scheduler balances the tail); persistent = min(tiles, SMs x resident blocks) blocks walking the tiles"},
		}
	}
	return []KnobSpec{
		{Key: "tile_n", Values: []string{"128", "256"}, Default: "256", Doc: "output columns (weight rows of B) per block: A and B are swapped so N fills the MMA's 16-row side"},
		{Key: "tile_m", Values: []string{"32", "64"}, Default: "32", Doc: "token rows (M) per block"},
		{Key: "stages", Values: []string{"2", "3", "4"}, Default: "4", Doc: "cp.async pipeline depth over 128-wide K chunks"},
		{Key: "layout", Values: []string{"wide", "half"}, Default: "wide", Doc: "wide = each thread loads 16 bytes per row per K chunk; half = 8 bytes per 64-wide half (80-byte shared rows): fewer registers, more resident blocks"},
		{Key: "blocks_per_sm", Values: []string{"1", "2", "3"}, Default: "2", Doc: "minimum resident blocks per SM the compiler must allow (__launch_bounds__), and the persistent grid's blocks per SM"},
		{Key: "grid", Values: []string{"persistent", "tiles"}, Default: "persistent", Doc: "persistent = min(tiles, SMs x resident blocks) blocks walking one tile table over all groups (largest groups first, full tiles before tails); tiles = one block per tile"},
		{Key: "split_k", Values: []string{"1", "2", "4", "auto"}, Default: "1", Doc: "K partitions per output tile: each writes fp32 partial sums to a workspace, a second launch adds them in a fixed order and writes C; auto = the partition count a per-shape cost model (docs/KNOBS.md) predicts fastest for the device's SM count"},
		{Key: "epilogue", Values: []string{"simt", "tma"}, Default: "simt", Doc: "how the staged C tile leaves shared memory: simt = 16-byte stores by every thread; tma = one bulk async copy per row (cp.async.bulk, sm_90 and CUDA 12 or newer)"},
	}
}

// VariantKnobSpace is the declared knob space of a variant family ("baseline",
// "fused", or the test-only "fault"); the reference takes no knobs (nil), as
// does an unknown base.
func VariantKnobSpace(problem, base string) []KnobSpec {
	switch base {
	case "baseline":
		return KnobSpace(problem)
	case "fused":
		return fusedKnobSpace(problem)
	case "wgmma":
		return wgmmaKnobSpace(problem)
	case "fault":
		return faultKnobSpace
	case "cheat":
		return cheatKnobSpace
	}
	return nil
}

// TestKernelsEnv names the environment variable that makes the test-only
// "fault" variant resolvable. The server validates a run's variant and the
// bench child resolves it again, both in processes that inherit the
// environment, so setting it on the server is enough for a test and leaving
// it unset keeps the kernels unreachable in normal use.
const TestKernelsEnv = "PITCHTANK_TEST_KERNELS"

// TestKernelsEnabled reports whether TestKernelsEnv is "1" in this process.
func TestKernelsEnabled() bool { return os.Getenv(TestKernelsEnv) == "1" }

// faultKnobSpace is the test-only fault family's one knob (fault.cu).
var faultKnobSpace = []KnobSpec{
	{Key: "mode", Values: []string{"illegal_address", "hang"}, Default: "illegal_address",
		Doc: "illegal_address = store through C + 1 TiB (CUDA_ERROR_ILLEGAL_ADDRESS); hang = spin on a volatile global nothing writes (never ends)"},
}

// CheatModes are the test-only cheat family's modes (cheat.cu), in the
// order of its CHEAT_MODE numbers.
var CheatModes = []string{"replay", "sentinel", "keyed_content", "keyed_address", "detached", "alternate"}

// cheatKnobSpace is the test-only cheat family's one knob (cheat.cu).
var cheatKnobSpace = []KnobSpec{
	{Key: "mode", Values: CheatModes, Default: "replay",
		Doc: "replay = compute once, then leave C as it is; sentinel = compute only when C[0] is NaN (the old poison); keyed_content = replay a cached C while a few input bytes are unchanged; keyed_address = replay a cached C while C and A keep their addresses; detached = compute on a side stream the timer never waits for; alternate = compute every other execution"},
}

// cheatVariant is the test-only variant that cheats the timer (cheat.cu).
// Like faultVariant it is reachable only through ResolveVariant with
// TestKernelsEnabled.
func (p *Problem) cheatVariant() Variant {
	v := Variant{
		Name: "cheat", Base: "cheat", Title: "TEST ONLY: a kernel that cheats the timer", Problem: p.Name,
		Description: "cheat.cu: correct when it believes it is checked, skips or replays its work otherwise (see the mode knob). For the tests that show the bench catches and names every cheat; resolvable only with " + TestKernelsEnv + "=1.",
		SourceFile:  "cheat.cu", MinArch: 80,
	}
	v.Knobs, _ = defaultKnobs(p.Name, "cheat")
	return v
}

// faultVariant is the test-only variant that fails on purpose. It is not in
// Variants(), so no list, form or compile enumeration offers it; only
// ResolveVariant returns it, and only when TestKernelsEnabled.
func (p *Problem) faultVariant() Variant {
	v := Variant{
		Name: "fault", Base: "fault", Title: "TEST ONLY: a kernel that faults or hangs", Problem: p.Name,
		Description: "fault.cu: mode=illegal_address stores through a wild pointer so the launch ends with CUDA_ERROR_ILLEGAL_ADDRESS; mode=hang spins forever. For the end-to-end test of run failures; resolvable only with " + TestKernelsEnv + "=1.",
		SourceFile:  "fault.cu", MinArch: 80,
	}
	v.Knobs, _ = defaultKnobs(p.Name, "fault")
	return v
}

// Variant is one kernel variant of a problem with its knob values.
type Variant struct {
	// Name is the canonical spec: the base name, then the knobs that differ
	// from the defaults in KnobSpace order, e.g. "baseline?tile_m=64&stages=3".
	Name        string
	Title       string
	Problem     string
	Description string
	SourceFile  string // under kernels/cuda
	Knobs       Knobs
	MinArch     int // 80 = any sm_80+, 90 = needs sm_90a features, 100 = sm_100a
	Reference   bool
	// Base is the variant's name without knob overrides.
	Base string
}

//go:embed cuda/*.cu
var cudaFiles embed.FS

func (p *Problem) dual() bool { return p.Kind == DualGEMM }

// Variants lists the problem's variants with default knobs.
func (p *Problem) Variants() []Variant {
	ref := Variant{
		Name: "reference", Base: "reference", Title: "GPU reference", Problem: p.Name,
		Description: "One thread per output element: decodes each FP4 element and e4m3 scale from the bit definition, accumulates in double, writes double. Slow and obviously correct; checks the CPU reference and every fast variant.",
		SourceFile:  "reference.cu", MinArch: 80, Reference: true,
	}
	base := Variant{
		Name: "baseline", Base: "baseline", Title: "Baseline: fused mma.sync, 1 stage", Problem: p.Name,
		Description: "The seeds' baseline on Hopper: one output tile per block of 128 threads, raw FP4 and scales staged in shared memory by cp.async, decoded in registers with the scale folded in to fp16, m16n8k16 fp16 MMA with fp32 accumulation, SIMT stores of C, one launch per group.",
		SourceFile:  "gemm.cu", MinArch: 80,
	}
	if p.dual() {
		base.Description = "The seeds' baseline on Hopper for the dual GEMM: the A tile is shared by both products, two fp32 accumulators, silu(acc1)*acc2 in the epilogue; raw FP4 staged by cp.async and decoded in registers with scales folded in to fp16, m16n8k16 fp16 MMA. Default tile 64x128 because two 128x128 accumulators do not fit 128 threads' registers."
	}
	base.Knobs, _ = defaultKnobs(p.Name, "baseline")
	fused := Variant{
		Name: "fused", Base: "fused", Title: "Fused: one persistent launch, swapped A/B, 4-stage cp.async", Problem: p.Name,
		Description: "fast_group_gemm.cu: one persistent launch over a host-built tile table covering all groups (largest groups first, full tiles before tails), A and B swapped so the weight rows (N) fill the MMA's 16-row side and small token groups waste little, a multi-stage cp.async ring of raw FP4 and scales, branch-free register decode with the scale folded in by one fp16 multiply, mma.sync m16n8k16, output staged in shared memory for 16-byte stores.",
		SourceFile:  "fast_group_gemm.cu", MinArch: 80,
	}
	if p.dual() {
		fused.Title = "Fused: A tile shared by B1 and B2, SiLU gate in the epilogue"
		fused.Description = "fast_dual_gemm.cu: each block holds tile_n rows of B1 and the same rows of B2 next to one A tile, so the token tile is loaded and decoded once for both products; two fp32 accumulators per output, silu(acc1)*acc2 in registers and one fp16 rounding; swapped A/B, multi-stage cp.async, register decode with the scale folded in, mma.sync m16n8k16."
		fused.SourceFile = "fast_dual_gemm.cu"
	}
	fused.Knobs, _ = defaultKnobs(p.Name, "fused")
	vs := []Variant{ref, base, fused}
	if !p.dual() {
		vs = append(vs, wgmmaVariant(p.Name))
	}
	return vs
}

func defaultKnobs(problem, base string) (Knobs, error) {
	vals := map[string]string{}
	for _, ks := range VariantKnobSpace(problem, base) {
		vals[ks.Key] = ks.Default
	}
	return knobsFrom(problem, base, vals)
}

// knobsFrom builds the knobs of family base from string values; keys the
// family does not declare get the family's fixed values.
func knobsFrom(problem, base string, vals map[string]string) (Knobs, error) {
	var k Knobs
	var err error
	atoi := func(key string, fixed int) int {
		v, ok := vals[key]
		if err != nil || !ok {
			return fixed
		}
		var n int
		n, err = strconv.Atoi(v)
		return n
	}
	str := func(key, fixed string) string {
		if v, ok := vals[key]; ok {
			return v
		}
		return fixed
	}
	if base == "fused" {
		// Fixed by the kernel: 128-wide K chunks, SIMT epilogue through
		// shared memory, every warp loads and computes, one launch (over
		// all groups: "grouped"; the dual GEMM's one group: "sequential"),
		// swapped.
		k.TileK, k.Epilogue, k.WarpRoles, k.Launch, k.SplitK, k.SwapAB = 128, "simt", "uniform", "grouped", 1, true
		if problem == "nvfp4_dual_gemm" {
			k.Launch = "sequential"
		}
	}
	if base == "wgmma" {
		// Fixed by the kernel (wg_group_gemm.cu): 128-wide K chunks, swapped,
		// one persistent grouped launch, one block per SM.
		k.TileK, k.Epilogue, k.WarpRoles, k.Launch, k.SplitK, k.SwapAB = 128, "simt", "producer_consumer", "grouped", 1, true
		k.BlocksPerSM, k.Grid = 1, "persistent"
	}
	if base == "fault" || base == "cheat" {
		// One launch per group on the caller's stream (faultPlan,
		// cheatPlan).
		k.Launch = "sequential"
	}
	if vals["tile_m"] == "auto" {
		k.TileM = TileAuto
	} else {
		k.TileM = atoi("tile_m", k.TileM)
	}
	if vals["tile_n"] == "auto" {
		k.TileN = TileAuto
	} else {
		k.TileN = atoi("tile_n", k.TileN)
	}
	k.TileK = atoi("tile_k", k.TileK)
	k.Stages = atoi("stages", k.Stages)
	if vals["split_k"] == "auto" {
		k.SplitK = SplitKAuto
	} else {
		k.SplitK = atoi("split_k", k.SplitK)
	}
	k.BlocksPerSM = atoi("blocks_per_sm", k.BlocksPerSM)
	k.Epilogue = str("epilogue", k.Epilogue)
	k.WarpRoles = str("warp_roles", k.WarpRoles)
	k.Launch = str("launch", k.Launch)
	k.Layout = str("layout", k.Layout)
	k.Grid = str("grid", k.Grid)
	k.Mode = str("mode", k.Mode)
	k.TailWidth = str("tail_width", k.TailWidth)
	if v, ok := vals["swap_ab"]; ok {
		k.SwapAB = v == "true"
	}
	return k, err
}

// SplitKAuto is Knobs.SplitK for split_k=auto: the plan picks the partition
// count per shape (FusedSplitK).
const SplitKAuto = 0

func splitKString(n int) string {
	if n == SplitKAuto {
		return "auto"
	}
	return strconv.Itoa(n)
}

// knobValues renders knobs in KnobSpace's string form.
func (k Knobs) values() map[string]string {
	return map[string]string{
		"tile_m": tileString(k.TileM), "tile_n": tileString(k.TileN), "tile_k": strconv.Itoa(k.TileK),
		"stages": strconv.Itoa(k.Stages), "epilogue": k.Epilogue, "warp_roles": k.WarpRoles,
		"launch": k.Launch, "split_k": splitKString(k.SplitK), "swap_ab": strconv.FormatBool(k.SwapAB),
		"layout": k.Layout, "blocks_per_sm": strconv.Itoa(k.BlocksPerSM), "grid": k.Grid,
		"mode": k.Mode, "tail_width": k.TailWidth,
	}
}

// Accumulators is how many fp32 accumulator tiles a block keeps (two for
// the dual GEMM).
func accumulators(problem string) int {
	if problem == "nvfp4_dual_gemm" {
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

// checkCombination applies the rules that single values cannot express,
// for the family v.Base.
func checkCombination(problem, base string, k Knobs) error {
	switch base {
	case "fused":
		return checkFused(problem, k)
	case "wgmma":
		return checkWgmma(problem, k)
	case "fault", "cheat":
		return nil // one knob; every declared value is valid
	}
	if k.tileAuto() {
		// auto is valid when some declared size fits the other knobs.
		if len(tileCandidates(problem, k)) == 0 {
			return &KnobError{Knob: "tile_m,tile_n", Value: tileString(k.TileM) + "," + tileString(k.TileN),
				Reason: "no declared tile size fits with the other knobs (see the accumulator and shared-memory rules)"}
		}
		return nil
	}
	return checkBaseline(problem, k)
}

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

// Hopper's shared memory per SM (228 KiB); the driver reserves 1 KiB per
// resident block.
const (
	hopperSharedPerSM = 233472
	sharedPerBlockRes = 1024
)

// The fused kernels' warp tile: 64 weight rows x 32 token rows.
const (
	fusedWarpN = 64
	fusedWarpM = 32
)

// FusedWarps is the fused kernel's warp grid for knobs k: warps along the
// weight rows (WARPS_N) and along the token rows (WARPS_M).
func FusedWarps(problem string, k Knobs) (warpsN, warpsM int) {
	rows := k.TileN // weight rows per block
	if problem == "nvfp4_dual_gemm" {
		rows = 2 * k.TileN // B1 and B2
	}
	return rows / fusedWarpN, k.TileM / fusedWarpM
}

// FusedThreads is the fused kernel's block size.
func FusedThreads(problem string, k Knobs) int {
	wn, wm := FusedWarps(problem, k)
	return 32 * wn * wm
}

// FusedSharedBytes is the fused kernel's dynamic shared memory (its
// FG_SMEM_BYTES): the cp.async ring (64 or 80 data bytes + 8 scale bytes per
// weight and token row per stage) or the epilogue's staging rows, the larger.
func FusedSharedBytes(problem string, k Knobs) int {
	wn, wm := FusedWarps(problem, k)
	tileN, tileM := wn*fusedWarpN, wm*fusedWarpM
	rowb := 64
	if k.Layout == "half" {
		rowb = 80
	}
	pipe := k.Stages * (tileN + tileM) * (rowb + 8)
	ep := tileM * (2*tileN + 16)
	if problem == "nvfp4_dual_gemm" {
		ep = tileM * (tileN + 16)
	}
	return max(pipe, ep)
}

// checkFused keeps the fused family to combinations that run as declared:
// blocks_per_sm resident blocks must fit the register file with at least
// 168 registers per thread (below that the decode spills: NOTES.md h3, h4)
// and the shared memory of an SM.
func checkFused(problem string, k Knobs) error {
	threads := FusedThreads(problem, k)
	if threads < 32 || k.TileN%32 != 0 || k.TileM%fusedWarpM != 0 {
		return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN), Reason: "the fused tile must hold whole 64x32 warp tiles"}
	}
	if regs := 65536 / (k.BlocksPerSM * threads); regs < 168 {
		return &KnobError{Knob: "blocks_per_sm", Value: strconv.Itoa(k.BlocksPerSM),
			Reason: fmt.Sprintf("%d blocks of %d threads leave %d registers per thread; the fused decode needs 168 or more (fewer spill)", k.BlocksPerSM, threads, regs)}
	}
	sb := FusedSharedBytes(problem, k)
	if sb > hopperSharedOptin {
		return &KnobError{Knob: "stages", Value: strconv.Itoa(k.Stages),
			Reason: fmt.Sprintf("%d stages of a %dx%d tile need %d bytes of shared memory; at most %d per block", k.Stages, k.TileN, k.TileM, sb, hopperSharedOptin)}
	}
	if need := k.BlocksPerSM * (sb + sharedPerBlockRes); need > hopperSharedPerSM {
		return &KnobError{Knob: "blocks_per_sm", Value: strconv.Itoa(k.BlocksPerSM),
			Reason: fmt.Sprintf("%d blocks of %d bytes of shared memory need %d bytes per SM; an SM has %d", k.BlocksPerSM, sb, need, hopperSharedPerSM)}
	}
	return nil
}

// ResolveVariant parses a spec such as "baseline" or
// "baseline?stages=3&tile_m=64": the overrides are checked against
// KnobSpace, and an unknown knob or value returns a *KnobError naming the
// knob and the allowed values. The reference variant takes no knobs.
func (p *Problem) ResolveVariant(spec string) (Variant, error) {
	base, query, hasQuery := strings.Cut(strings.TrimSpace(spec), "?")
	var v Variant
	var names []string
	found := false
	for _, c := range p.Variants() {
		names = append(names, c.Name)
		if c.Name == base {
			v, found = c, true
		}
	}
	if !found && base == "fault" && TestKernelsEnabled() {
		v, found = p.faultVariant(), true
	}
	if !found && base == "cheat" && TestKernelsEnabled() {
		v, found = p.cheatVariant(), true
	}
	if !found {
		return Variant{}, fmt.Errorf("kernels: unknown variant %q for %s (known: %s)", base, p.Name, strings.Join(names, ", "))
	}
	if !hasQuery || query == "" {
		return v, nil
	}
	if v.Reference {
		return Variant{}, fmt.Errorf("kernels: variant %q takes no knobs (got %q)", base, query)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: parse knobs %q: %w", query, err)
	}
	space := VariantKnobSpace(p.Name, v.Base)
	vals := v.Knobs.values()
	for key, vs := range q {
		i := slices.IndexFunc(space, func(ks KnobSpec) bool { return ks.Key == key })
		if i < 0 {
			keys := make([]string, len(space))
			for j, ks := range space {
				keys[j] = ks.Key
			}
			return Variant{}, &KnobError{Knob: key, Value: strings.Join(vs, ","), Reason: "unknown knob for " + v.Base + " (known: " + strings.Join(keys, ", ") + ")"}
		}
		if len(vs) != 1 || !slices.Contains(space[i].Values, vs[0]) {
			return Variant{}, &KnobError{Knob: key, Value: strings.Join(vs, ","), Allowed: space[i].Values}
		}
		vals[key] = vs[0]
	}
	k, err := knobsFrom(p.Name, v.Base, vals)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: knobs %q: %w", query, err)
	}
	if err := checkCombination(p.Name, v.Base, k); err != nil {
		return Variant{}, err
	}
	return p.withValidKnobs(v, k), nil
}

// withValidKnobs sets checked knobs k on v: the canonical name, and the
// architecture the knobs need (the TMA epilogue's bulk copies are sm_90).
func (p *Problem) withValidKnobs(v Variant, k Knobs) Variant {
	v.Knobs = k
	v.Name = p.canonicalName(v.Base, k)
	if (v.Base == "fused" || v.Base == "baseline") && k.Epilogue == "tma" {
		v.MinArch = max(v.MinArch, 90)
	}
	if v.Base == "wgmma" {
		v.MinArch = 90
	}
	return v
}

// canonicalName lists the knobs that differ from the defaults, in
// KnobSpace order, so equal variants get equal names.
func (p *Problem) canonicalName(base string, k Knobs) string {
	vals := k.values()
	var parts []string
	for _, ks := range VariantKnobSpace(p.Name, base) {
		if vals[ks.Key] != ks.Default {
			parts = append(parts, ks.Key+"="+vals[ks.Key])
		}
	}
	if len(parts) == 0 {
		return base
	}
	return base + "?" + strings.Join(parts, "&")
}

// KnobCombinations enumerates every valid knob setting of the baseline
// family's declared space (VariantCombinations(p, "baseline")).
func (p *Problem) KnobCombinations() []Knobs { return p.VariantCombinations("baseline") }

// VariantCombinations enumerates every valid knob setting of family base's
// declared space (the combination rules applied), in a stable order.
// Launch-only differences are included; callers that compile can dedupe by
// Defines.
func (p *Problem) VariantCombinations(base string) []Knobs {
	space := VariantKnobSpace(p.Name, base)
	if len(space) == 0 {
		return nil
	}
	var out []Knobs
	idx := make([]int, len(space))
	for {
		vals := map[string]string{}
		for i, ks := range space {
			vals[ks.Key] = ks.Values[idx[i]]
		}
		if k, err := knobsFrom(p.Name, base, vals); err == nil && checkCombination(p.Name, base, k) == nil {
			out = append(out, k)
		}
		i := len(space) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(space[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out
		}
	}
}

// WithKnobs returns v with knobs k and the matching canonical name, after
// checking the combination rules.
func (p *Problem) WithKnobs(v Variant, k Knobs) (Variant, error) {
	if v.Reference {
		return Variant{}, fmt.Errorf("kernels: variant %q takes no knobs", v.Name)
	}
	if err := checkCombination(p.Name, v.Base, k); err != nil {
		return Variant{}, err
	}
	return p.withValidKnobs(v, k), nil
}

// Source returns the variant's embedded CUDA source.
func (v Variant) Source() (string, error) {
	b, err := cudaFiles.ReadFile("cuda/" + v.SourceFile)
	if err != nil {
		return "", fmt.Errorf("kernels: read source of %s: %w", v.Name, err)
	}
	return string(b), nil
}

// Defines are the compile-time defines of the variant. The launch mode is
// host-side only, so it is not a define and every launch mode shares one
// compiled module.
func (v Variant) Defines() map[string]string {
	d := map[string]string{}
	if v.Problem == "nvfp4_dual_gemm" {
		d["DUAL"] = "1"
	} else {
		d["DUAL"] = "0"
	}
	if v.Reference {
		return d
	}
	if v.Base == "fault" {
		d["FAULT_MODE"] = "1"
		if v.Knobs.Mode == "hang" {
			d["FAULT_MODE"] = "2"
		}
		return d
	}
	if v.Base == "cheat" {
		d["CHEAT_MODE"] = strconv.Itoa(1 + slices.Index(CheatModes, v.Knobs.Mode))
		return d
	}
	if v.Base == "wgmma" {
		return wgmmaDefines(v.Knobs, d)
	}
	if v.Base == "fused" {
		// The fused sources' own macros (see their headers).
		wn, wm := FusedWarps(v.Problem, v.Knobs)
		half := "0"
		if v.Knobs.Layout == "half" {
			half = "1"
		}
		d["WARP_N"], d["WARP_M"] = strconv.Itoa(fusedWarpN), strconv.Itoa(fusedWarpM)
		d["WARPS_N"], d["WARPS_M"] = strconv.Itoa(wn), strconv.Itoa(wm)
		d["STAGES"] = strconv.Itoa(v.Knobs.Stages)
		d["FG_HALF"] = half
		d["MIN_BLOCKS"] = strconv.Itoa(v.Knobs.BlocksPerSM)
		if v.Problem != "nvfp4_dual_gemm" {
			// Split-K is host-side (the table's splits field and a second
			// launch), so only the epilogue adds a define.
			d["FG_EPI_TMA"] = "0"
			if v.Knobs.Epilogue == "tma" {
				d["FG_EPI_TMA"] = "1"
			}
		}
		return d
	}
	// An auto tile is no macro value: engines compile Candidates() instead
	// ("auto" here names it in records and fails a direct compile).
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

// SourceHash is the sha256 of the embedded source (hex), or of the error
// text when the source is missing, so two different states never collide.
func (v Variant) SourceHash() string {
	src, err := v.Source()
	if err != nil {
		src = "missing: " + err.Error()
	}
	h := sha256.Sum256([]byte(src))
	return hex.EncodeToString(h[:])
}

// KernelNames lists the entry points a variant's module defines.
func (v Variant) KernelNames() []string {
	switch {
	case v.Reference && v.Problem == "nvfp4_dual_gemm":
		return []string{"ref_dual"}
	case v.Reference:
		return []string{"ref_group"}
	case v.Base == "fused" && v.Problem == "nvfp4_dual_gemm":
		return []string{"fast_dual_gemm"}
	case v.Base == "fused":
		return []string{"fast_group_gemm", "fast_group_reduce"}
	case v.Base == "wgmma":
		return []string{"wg_group_gemm"}
	case v.Base == "fault" && v.Problem == "nvfp4_dual_gemm":
		return []string{"fault_dual"}
	case v.Base == "fault":
		return []string{"fault_group"}
	case v.Base == "cheat":
		return []string{"cheat_before", "cheat_compute", "cheat_after"}
	case v.Problem == "nvfp4_dual_gemm":
		return []string{"gemm_dual"}
	}
	return []string{"gemm_group", "gemm_grouped"}
}

// HarnessSource is the measurement harness's own device code
// (cuda/harness.cu): the seeded fill and row negation internal/bench runs
// between timed samples. It is no variant and takes no knobs.
func HarnessSource() (name, src string, err error) {
	b, err := cudaFiles.ReadFile("cuda/harness.cu")
	if err != nil {
		return "", "", fmt.Errorf("kernels: read the harness source: %w", err)
	}
	return "harness.cu", string(b), nil
}
