package kernels

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Knobs are the declared, implemented tuning choices of a kernel family.
// Only values that compile and run are declared (see KnobSpace); later
// issues add the TMA epilogue, warp specialization, split-K and swap-AB.
type Knobs struct {
	TileM, TileN, TileK, Stages int
	Epilogue                    string // "simt" (stores from registers)
	WarpRoles                   string // "uniform" (every warp loads and computes)
	Launch                      string // "sequential"|"streams"|"graph"|"grouped"
	SplitK                      int    // 1
	SwapAB                      bool   // false
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

// KnobSpace is the declared knob space for a problem's tunable variants, in
// canonical order. The dual GEMM has one group, so it offers no per-group
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
		{Key: "tile_m", Values: []string{"64", "128"}, Default: tm, Doc: "output tile rows per block (M)"},
		{Key: "tile_n", Values: []string{"64", "128", "256"}, Default: "128", Doc: "output tile columns per block (N)"},
		{Key: "tile_k", Values: []string{"128", "256"}, Default: "256", Doc: "K elements per main-loop step (a short last step covers K % tile_k)"},
		{Key: "stages", Values: []string{"1", "2", "3", "4"}, Default: "1", Doc: "shared-memory ring of cp.async stages: loads of later K steps overlap the MMAs of this one"},
		{Key: "epilogue", Values: []string{"simt"}, Default: "simt", Doc: "how C leaves the block: simt = each thread stores its accumulators"},
		{Key: "warp_roles", Values: []string{"uniform"}, Default: "uniform", Doc: "uniform = every warp loads, decodes and issues MMAs"},
		{Key: "launch", Values: launches, Default: "sequential", Doc: "sequential = one launch per group on one stream; streams = one stream per group joined by events; graph = the per-group launches captured in one CUDA graph; grouped = one launch over a precomputed tile table, largest groups first"},
		{Key: "split_k", Values: []string{"1"}, Default: "1", Doc: "K partitions per output tile"},
		{Key: "swap_ab", Values: []string{"false"}, Default: "false", Doc: "compute C^T = B A^T so N fills the MMA's M dimension"},
	}
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
	k, _ := defaultKnobs(p.Name)
	base.Knobs = k
	return []Variant{ref, base}
}

func defaultKnobs(problem string) (Knobs, error) {
	vals := map[string]string{}
	for _, ks := range KnobSpace(problem) {
		vals[ks.Key] = ks.Default
	}
	return knobsFrom(vals)
}

func knobsFrom(vals map[string]string) (Knobs, error) {
	var k Knobs
	var err error
	atoi := func(key string) int {
		if err != nil {
			return 0
		}
		var n int
		n, err = strconv.Atoi(vals[key])
		return n
	}
	k.TileM = atoi("tile_m")
	k.TileN = atoi("tile_n")
	k.TileK = atoi("tile_k")
	k.Stages = atoi("stages")
	k.SplitK = atoi("split_k")
	k.Epilogue = vals["epilogue"]
	k.WarpRoles = vals["warp_roles"]
	k.Launch = vals["launch"]
	k.SwapAB = vals["swap_ab"] == "true"
	return k, err
}

// knobValues renders knobs in KnobSpace's string form.
func (k Knobs) values() map[string]string {
	return map[string]string{
		"tile_m": strconv.Itoa(k.TileM), "tile_n": strconv.Itoa(k.TileN), "tile_k": strconv.Itoa(k.TileK),
		"stages": strconv.Itoa(k.Stages), "epilogue": k.Epilogue, "warp_roles": k.WarpRoles,
		"launch": k.Launch, "split_k": strconv.Itoa(k.SplitK), "swap_ab": strconv.FormatBool(k.SwapAB),
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
func SharedBytes(problem string, k Knobs) int {
	row := k.TileK/2 + 16 + k.TileK/16
	bRows := k.TileN * accumulators(problem)
	return k.Stages * (k.TileM + bRows) * row
}

// checkCombination applies the rules that single values cannot express.
func checkCombination(problem string, k Knobs) error {
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
	space := KnobSpace(p.Name)
	vals := v.Knobs.values()
	for key, vs := range q {
		i := slices.IndexFunc(space, func(ks KnobSpec) bool { return ks.Key == key })
		if i < 0 {
			keys := make([]string, len(space))
			for j, ks := range space {
				keys[j] = ks.Key
			}
			return Variant{}, &KnobError{Knob: key, Value: strings.Join(vs, ","), Reason: "unknown knob (known: " + strings.Join(keys, ", ") + ")"}
		}
		if len(vs) != 1 || !slices.Contains(space[i].Values, vs[0]) {
			return Variant{}, &KnobError{Knob: key, Value: strings.Join(vs, ","), Allowed: space[i].Values}
		}
		vals[key] = vs[0]
	}
	k, err := knobsFrom(vals)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: knobs %q: %w", query, err)
	}
	if err := checkCombination(p.Name, k); err != nil {
		return Variant{}, err
	}
	v.Knobs = k
	v.Name = p.canonicalName(v.Base, k)
	return v, nil
}

// canonicalName lists the knobs that differ from the defaults, in
// KnobSpace order, so equal variants get equal names.
func (p *Problem) canonicalName(base string, k Knobs) string {
	vals := k.values()
	var parts []string
	for _, ks := range KnobSpace(p.Name) {
		if vals[ks.Key] != ks.Default {
			parts = append(parts, ks.Key+"="+vals[ks.Key])
		}
	}
	if len(parts) == 0 {
		return base
	}
	return base + "?" + strings.Join(parts, "&")
}

// KnobCombinations enumerates every valid knob setting of the declared
// space (the combination rules applied), in a stable order. Launch-only
// differences are included; callers that compile can dedupe by Defines.
func (p *Problem) KnobCombinations() []Knobs {
	space := KnobSpace(p.Name)
	var out []Knobs
	idx := make([]int, len(space))
	for {
		vals := map[string]string{}
		for i, ks := range space {
			vals[ks.Key] = ks.Values[idx[i]]
		}
		if k, err := knobsFrom(vals); err == nil && checkCombination(p.Name, k) == nil {
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
	if err := checkCombination(p.Name, k); err != nil {
		return Variant{}, err
	}
	v.Knobs = k
	v.Name = p.canonicalName(v.Base, k)
	return v, nil
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
	d["TILE_M"] = strconv.Itoa(v.Knobs.TileM)
	d["TILE_N"] = strconv.Itoa(v.Knobs.TileN)
	d["TILE_K"] = strconv.Itoa(v.Knobs.TileK)
	d["STAGES"] = strconv.Itoa(v.Knobs.Stages)
	d["THREADS"] = strconv.Itoa(baselineThreads)
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
	case v.Problem == "nvfp4_dual_gemm":
		return []string{"gemm_dual"}
	}
	return []string{"gemm_group", "gemm_grouped"}
}
