package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Validate checks a result document against the schema documented in
// docs/bench-result.md: strict decoding (unknown fields refused), every
// field present (fields documented as nullable may be null), and numbers
// that make sense together. It returns the first few problems found.
func Validate(doc []byte) error {
	var generic any
	if err := json.Unmarshal(doc, &generic); err != nil {
		return fmt.Errorf("result: validate: not JSON: %w", err)
	}
	var probs []string
	version := SchemaVersion
	if obj, ok := generic.(map[string]any); ok {
		if v, ok := obj["schema_version"].(float64); ok && v >= MinSchemaVersion && v <= SchemaVersion && v == float64(int(v)) {
			version = int(v)
		}
	}
	checkPresence(reflect.TypeOf(Result{}), generic, "$", version, &probs)
	if len(probs) > 0 {
		return validationError(probs)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("result: validate: strict decode: %w", err)
	}
	if dec.More() {
		return errors.New("result: validate: trailing data after the document")
	}
	probs = r.problems()
	if len(probs) > 0 {
		return validationError(probs)
	}
	return nil
}

func validationError(probs []string) error {
	const show = 8
	more := ""
	if len(probs) > show {
		more = fmt.Sprintf(" (and %d more)", len(probs)-show)
		probs = probs[:show]
	}
	return fmt.Errorf("result: validate: %s%s", strings.Join(probs, "; "), more)
}

// checkPresence walks the decoded JSON alongside the Go type: every field of
// every object must be present. null is allowed only where the Go type is a
// pointer, slice or map (the documented nullable fields).
//
// A field tagged since:"N" is required only in documents of version N or
// later (version 1 documents, measured before the timing guard, lack them).
func checkPresence(t reflect.Type, v any, path string, version int, probs *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			*probs = append(*probs, path+": want an object")
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := jsonName(f)
			if name == "" {
				continue
			}
			fv, present := obj[name]
			if since, err := strconv.Atoi(f.Tag.Get("since")); !present && err == nil && since > version {
				continue
			}
			if !present {
				*probs = append(*probs, fmt.Sprintf("%s.%s: missing", path, name))
				continue
			}
			if fv == nil {
				switch f.Type.Kind() {
				case reflect.Pointer, reflect.Slice, reflect.Map:
				default:
					*probs = append(*probs, fmt.Sprintf("%s.%s: null is not allowed", path, name))
				}
				continue
			}
			checkPresence(f.Type, fv, path+"."+name, version, probs)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			*probs = append(*probs, path+": want an array")
			return
		}
		for i, e := range arr {
			checkPresence(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i), version, probs)
		}
	}
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// moduleProblem says what is inconsistent in a launch plan's module
// (version 3): none runs in CPU mode, and a plan that ran its build's own
// variant ran the build's module. (A candidate of an auto variant has a key
// of its own, which the build, holding its first candidate's, cannot check.)
func (r *Result) moduleProblem(pl LaunchPlan) string {
	if r.Mode == "cpu" {
		if pl.Module != "" || pl.CubinKey != "" {
			return fmt.Sprintf("module %q in CPU mode", pl.Module)
		}
		return ""
	}
	var b *Build
	switch pl.Role {
	case RoleVariant:
		b = &r.Variant
	case RoleBaseline:
		b = r.Baseline
	}
	if b != nil && pl.Module == b.Name && b.CubinKey != "" && pl.CubinKey != b.CubinKey {
		return fmt.Sprintf("module %q has cubin_key %q, its build %q", pl.Module, pl.CubinKey, b.CubinKey)
	}
	if pl.Module == "" && pl.CubinKey != "" {
		return "cubin_key without a module"
	}
	return ""
}

