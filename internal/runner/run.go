package runner

import (
	"encoding/json"
	"time"
)

// Status is where a run is in its life. It moves one way only:
// queued -> running -> succeeded | failed | cancelled, and a queued run may be
// cancelled or failed before it starts. A finished run is never restarted;
// Requeue makes a new run with the same parameters.
type Status string

const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Finished reports whether s is a terminal status.
func (s Status) Finished() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
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
	ID          int64
	Problem     string // e.g. "nvfp4_group_gemm"
	Suite       string // "tests" or "benchmarks"
	Variant     string // variant spec as requested, knob overrides included: "baseline?stages=3"
	Baseline    string // baseline variant spec; empty means bench's default
	Device      string // "0", "1", ... or "cpu"; a free label for imported runs
	Seed        int64  // input seed passed to bench; 0 means bench's default
	RequestedBy int64  // user id; 0 when the system asked
	PitchID     int64  // the pitch this run measures; 0 when none
	RequeueOf   int64  // the run this one repeats; 0 when none
	Imported    bool   // measured elsewhere and imported
	Status      Status
	Reason      string // why a run failed or was cancelled; empty otherwise
	CreatedAt   time.Time
	StartedAt   time.Time // zero until running
	FinishedAt  time.Time // zero until finished

	// Summary of the result; valid when HasResult.
	HasResult bool
	Speedup   Interval // geometric mean of the per-shape speedups, with its interval when known
	Correct   bool     // every shape passed the correctness check
	Flags     []string // flags of the whole run, e.g. "throttled", "below_floor", "incorrect"

	// Filled by Get only (List leaves them empty to stay cheap).
	Result json.RawMessage // the full result document of `web bench`, or the import document
	Shapes []Shape
	Log    string // stdout lines that were not JSON (last 64 KiB)
	Stderr string // the child's stderr (last 64 KiB)
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
	Index int    // 0-based position in the suite
	Label string // e.g. "g=8 N=4096 K=7168"

	BaselineMedianUs float64 // zero when the run has no baseline timing
	BaselineSEMUs    float64
	BaselineSamples  int
	VariantMedianUs  float64
	VariantSEMUs     float64
	VariantSamples   int

	FloorUs         float64 // speed-of-light floor; zero when unknown
	FractionOfFloor float64 // FloorUs / VariantMedianUs; zero when unknown

	Speedup Interval // baseline/variant for this shape

	Correct   bool
	MaxAbsErr float64
	MaxRelErr float64
	RelL2Err  float64

	Flags []string
}

// Result is what a finished measurement stores, in one transaction: the
// document as the child wrote it, the run summary, and the per-shape rows.
type Result struct {
	Doc     json.RawMessage
	Speedup Interval
	Correct bool
	Flags   []string
	Shapes  []Shape
}

// Finish carries what a finished child left behind, stored with its status.
type Finish struct {
	Reason string // failure or cancellation reason; empty on success
	Log    string // stdout lines that were not JSON (last 64 KiB)
	Stderr string // stderr (last 64 KiB)
}

// Filter selects runs for List. Zero fields do not filter.
type Filter struct {
	Problem  string
	Variant  string // exact spec
	Baseline string
	Device   string
	Suite    string
	PitchID  int64
	Status   Status
	Imported *bool
	BeforeID int64 // paging: only runs with ID < BeforeID
	Limit    int   // default 100, at most 1000
	// WithShapes fills Shapes of every listed run (history pages and exports).
	WithShapes bool
}
