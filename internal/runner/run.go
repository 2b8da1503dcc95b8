package runner

import (
	"encoding/json"
	"time"
)

// Status is where a run is in its life. It moves one way only:
// queued -> running -> succeeded | incorrect | suspect | failed | cancelled,
// and a queued run may be cancelled or failed before it starts. A finished
// run is never restarted; Requeue makes a new run with the same parameters.
//
// Three statuses keep a result document and its shapes (Measured): succeeded
// (bench exited 0, every shape correct, nothing suspect), incorrect (some
// shape failed a correctness check; Reason names the shape and the check)
// and suspect (every shape correct but a figure is implausible: below the
// speed-of-light floor, or over 10x the baseline; Reason says which). Only a
// succeeded run, or a suspect one an admin accepted with a written reason,
// can be a pitch's result (PitchResult).
type Status string

const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusIncorrect Status = "incorrect"
	StatusSuspect   Status = "suspect"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	// StatusMeasured is never stored: it is how a measured run (succeeded,
	// incorrect or suspect) shows to a viewer from whom its result is hidden
	// (blind judging), since the outcome itself says how the kernel did.
	StatusMeasured Status = "measured"
)

// Statuses lists every status, in the order of a run's life.
var Statuses = []Status{StatusQueued, StatusRunning, StatusSucceeded, StatusIncorrect, StatusSuspect, StatusFailed, StatusCancelled}

// Finished reports whether s is a terminal status.
func (s Status) Finished() bool {
	return s != StatusQueued && s != StatusRunning
}

// Measured reports whether a run of status s holds a result document: the
// measurement finished, whatever it found.
func (s Status) Measured() bool {
	return s == StatusSucceeded || s == StatusIncorrect || s == StatusSuspect
}

// Retryable reports whether a run of status s may be re-queued: it did not
// finish its measurement (failed or cancelled), so a repeat may. A run that
// measured something (succeeded, incorrect, suspect) has its answer;
// repeating it until a figure looks better would be shopping for one.
func (s Status) Retryable() bool {
	return s == StatusFailed || s == StatusCancelled
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, x := range Statuses {
		if s == x {
			return true
		}
	}
	return false
}

// ReasonInterrupted is the failure reason of a run that was left "running" by
// a server that died; such runs can be re-queued.
const ReasonInterrupted = "interrupted"

// Suites that `web bench --suite` accepts.
const (
	SuiteTests      = "tests"
	SuiteBenchmarks = "benchmarks"
)

// Run is one measurement of a kernel variant against a baseline on one device,
// or an imported measurement made elsewhere (Imported, with Device holding a
// label such as "B200").
type Run struct {
	ID          int64     `json:"id"`
	Problem     string    `json:"problem"`               // e.g. "nvfp4_group_gemm"
	Suite       string    `json:"suite"`                 // "tests" or "benchmarks"
	Variant     string    `json:"variant"`               // variant spec as requested, knob overrides included: "baseline?stages=3"
	Baseline    string    `json:"baseline"`              // baseline variant spec; empty means bench's default
	Device      string    `json:"device"`                // "0", "1", ... or "cpu"; a free label for imported runs
	Seed        int64     `json:"seed"`                  // input seed passed to bench; 0 means bench's default
	RequestedBy int64     `json:"requested_by,omitzero"` // user id; 0 when the system asked
	PitchID     int64     `json:"pitch_id,omitzero"`     // the pitch this run measures; 0 when none
	RequeueOf   int64     `json:"requeue_of,omitzero"`   // the run this one repeats; 0 when none
	Imported    bool      `json:"imported"`              // measured elsewhere and imported
	Status      Status    `json:"status"`
	Reason      string    `json:"reason,omitempty"` // why a run failed, was cancelled, is incorrect or suspect; empty otherwise
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`  // zero until running
	FinishedAt  time.Time `json:"finished_at,omitzero"` // zero until finished

	// DeviceName is the device model the result was measured on: the
	// fingerprint's device_model of a bench document, or an import's label.
	// The round's device class is matched against it. Empty until measured.
	DeviceName string `json:"device_name,omitempty"`

	// An admin's acceptance of a suspect run as a pitch's result, with the
	// written reason (Accept). Zero unless accepted.
	AcceptedBy   int64     `json:"accepted_by,omitzero"`
	AcceptedAt   time.Time `json:"accepted_at,omitzero"`
	AcceptReason string    `json:"accept_reason,omitempty"`

	// Note is an imported run's note: where the numbers come from.
	Note string `json:"note,omitempty"`

	// Summary of the result; valid when HasResult.
	HasResult bool     `json:"has_result"`
	Speedup   Interval `json:"speedup"` // geometric mean of the per-shape speedups, with its interval when known
	Correct   bool     `json:"correct"` // every shape passed the correctness check
	Flags     []string `json:"flags"`   // flags of the whole run, e.g. "throttled", "below_floor", "incorrect"

	// Filled by Get only (List leaves them empty to stay cheap).
	Result json.RawMessage `json:"result,omitempty"` // the full result document of `web bench`, or the import document
	Shapes []Shape         `json:"shapes,omitempty"`
	Log    string          `json:"log,omitempty"`    // stdout lines that were not JSON (last 64 KiB)
	Stderr string          `json:"stderr,omitempty"` // the child's stderr (last 64 KiB)
}

// Accepted reports whether r is a suspect run an admin accepted.
func (r *Run) Accepted() bool { return r.Status == StatusSuspect && !r.AcceptedAt.IsZero() }

// Counts reports whether r may count towards a pitch's result: succeeded, or
// suspect and accepted, with a speedup.
func (r *Run) Counts() bool {
	return (r.Status == StatusSucceeded || r.Accepted()) && r.Speedup.Value > 0
}

// Interval is an estimate with an optional 95% interval. Lo and Hi are zero
// when no interval is known (an import without raw samples).
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo,omitempty"`
	Hi    float64 `json:"hi,omitempty"`
}

