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
	"sync"
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
	// Custom holds a submitted kernel's knob values in its manifest's
	// order, as a query string ("stages=2&swizzle=1"); "" for built-ins.
	// A string keeps Knobs comparable.
	Custom string
}

// KnobSpec declares one knob: its key in a variant spec, the allowed values,
// the default, and what it changes.
type KnobSpec struct {
	Key     string
	Values  []string
	Default string
	Doc     string
	// Free says that no combination rule refers to the knob: a combination
	// is valid at each of its values or at none. Enumerating the space
	// then checks each combination of the other knobs once (at the free
	// knobs' defaults) before expanding it, instead of multiplying the
	// rejected ones too (the dual wgmma space is ~10^6 raw combinations).
	Free bool
	// Narrows says that the knob's other values only add rules: a
	// combination refused at its default is refused at every value (a
	// value may be refused where the default is not). Enumeration treats it
	// as Free, checking each of its values where the rest is valid at the
	// default, so a knob that only narrows does not double the raw
	// combinations walked.
	Narrows bool
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

// Hopper's shared memory per SM (228 KiB); the driver reserves 1 KiB per
// resident block.
const (
	hopperSharedPerSM = 233472
	sharedPerBlockRes = 1024
)

// Hopper's opt-in shared memory per block (227 KiB); plans check the actual
// device limit too.
const hopperSharedOptin = 232448

// VariantKnobSpace is the declared knob space of the built-in family base
// for problem; the reference takes no knobs (nil), as does an unknown base.
func VariantKnobSpace(problem, base string) []KnobSpec {
	if f, ok := families[base]; ok {
		return f.KnobSpace(problem)
	}
	return nil
}

// TestKernelsEnv names the environment variable that makes the test-only
// families (fault, cheat) resolvable. The server validates a run's variant
// and the bench child resolves it again, both in processes that inherit the
// environment, so setting it on the server is enough for a test and leaving
// it unset keeps the kernels unreachable in normal use.
const TestKernelsEnv = "PITCHTANK_TEST_KERNELS"

// TestKernelsEnabled reports whether TestKernelsEnv is "1" in this process.
func TestKernelsEnabled() bool { return os.Getenv(TestKernelsEnv) == "1" }

// Variant is one kernel variant of a problem with its knob values.
type Variant struct {
	// Name is the canonical spec: the base name, then the knobs that differ
	// from the defaults in KnobSpace order, e.g. "baseline?tile_m=64&stages=3".
	Name        string
	Title       string
	Problem     string
	Description string
	SourceFile  string // under kernels/cuda; a submission's main file
	Knobs       Knobs
	MinArch     int // 80 = any sm_80+, 90 = needs sm_90a features, 100 = sm_100a
	Reference   bool
	// Base is the variant's name without knob overrides ("kernel:<hash>"
	// for a submitted kernel).
	Base string
	// Kernel is the submitted kernel the variant runs; nil for built-ins.
	Kernel *Submission
}

//go:embed cuda/*.cu cuda/*.cuh
var cudaFiles embed.FS

// readCUDA reads an embedded CUDA file (tests swap it to see what an edit
// of a source or header does).
var readCUDA = cudaFiles.ReadFile

func (p *Problem) dual() bool { return p.Kind == DualGEMM }

// Dual reports whether p is a dual GEMM (one A, B1 and B2, SiLU gate).
func (p *Problem) Dual() bool { return p.dual() }

// Variants lists the problem's variants with default knobs: one per
// registered family that offers one, test-only families left out.
func (p *Problem) Variants() []Variant {
	var vs []Variant
	for _, f := range Families() {
		if f.Info().TestOnly {
			continue
		}
		if v, ok := f.Variant(p); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

func defaultKnobs(problem string, f Family) (Knobs, error) {
	vals := map[string]string{}
	for _, ks := range f.KnobSpace(problem) {
		vals[ks.Key] = ks.Default
	}
	return knobsFrom(problem, f, vals)
}

// knobsFrom builds the knobs of family f from string values; keys the
// family does not declare keep the family's fixed values (f.Fixed).
func knobsFrom(problem string, f Family, vals map[string]string) (Knobs, error) {
	if c, ok := f.(knobCodec); ok {
		return c.parseKnobs(vals)
	}
	k := f.Fixed(problem)
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
	// Keys Knobs has no field for (a new family's own knobs) are kept in
	// Custom, so adding a family never touches this file: the family
	// reads them with Knobs.Value.
	var extra []string
	for key, v := range vals {
		if !isFieldKey[key] {
			extra = append(extra, url.QueryEscape(key)+"="+url.QueryEscape(v))
		}
	}
	slices.Sort(extra)
	k.Custom = strings.Join(extra, "&")
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

// values renders knobs in the knob spaces' string form, Custom's included.
func (k Knobs) values() map[string]string {
	m := k.fieldValues()
	if k.Custom != "" {
		q, _ := url.ParseQuery(k.Custom)
		for key := range q {
			m[key] = q.Get(key)
		}
	}
	return m
}

// Value is the knob key's value in its knob space's string form ("" when
// k has none): how a family reads a knob that Knobs has no field for.
//
// The rule checks read many knobs per combination over ~10^6 raw ones, so
// this reads the one value without building values' map: Custom first (it
// overrides a field, as in values), then the field.
func (k Knobs) Value(key string) string {
	if v, ok := customValue(k.Custom, key); ok {
		return v
	}
	return k.fieldValue(key)
}

// customValue is key's first value in the encoded query q (url.Values'
// Get, without parsing the rest), and whether q has it.
func customValue(q, key string) (string, bool) {
	if key != "" && strings.IndexByte(q, '%') < 0 && strings.IndexByte(q, '+') < 0 && strings.IndexByte(q, ';') < 0 {
		return plainValue(q, key)
	}
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if strings.Contains(kv, ";") {
			continue // url.ParseQuery drops such pairs
		}
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != key {
			continue
		}
		v, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		return v, true
	}
	return "", false
}

// plainValue is customValue for a query with nothing escaped and no ';'
// (every query knobsFrom builds from a knob space's values): key's first
// pair found by substring search, without splitting the query. Checking a
// combination reads ~30 values, and the knob space has ~10^6 combinations.
func plainValue(q, key string) (string, bool) {
	for off := 0; off < len(q); {
		i := strings.Index(q[off:], key)
		if i < 0 {
			return "", false
		}
		i += off
		end := i + len(key)
		if (i == 0 || q[i-1] == '&') && (end == len(q) || q[end] == '=' || q[end] == '&') {
			if end == len(q) || q[end] == '&' {
				return "", true // "key" alone: an empty value
			}
			v := q[end+1:]
			if j := strings.IndexByte(v, '&'); j >= 0 {
				v = v[:j]
			}
			return v, true
		}
		off = i + 1
	}
	return "", false
}

// SameValues reports whether k and o agree on every knob in keys.
func (k Knobs) SameValues(o Knobs, keys ...string) bool {
	kv, ov := k.values(), o.values()
	for _, key := range keys {
		if kv[key] != ov[key] {
			return false
		}
	}
	return true
}

// withCustom is k with the knob key, one Knobs has no field for, set to
// value (an auto knob's candidates are made this way).
func (k Knobs) withCustom(key, value string) Knobs {
	q, _ := url.ParseQuery(k.Custom)
	q.Set(key, value)
	k.Custom = q.Encode()
	return k
}

// fieldKeys are the knobs Knobs has fields for.
var fieldKeys = []string{"tile_m", "tile_n", "tile_k", "stages", "epilogue", "warp_roles", "launch", "split_k",
	"swap_ab", "layout", "blocks_per_sm", "grid", "mode", "tail_width"}

// isFieldKey says which knobs Knobs has fields for (fieldKeys as a set).
var isFieldKey = func() map[string]bool {
	m := make(map[string]bool, len(fieldKeys))
	for _, k := range fieldKeys {
		m[k] = true
	}
	return m
}()

// fieldValues renders Knobs' own fields.
func (k Knobs) fieldValues() map[string]string {
	m := make(map[string]string, len(fieldKeys))
	for _, key := range fieldKeys {
		m[key] = k.fieldValue(key)
	}
	return m
}

// fieldValue renders the field of knob key ("" for a knob Knobs has no
// field for).
func (k Knobs) fieldValue(key string) string {
	switch key {
	case "tile_m":
		return tileString(k.TileM)
	case "tile_n":
		return tileString(k.TileN)
	case "tile_k":
		return strconv.Itoa(k.TileK)
	case "stages":
		return strconv.Itoa(k.Stages)
	case "epilogue":
		return k.Epilogue
	case "warp_roles":
		return k.WarpRoles
	case "launch":
		return k.Launch
	case "split_k":
		return splitKString(k.SplitK)
	case "swap_ab":
		return strconv.FormatBool(k.SwapAB)
	case "layout":
		return k.Layout
	case "blocks_per_sm":
		return strconv.Itoa(k.BlocksPerSM)
	case "grid":
		return k.Grid
	case "mode":
		return k.Mode
	case "tail_width":
		return k.TailWidth
	}
	return ""
}

// knobValues is k in the string form of family f's space.
func knobValues(f Family, k Knobs) map[string]string {
	if c, ok := f.(knobCodec); ok {
		return c.knobValues(k)
	}
	return k.values()
}

// ResolveVariant parses a spec such as "baseline" or
// "baseline?stages=3&tile_m=64": the overrides are checked against the
// family's knob space, and an unknown knob or value returns a *KnobError
// naming the knob and the allowed values. The reference variant takes no
// knobs. A submitted kernel ("kernel:<hash>") resolves only with its
// submission (ResolveSubmission).
func (p *Problem) ResolveVariant(spec string) (Variant, error) {
	base, query, _ := strings.Cut(strings.TrimSpace(spec), "?")
	var v Variant
	var names []string
	found := false
	for _, c := range p.Variants() {
		names = append(names, c.Name)
		if c.Name == base {
			v, found = c, true
		}
	}
	if f, ok := families[base]; !found && ok && f.Info().TestOnly && TestKernelsEnabled() {
		v, found = f.Variant(p)
	}
	if !found {
		if IsSubmissionSpec(base) {
			return Variant{}, fmt.Errorf("kernels: variant %q names a submitted kernel: resolve it with its submission (web bench --kernel DIR)", base)
		}
		return Variant{}, fmt.Errorf("kernels: unknown variant %q for %s (known: %s)", base, p.Name, strings.Join(names, ", "))
	}
	return p.applyKnobs(v, query)
}

// applyKnobs sets the overrides of query (a spec's part after "?") on v's
// defaults, checking each against v's family.
func (p *Problem) applyKnobs(v Variant, query string) (Variant, error) {
	if query == "" {
		return v, nil
	}
	if v.Reference {
		return Variant{}, fmt.Errorf("kernels: variant %q takes no knobs (got %q)", v.Base, query)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: parse knobs %q: %w", query, err)
	}
	f := v.family()
	space := f.KnobSpace(p.Name)
	vals := knobValues(f, v.Knobs)
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
	k, err := knobsFrom(p.Name, f, vals)
	if err != nil {
		return Variant{}, fmt.Errorf("kernels: knobs %q: %w", query, err)
	}
	if err := f.Check(p.Name, k); err != nil {
		return Variant{}, err
	}
	return p.withValidKnobs(v, k), nil
}

// withValidKnobs sets checked knobs k on v: the canonical name, and the
// architecture the knobs need (e.g. the TMA epilogue's bulk copies are
// sm_90).
func (p *Problem) withValidKnobs(v Variant, k Knobs) Variant {
	f := v.family()
	v.Knobs = k
	v.Name = canonicalName(p.Name, v.Base, f, k)
	v.MinArch = max(v.MinArch, f.MinArch(p.Name, k))
	return v
}

// canonicalName lists the knobs that differ from the defaults, in the
// family's knob space order, so equal variants get equal names.
func canonicalName(problem, base string, f Family, k Knobs) string {
	vals := knobValues(f, k)
	var parts []string
	for _, ks := range f.KnobSpace(problem) {
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

// VariantCombinations enumerates every valid knob setting of the built-in
// family base's declared space (the combination rules applied), in a
// stable order. Launch-only differences are included; callers that
// compile can dedupe by Defines.
//
// The enumeration walks every raw combination of the bound knobs (a few
// 10^5 for the wgmma family, its free and narrowing knobs expanded late)
// and depends only on the problem's name and the family, so it runs once
// per pair and callers get a copy.
func (p *Problem) VariantCombinations(base string) []Knobs {
	f, ok := families[base]
	if !ok {
		return nil
	}
	e, _ := combinationCache.LoadOrStore(p.Name+"\x00"+base, &combinationEntry{})
	c := e.(*combinationEntry)
	c.once.Do(func() { c.knobs = p.combinations(f) })
	return slices.Clone(c.knobs)
}

// combinationCache holds VariantCombinations' enumerations by problem
// name and family.
var combinationCache sync.Map

type combinationEntry struct {
	once  sync.Once
	knobs []Knobs
}

func (p *Problem) combinations(f Family) []Knobs {
	space := f.KnobSpace(p.Name)
	if len(space) == 0 {
		return nil
	}
	// Free and narrowing knobs are expanded only where the others are valid
	// at their defaults; every expansion is checked again.
	var bound, free []KnobSpec
	for _, ks := range space {
		if ks.Free || ks.Narrows {
			free = append(free, ks)
		} else {
			bound = append(bound, ks)
		}
	}
	valid := func(vals map[string]string) (Knobs, bool) {
		k, err := knobsFrom(p.Name, f, vals)
		return k, err == nil && f.Check(p.Name, k) == nil
	}
	var out []Knobs
	eachCombination(bound, func(vals map[string]string) {
		for _, ks := range free {
			vals[ks.Key] = ks.Default
		}
		if _, ok := valid(vals); !ok {
			return // and at every value of the free and narrowing knobs
		}
		eachCombination(free, func(fv map[string]string) {
			for key, v := range fv {
				vals[key] = v
			}
			if k, ok := valid(vals); ok {
				out = append(out, k)
			}
		})
	})
	return out
}

// eachCombination calls fn with every combination of space's values (the
// last knob varying fastest; one empty combination for an empty space).
// fn may change the map it gets; the next call gets a fresh one.
func eachCombination(space []KnobSpec, fn func(map[string]string)) {
	idx := make([]int, len(space))
	for {
		vals := make(map[string]string, len(space))
		for i, ks := range space {
			vals[ks.Key] = ks.Values[idx[i]]
		}
		fn(vals)
		i := len(space) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(space[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// WithKnobs returns v with knobs k and the matching canonical name, after
// checking the combination rules.
func (p *Problem) WithKnobs(v Variant, k Knobs) (Variant, error) {
	if v.Reference {
		return Variant{}, fmt.Errorf("kernels: variant %q takes no knobs", v.Name)
	}
	if err := v.family().Check(p.Name, k); err != nil {
		return Variant{}, err
	}
	return p.withValidKnobs(v, k), nil
}

// CommonHeader is the shared device header every built-in source includes
// (cuda/pt_common.cuh) and a submitted CUDA kernel may include: the name
// NVRTC resolves `#include "pt_common.cuh"` to.
const CommonHeader = "pt_common.cuh"

// Source returns the variant's main CUDA source (a submission's main file).
func (v Variant) Source() (string, error) {
	if v.Kernel != nil {
		return string(v.Kernel.Files[v.Kernel.Manifest.Source]), nil
	}
	b, err := readCUDA("cuda/" + v.SourceFile)
	if err != nil {
		return "", fmt.Errorf("kernels: read source of %s: %w", v.Name, err)
	}
	return string(b), nil
}

// Headers are the headers NVRTC gets with the variant's source, by the
// name an #include uses: the shared header, and a submission's own.
func (v Variant) Headers() (map[string]string, error) {
	b, err := readCUDA("cuda/" + CommonHeader)
	if err != nil {
		return nil, fmt.Errorf("kernels: read %s: %w", CommonHeader, err)
	}
	h := map[string]string{CommonHeader: string(b)}
	if v.Kernel != nil {
		for _, name := range v.Kernel.Manifest.Headers {
			h[name] = string(v.Kernel.Files[name])
		}
	}
	return h, nil
}

// Defines are the compile-time defines of the variant: DUAL (0 or 1), then
// the family's. The launch mode is host-side only, so it is not a define
// and every launch mode shares one compiled module.
func (v Variant) Defines() map[string]string {
	d := map[string]string{"DUAL": "0"}
	if isDual(v.Problem) {
		d["DUAL"] = "1"
	}
	if v.Reference {
		return d
	}
	return v.family().Defines(v, d)
}

// SourceHash is the sha256 (hex) over the main source and every header
// NVRTC gets with it (name and bytes, sorted by name; a submission's hash
// covers its manifest too), so a change to a shared header changes the
// hash of every variant that includes it. A missing source hashes its
// error text, so two different states never collide.
func (v Variant) SourceHash() string {
	if v.Kernel != nil {
		return v.Kernel.Hash()
	}
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	src, err := v.Source()
	if err != nil {
		src = "missing: " + err.Error()
	}
	field(src)
	hdrs, err := v.Headers()
	if err != nil {
		field("missing headers: " + err.Error())
	}
	names := make([]string, 0, len(hdrs))
	for n := range hdrs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		field(n)
		field(hdrs[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KernelNames lists the entry points a variant's module defines.
func (v Variant) KernelNames() []string { return v.family().Entries(v) }

// CheckDevice refuses a device v cannot run on (arch such as "sm_100a"),
// naming the built-in variants that run there instead; nil when it runs
// there or arch is "".
func (v Variant) CheckDevice(arch string) error {
	if err := v.family().CheckDevice(v, arch); err != nil {
		return fmt.Errorf("%w (use %s)", err, runsOn(v.Problem, arch))
	}
	return nil
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