// problems lists what is inconsistent in a decoded result.
func (r *Result) problems() []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if r.SchemaVersion < MinSchemaVersion || r.SchemaVersion > SchemaVersion {
		bad("schema_version: got %d, this reader knows %d to %d", r.SchemaVersion, MinSchemaVersion, SchemaVersion)
	}
	v2 := r.SchemaVersion >= 2
	switch r.Status {
	case StatusOK:
		if r.ExitCode != ExitOK {
			bad("exit_code %d with status ok", r.ExitCode)
		}
	case StatusIncorrect:
		if r.ExitCode != ExitIncorrect {
			bad("exit_code %d with status incorrect", r.ExitCode)
		}
	case StatusSuspect:
		if r.ExitCode != ExitSuspect {
			bad("exit_code %d with status suspect", r.ExitCode)
		}
		if !v2 {
			bad("status suspect needs schema_version 2")
		} else if len(r.Summary.Suspect) == 0 {
			bad("status suspect without summary.suspect reasons")
		}
	case StatusError:
		if r.ExitCode != ExitCouldNotRun {
			bad("exit_code %d with status error", r.ExitCode)
		}
		if r.Error == "" {
			bad("status error without an error message")
		}
	default:
		bad("status: %q is not ok, incorrect, suspect or error", r.Status)
	}
	if v2 && r.Status == StatusOK && len(r.Summary.Suspect) > 0 {
		bad("status ok with summary.suspect reasons: want suspect")
	}
	if r.Problem == "" {
		bad("problem: empty")
	}
	if !oneOf(r.Suite, "tests", "benchmarks", "file") {
		bad("suite: %q is not tests, benchmarks or file", r.Suite)
	}
	if !oneOf(r.Mode, "gpu", "cpu") {
		bad("mode: %q is not gpu or cpu", r.Mode)
	}
	if r.Device.Kind != r.Mode {
		bad("device.kind %q differs from mode %q", r.Device.Kind, r.Mode)
	}
	if r.Device.Name == "" {
		bad("device.name: empty")
	}
	if r.Fingerprint.DeviceModel != r.Device.Name || r.Fingerprint.Key != fingerprintKey(r.Fingerprint) {
		bad("fingerprint does not match the device (model %q, key %q)", r.Fingerprint.DeviceModel, r.Fingerprint.Key)
	}
	if r.FinishedAt.Before(r.StartedAt) {
		bad("finished_at before started_at")
	}
	if !nonNeg(r.WallSeconds) {
		bad("wall_seconds: %v", r.WallSeconds)
	}
	if !(r.Ceilings.TensorFLOPS > 0) || !(r.Ceilings.MemBytesPerSec > 0) || math.IsInf(r.Ceilings.TensorFLOPS, 0) || math.IsInf(r.Ceilings.MemBytesPerSec, 0) {
		bad("ceilings: rates must be positive and finite")
	}
	pr := r.Protocol
	if !oneOf(pr.CacheMode, "cold", "warm") {
		bad("protocol.cache_mode: %q is not cold or warm", pr.CacheMode)
	}
	if pr.CacheMode == "cold" && pr.FlushBytes <= 0 {
		bad("protocol.flush_bytes must be > 0 in cold mode")
	}
	if !oneOf(pr.Timer, "cuda_events", "cuda_events_gated", "wall_clock") {
		bad("protocol.timer: %q", pr.Timer)
	}
	if pr.StopRule.MinSamples < 1 || pr.StopRule.MaxSamples < pr.StopRule.MinSamples || !(pr.StopRule.MaxRelSEM > 0) {
		bad("protocol.stop_rule: inconsistent (min %d, max %d samples, max_rel_sem %v)", pr.StopRule.MinSamples, pr.StopRule.MaxSamples, pr.StopRule.MaxRelSEM)
	}
	if pr.SeedsPerShape < 1 {
		bad("protocol.seeds_per_shape: %d", pr.SeedsPerShape)
	}
	paired := r.Baseline != nil
	if r.Variant.Role != RoleVariant {
		bad("variant.role: %q", r.Variant.Role)
	}
	if paired && r.Baseline.Role != RoleBaseline {
		bad("baseline.role: %q", r.Baseline.Role)
	}
	if r.Mode == "gpu" && r.Status != StatusError && r.Reference == nil {
		bad("reference: missing in gpu mode")
	}
	if len(r.Shapes) == 0 && r.Status != StatusError {
		bad("shapes: none")
	}
	correct, timed := 0, 0
	for i := range r.Shapes {
		s := &r.Shapes[i]
		for _, q := range s.problems(paired) {
			bad("shapes[%d].%s", i, q)
		}
		for j, pl := range s.Launch {
			if q := r.moduleProblem(pl); q != "" {
				bad("shapes[%d].launch[%d]: %s", i, j, q)
			}
		}
		if s.Correct {
			correct++
		}
		if s.Variant != nil {
			timed++
		}
	}
	sm := r.Summary
	if sm.Shapes != len(r.Shapes) || sm.Correct != correct || sm.Timed != timed {
		bad("summary counts (%d shapes, %d correct, %d timed) disagree with shapes (%d, %d, %d)", sm.Shapes, sm.Correct, sm.Timed, len(r.Shapes), correct, timed)
	}
	if sm.AllCorrect != (correct == len(r.Shapes) && len(r.Shapes) > 0) {
		bad("summary.all_correct disagrees with shapes")
	}
	if r.Status == StatusOK && !sm.AllCorrect {
		bad("status ok but not all shapes correct")
	}
	if paired != (sm.GeomeanSpeedup != nil) && timed > 0 {
		bad("summary.geomean_speedup must be set exactly when a baseline is paired")
	}
	if sm.GeomeanSpeedup != nil && !(*sm.GeomeanSpeedup > 0) {
		bad("summary.geomean_speedup: %v", *sm.GeomeanSpeedup)
	}
	for _, f := range sm.FastP {
		if !(f.P > 0) || f.Value < 0 || f.Value > 1 {
			bad("summary.fast_p: p %v value %v", f.P, f.Value)
		}
	}
	if len(sm.ShapeSpeedups) != 0 && len(sm.ShapeSpeedups) != len(r.Shapes) {
		bad("summary.shape_speedups: %d entries for %d shapes", len(sm.ShapeSpeedups), len(r.Shapes))
	}
	for _, x := range []float64{sm.GeomeanMedianNs, sm.GeomeanFloorNs, sm.GeomeanFractionFloor} {
		if !nonNeg(x) {
			bad("summary: geomeans must be finite and >= 0 (got %v)", x)
		}
	}
	return p
}