// HasInterval reports whether the interval bounds are known.
func (iv Interval) HasInterval() bool { return iv.Lo > 0 && iv.Hi > 0 }

// Shape is one benchmark shape of a run: the per-shape row stored next to the
// result document so history pages can query it without parsing JSON.
type Shape struct {
	Index int    `json:"index"` // 0-based position in the suite
	Label string `json:"label"` // e.g. "g=8 N=4096 K=7168"

	BaselineMedianUs float64 `json:"baseline_median_us"` // zero when the run has no baseline timing
	BaselineSEMUs    float64 `json:"baseline_sem_us"`
	BaselineSamples  int     `json:"baseline_samples"`
	VariantMedianUs  float64 `json:"variant_median_us"`
	VariantSEMUs     float64 `json:"variant_sem_us"`
	VariantSamples   int     `json:"variant_samples"`

	FloorUs         float64 `json:"floor_us"`          // speed-of-light floor; zero when unknown
	FractionOfFloor float64 `json:"fraction_of_floor"` // FloorUs / VariantMedianUs; zero when unknown

	Speedup Interval `json:"speedup"` // baseline/variant for this shape

	Correct   bool    `json:"correct"`
	MaxAbsErr float64 `json:"max_abs_err"`
	MaxRelErr float64 `json:"max_rel_err"`
	RelL2Err  float64 `json:"rel_l2_err"`

	Flags []string `json:"flags"`
}

// Result is what a finished measurement stores, in one transaction: the
// document as the child wrote it, the run summary, and the per-shape rows.
type Result struct {
	Doc        json.RawMessage
	Speedup    Interval
	Correct    bool
	Flags      []string
	Shapes     []Shape
	DeviceName string // the fingerprint's device model, or the import's label

	// What the document says beyond the figures (schema 2's summary; empty
	// for schema 1): the failed checks and the reasons the result is suspect.
	Failures []Failure
	Suspect  []string
	// Status is the document's own status ("ok", "incorrect", "suspect",
	// "error"); empty for an import of bare times.
	Status string

	failedChecks []Failure // per-shape failed checks, when Failures is empty (schema 1)
}

// Failure is one failed correctness check (summary.failures of a bench
// result document, schema 2).
type Failure struct {
	Shape  int    `json:"shape"`
	Role   string `json:"role"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Finish carries what a finished child left behind, stored with its status.
type Finish struct {
	Reason string // failure or cancellation reason; empty on success
	Log    string // stdout lines that were not JSON (last 64 KiB)
	Stderr string // stderr (last 64 KiB)
}

// Filter selects runs for List. Zero fields do not filter.
type Filter struct {
	Problem string
	// Variant is a spec: runs of it with their knobs in any order
	// (pitches.SameVariant). Runner.List looks a built-in kernel's up in
	// the catalogue's spelling (CanonicalLookup).
	Variant string
	// VariantAsTyped is another spelling of Variant whose runs match too
	// (knobs in any order): the spec a lookup was given where Variant is
	// the catalogue's spelling of it, so that runs stored as typed before
	// runs were stored in that spelling are still found by it
	// ("baseline?stages=1" as well as "baseline"). "": none.
	VariantAsTyped string
	Baseline       string
	Device         string
	Suite          string
	PitchID        int64
	Status         Status
	Imported       *bool
	BeforeID       int64 // paging: only runs with ID < BeforeID
	Limit          int   // default 100, at most 1000
	// WithShapes fills Shapes of every listed run (history pages and exports).
	WithShapes bool
}
