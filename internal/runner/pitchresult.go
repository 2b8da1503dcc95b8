package runner

import (
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/stats"
)

// Measurement is how a round's pitches are measured (the round's
// measurement and baseline): only runs that match it make a pitch's result.
type Measurement struct {
	Problem  string `json:"problem"`
	Suite    string `json:"suite"`
	Baseline string `json:"baseline"`
	// DeviceClass is matched case-insensitively as a substring of a run's
	// device name (its fingerprint's device model, or an import's label):
	// "H100" matches "NVIDIA H100 80GB HBM3". Empty: any device.
	DeviceClass  string `json:"device_class"`
	AllowImports bool   `json:"allow_imports"`
	// Variant is the pitch's kernel variant (MeasurementForPitch): a run of
	// another variant (a knob tweak someone tried on the pitch, or another
	// pitch's import) is not the pitch's measurement. A pitch that names no
	// variant has no run measured here of its own, since any variant could
	// be run "for" it; only imports, whose variant is a free label from
	// another harness, measure it. Knob order is ignored
	// (pitches.SameVariant).
	Variant string `json:"-"`
	// ForPitch says Variant is set: the measurement of one pitch.
	ForPitch bool `json:"-"`
}

// MeasurementForPitch is round's measurement of pitch p (p.Variant).
func MeasurementForPitch(round *pitches.Round, p *pitches.Pitch) Measurement {
	m := MeasurementOf(round)
	m.Variant, m.ForPitch = p.Variant, true
	return m
}

// MeasurementOf is round's measurement. An empty suite means benchmarks.
func MeasurementOf(round *pitches.Round) Measurement {
	m := Measurement{Problem: round.Measurement.Problem, Suite: round.Measurement.Suite, Baseline: round.Baseline,
		DeviceClass: round.Measurement.DeviceClass, AllowImports: round.Measurement.AllowImports}
	if m.Suite == "" {
		m.Suite = SuiteBenchmarks
	}
	return m
}

// Declared reports whether the round names a problem: until it does, no run
// is its measurement.
func (m Measurement) Declared() bool { return m.Problem != "" }

// CheckMeasurement checks a round's measurement against the kernel
// catalogue, as runs are checked: the problem exists, the suite is one bench
// knows, and the baseline (when given) is a timed variant of the problem.
// The error is EINVALID naming the field.
func CheckMeasurement(cat Catalog, m pitches.RoundMeasurement, baseline string) error {
	if err := pitches.ValidateMeasurement(m); err != nil {
		return err
	}
	if m.Problem == "" {
		return nil // not declared yet: nothing counts until it is
	}
	if err := cat.CheckProblem(m.Problem); err != nil {
		return pitches.Errorf(pitches.EINVALID, "problem", "%s", message(err))
	}
	if m.Suite != "" && m.Suite != SuiteTests && m.Suite != SuiteBenchmarks {
		return pitches.Errorf(pitches.EINVALID, "suite", "unknown suite %q: use %q or %q", m.Suite, SuiteTests, SuiteBenchmarks)
	}
	if baseline = strings.TrimSpace(baseline); baseline != "" {
		ref, err := cat.CheckVariant(m.Problem, baseline)
		if err != nil {
			return pitches.Errorf(pitches.EINVALID, "baseline", "%s", message(err))
		}
		if ref {
			return pitches.Errorf(pitches.EINVALID, "baseline", "the reference variant is not a timed baseline; use \"baseline\" or a knob variant")
		}
	}
	return nil
}

// defaultBaseline is what bench pairs a variant with when no baseline is
// given (GPU mode): a run with baseline "" and one with "baseline" measure
// the same thing.
const defaultBaseline = "baseline"

func sameBaseline(a, b string) bool {
	if a == "" {
		a = defaultBaseline
	}
	if b == "" {
		b = defaultBaseline
	}
	return a == b
}

// Mismatch says how run differs from the measurement: the first field that
// does not match and a sentence naming both values; "" when it matches.
func (m Measurement) Mismatch(run *Run) (field, why string) {
	switch {
	case !m.Declared():
		return "problem", "the round declares no measurement yet"
	case run.Problem != m.Problem:
		return "problem", fmt.Sprintf("problem %s, the round measures %s", run.Problem, m.Problem)
	case run.Suite != m.Suite:
		return "suite", fmt.Sprintf("suite %s, the round measures %s", run.Suite, m.Suite)
	case !sameBaseline(run.Baseline, m.Baseline):
		return "baseline", fmt.Sprintf("baseline %s, the round measures against %s", orDefault(run.Baseline), orDefault(m.Baseline))
	case run.Imported && !m.AllowImports:
		return "imported", "imported, and the round does not count imports"
	case m.ForPitch && m.Variant == "" && !run.Imported:
		return "variant", fmt.Sprintf("variant %s, and the pitch names no variant: only an import measures it", run.Variant)
	case m.ForPitch && m.Variant != "" && !pitches.SameVariant(run.Variant, m.Variant):
		return "variant", fmt.Sprintf("variant %s, the pitch's variant is %s", run.Variant, m.Variant)
	}
	if m.DeviceClass != "" {
		name := run.DeviceName
		if name == "" {
			name = run.Device
		}
		if !strings.Contains(strings.ToLower(name), strings.ToLower(m.DeviceClass)) {
			return "device", fmt.Sprintf("device %q, the round measures on %q", name, m.DeviceClass)
		}
	}
	return "", ""
}

func orDefault(b string) string {
	if b == "" {
		return defaultBaseline + " (default)"
	}
	return b
}

// Excluded is a run of a pitch that is not part of its result, and why.
type Excluded struct {
	Run   Run    `json:"run"`
	Field string `json:"field,omitempty"` // the mismatching field of the measurement; "" when it matched but does not count
	Why   string `json:"why"`
}