func (s *Shape) problems(paired bool) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if len(s.M) == 0 {
		bad("m: empty")
	}
	for _, m := range s.M {
		if m < 1 {
			bad("m: %d < 1", m)
		}
	}
	if s.N < 1 || s.K < 1 {
		bad("n, k: must be >= 1 (n %d, k %d)", s.N, s.K)
	}
	if !(s.FLOPs > 0) || !(s.MinBytes > 0) || !(s.FloorNs > 0) || math.IsInf(s.FloorNs, 0) {
		bad("flops, min_bytes, floor_ns: must be positive and finite")
	}
	if !oneOf(s.FloorBound, "compute", "memory") {
		bad("floor_bound: %q", s.FloorBound)
	}
	if !(s.ATol >= 0) || !(s.RTol >= 0) {
		bad("atol/rtol: must be >= 0")
	}
	if paired != (s.BaselineCorrect != nil) {
		bad("baseline_correct: must be set exactly when a baseline is paired")
	}
	allVariantPass := true
	sawVariant := false
	for j, c := range s.Checks {
		if !oneOf(c.Role, RoleVariant, RoleBaseline, RoleReference) {
			bad("checks[%d].role: %q", j, c.Role)
		}
		if !oneOf(c.Phase, PhaseFresh, PhaseLastTimed, PhaseRefVsCPU, PhaseTimedSample, PhaseAfterTimer, PhaseInputsAfter) {
			bad("checks[%d].phase: %q", j, c.Phase)
		}
		if c.Elements < 1 || c.Mismatches < 0 || c.Mismatches > c.Elements || c.NaNs < 0 || c.NaNs > c.Elements {
			bad("checks[%d]: counts (elements %d, mismatches %d, nans %d)", j, c.Elements, c.Mismatches, c.NaNs)
		}
		for _, e := range []*float64{c.MaxAbsErr, c.MaxRelErr, c.RelL2Err} {
			if e != nil && !nonNeg(*e) {
				bad("checks[%d]: error figures must be >= 0", j)
			}
		}
		if c.Pass && (c.Mismatches > 0 || c.NaNs > 0 || !c.InputsIntact) {
			bad("checks[%d]: pass with mismatches, NaNs or changed inputs", j)
		}
		if c.Role == RoleVariant {
			sawVariant = true
			allVariantPass = allVariantPass && c.Pass
		}
	}
	if s.Correct && (!sawVariant || !allVariantPass) {
		bad("correct: true but a variant check failed or none ran")
	}
	if s.Variant != nil {
		if s.Skipped != "" {
			bad("skipped: %q but timed", s.Skipped)
		}
		for _, q := range s.Variant.problems() {
			bad("variant_timing.%s", q)
		}
		if !(s.FractionOfFloor > 0) || math.IsInf(s.FractionOfFloor, 0) {
			bad("fraction_of_floor: %v", s.FractionOfFloor)
		}
	} else if s.Skipped == "" {
		bad("not timed, and skipped gives no reason")
	}
	if s.Baseline != nil {
		for _, q := range s.Baseline.problems() {
			bad("baseline_timing.%s", q)
		}
	}
	if s.Pairing != nil {
		pg := s.Pairing
		if len(pg.Order) != pg.Rounds || len(pg.Sets) != pg.Rounds {
			bad("pairing: %d order and %d set entries for %d rounds", len(pg.Order), len(pg.Sets), pg.Rounds)
		}
		for _, st := range pg.Sets {
			if st < 0 || st >= max(s.InputSets, 1) {
				bad("pairing.sets: %d outside 0..input_sets-1", st)
				break
			}
		}
		if pg.Bootstrap == "" {
			bad("pairing.bootstrap: empty")
		}
		for _, o := range pg.Order {
			if o != "AB" && o != "BA" {
				bad("pairing.order: %q", o)
				break
			}
		}
		iv := pg.Speedup
		if !(iv.Lo > 0 && iv.Lo <= iv.Point && iv.Point <= iv.Hi) || math.IsInf(iv.Hi, 0) {
			bad("pairing.speedup: want 0 < lo <= point <= hi, got %v %v %v", iv.Lo, iv.Point, iv.Hi)
		}
		if !oneOf(pg.Verdict, "faster", "slower", "no clear difference") {
			bad("pairing.verdict: %q", pg.Verdict)
		}
		if s.Variant == nil || s.Baseline == nil {
			bad("pairing without both timings")
		}
	}
	return p
}

func (m *Measurement) problems() []string {
	var p []string
	if len(m.SamplesNs) == 0 || m.Stats.N != len(m.SamplesNs) {
		p = append(p, fmt.Sprintf("stats.n %d for %d samples", m.Stats.N, len(m.SamplesNs)))
	}
	for _, x := range m.SamplesNs {
		if !(x > 0) || math.IsInf(x, 0) {
			p = append(p, fmt.Sprintf("samples_ns: %v is not a positive finite time", x))
			break
		}
	}
	st := m.Stats
	if !(st.MinNs <= st.MedianNs && st.MedianNs <= st.MaxNs && st.MinNs <= st.MeanNs && st.MeanNs <= st.MaxNs) {
		p = append(p, "stats: want min <= median, mean <= max")
	}
	if !nonNeg(st.StddevNs) || !nonNeg(st.SEMNs) || !nonNeg(st.RelSEM) {
		p = append(p, "stats: stddev, sem, rel_sem must be finite and >= 0")
	}
	if m.StopReason == "" {
		p = append(p, "stop_reason: empty")
	}
	if m.WarmupLaunches < 1 {
		p = append(p, "warmup_launches: < 1")
	}
	return p
}

func nonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