// PitchResult is a pitch's result under its round's measurement: every
// matching run that counts (succeeded, or suspect and accepted by an admin)
// pooled, and the runs left out with the reason. A new run adds to the pool
// and never replaces an earlier one, so nobody can re-roll a result.
type PitchResult struct {
	Measurement Measurement `json:"measurement"`
	// Speedup is the pooled result: the geometric mean of the counted runs'
	// geomean speedups with a 95% interval across runs (Student t on their
	// logs) for n >= 2, or the one run's own interval for n = 1.
	Speedup Interval `json:"speedup"`
	N       int      `json:"n"`
	// Run-to-run variation: the standard deviation of the runs' log
	// speedups (about the coefficient of variation), and their range.
	SDLog    float64 `json:"sd_log,omitempty"`
	Min      float64 `json:"min,omitempty"`
	Max      float64 `json:"max,omitempty"`
	Imported bool    `json:"imported"` // some counted run was imported
	Counted  []Run   `json:"counted"`  // newest first
	// NotCounted are runs of the round's measurement that do not count
	// (queued, failed, incorrect, suspect and not accepted, no speedup).
	NotCounted []Excluded `json:"not_counted"`
	// Other are "not this round's measurement": another problem, suite,
	// baseline or device, or an import where imports do not count.
	Other []Excluded `json:"other_measurement"`
}

// Has reports whether the pitch has a result.
func (p *PitchResult) Has() bool { return p.N > 0 }

// Latest is the newest counted run (the one deal terms read per-shape
// figures from), nil when none.
func (p *PitchResult) Latest() *Run {
	if len(p.Counted) == 0 {
		return nil
	}
	return &p.Counted[0]
}

// CountsRun reports whether run id is part of the result.
func (p *PitchResult) CountsRun(id int64) bool {
	for i := range p.Counted {
		if p.Counted[i].ID == id {
			return true
		}
	}
	return false
}

// ResultOf applies the result rule to a pitch's runs (newest first, as
// Store.List returns them) under the round's measurement m.
func ResultOf(m Measurement, runs []Run) PitchResult {
	out := PitchResult{Measurement: m, Counted: []Run{}, NotCounted: []Excluded{}, Other: []Excluded{}}
	pin := m.firstDevice(runs)
	var speedups []float64
	for _, r := range runs {
		if field, why := m.Mismatch(&r); field != "" {
			out.Other = append(out.Other, Excluded{Run: r, Field: field, Why: "not this round's measurement: " + why})
			continue
		}
		if pin != "" && r.DeviceName != "" && !strings.EqualFold(strings.TrimSpace(r.DeviceName), pin) {
			out.Other = append(out.Other, Excluded{Run: r, Field: "device", Why: fmt.Sprintf(
				"not this round's measurement: device %q; the round names no device class, and this pitch's result was first measured on %q",
				r.DeviceName, pin)})
			continue
		}
		if !r.Counts() {
			out.NotCounted = append(out.NotCounted, Excluded{Run: r, Why: notCountedWhy(&r)})
			continue
		}
		out.Counted = append(out.Counted, r)
		speedups = append(speedups, r.Speedup.Value)
		out.Imported = out.Imported || r.Imported
	}
	p := stats.Pool(speedups)
	out.N = p.N
	switch {
	case p.N == 1:
		out.Speedup = out.Counted[0].Speedup
	case p.N > 1:
		out.Speedup = Interval{Value: p.GeoMean, Lo: p.Lo, Hi: p.Hi}
		out.SDLog, out.Min, out.Max = p.SDLog, p.Min, p.Max
	}
	return out
}

// firstDevice is the device a pitch's result is pooled on when the round
// names no device class: that of the oldest run that counts (runs are
// newest first). Pooling an H100 run with a B200 run would make a figure
// neither measured, and a run on a faster device would re-roll the result;
// the first device's is kept, as the first result is. "" when the round
// names a class (its runs are already of one kind), for a measurement that
// is not one pitch's (a caller pooling runs it has grouped by device
// itself), or when nothing counts yet.
func (m Measurement) firstDevice(runs []Run) string {
	if m.DeviceClass != "" || !m.ForPitch {
		return ""
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := &runs[i]
		if field, _ := m.Mismatch(r); field == "" && r.Counts() && r.DeviceName != "" {
			return strings.TrimSpace(r.DeviceName)
		}
	}
	return ""
}

func notCountedWhy(r *Run) string {
	switch r.Status {
	case StatusQueued, StatusRunning:
		return "not finished (" + string(r.Status) + ")"
	case StatusSuspect:
		return "suspect and not accepted by an admin: " + r.Reason
	case StatusIncorrect:
		return r.Reason
	case StatusFailed, StatusCancelled:
		return string(r.Status) + ": " + r.Reason
	}
	return "no speedup (nothing was paired with a baseline)"
}

// TermsRun is what deal terms are evaluated on for a pitch's result: its
// newest counted run (latest, read with its shapes) carrying the pooled
// speedup, with the other counted runs as its repeats, so that a term
// "geomean >= 1.4x" reads the pooled figure and "variation < 5%" the spread
// across the runs that count. nil when the pitch has no result.
func (p *PitchResult) TermsRun(latest *Run) (*Run, []Run) {
	if !p.Has() || latest == nil {
		return nil, nil
	}
	run := *latest
	run.Speedup = p.Speedup
	var repeats []Run
	for _, r := range p.Counted {
		if r.ID != latest.ID {
			repeats = append(repeats, r)
		}
	}
	if repeats == nil {
		repeats = []Run{} // not nil: the caller must not look for repeats elsewhere
	}
	return &run, repeats
}
