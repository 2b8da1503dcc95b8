// Package result is the document `web bench` writes and the app stores: its
// schema, its validator, its Markdown report and when two results compare.
// It is pure Go, apart from the measurement (internal/bench) and the GPU
// (internal/engine, internal/gpu), so that storage, the runner and the web
// layer read results without linking cgo.
package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// SchemaVersion is the version of the result document. Bump it on any
// change that an old reader would misread; docs/bench-result.md documents it.
// Version 2 added the timing guard (protocol.guarded, guard_seed,
// check_rate; shapes[].guard; checks' sample, set and detail), the suspect
// status and summary.failures and summary.suspect. Version 3 added each
// launch plan's module and cubin_key: which compiled module ran the shape
// (for a variant with auto tile sizes, one of several). A field tagged
// since:"N" is required only in documents of version N or later; Validate
// reads versions 1 to 3.
const SchemaVersion = 3

// MinSchemaVersion is the oldest document version Validate accepts (imports
// of results measured before the guard existed).
const MinSchemaVersion = 1

// Result is the document `web bench` writes: everything rule 10 of
// measurement.md asks to be stored, for one problem on one device. The app
// parses it later; docs/bench-result.md documents every field and Validate
// enforces that description.
type Result struct {
	SchemaVersion int         `json:"schema_version"`
	Tool          string      `json:"tool"`
	Command       []string    `json:"command"`
	StartedAt     time.Time   `json:"started_at"`
	FinishedAt    time.Time   `json:"finished_at"`
	WallSeconds   float64     `json:"wall_seconds"`
	Status        string      `json:"status"` // StatusOK, StatusIncorrect, StatusSuspect, StatusError
	ExitCode      int         `json:"exit_code"`
	Error         string      `json:"error"`
	Problem       string      `json:"problem"`
	Suite         string      `json:"suite"` // "tests", "benchmarks" or "file"
	ShapesFile    string      `json:"shapes_file"`
	Mode          string      `json:"mode"` // "gpu" or "cpu"
	AA            bool        `json:"aa"`
	Seed          uint64      `json:"seed"`
	Device        Device      `json:"device"`
	Fingerprint   Fingerprint `json:"fingerprint"`
	Ceilings      Ceilings    `json:"ceilings"`
	Protocol      Protocol    `json:"protocol"`
	Variant       Build       `json:"variant"`
	Baseline      *Build      `json:"baseline"`  // null when nothing is paired (CPU mode without --aa)
	Reference     *Build      `json:"reference"` // the kernel that computes the correctness reference; null in CPU mode
	Shapes        []Shape     `json:"shapes"`
	Summary       Summary     `json:"summary"`
}

// Statuses of a result.
const (
	StatusOK        = "ok"        // every shape correct, every measurement finished
	StatusIncorrect = "incorrect" // ran, but some shape failed a correctness check
	StatusSuspect   = "suspect"   // every shape correct, but a figure is implausible or the guard was off (summary.suspect says which)
	StatusError     = "error"     // could not finish (device, compile, CUDA error, timeout)
)

// Device is the fingerprint of the device the run used (rule 10).
type Device struct {
	Kind              string  `json:"kind"` // "gpu" or "cpu"
	Ordinal           int     `json:"ordinal"`
	Name              string  `json:"name"`
	UUID              string  `json:"uuid"`
	ComputeCapability string  `json:"compute_capability"` // "9.0"; "" on the CPU
	Arch              string  `json:"arch"`               // "sm_90a"; "cpu" on the CPU
	SMs               int     `json:"sms"`                // multiprocessors; CPU threads in CPU mode
	L2Bytes           int64   `json:"l2_bytes"`
	MemBytes          int64   `json:"mem_bytes"`
	DriverVersion     string  `json:"driver_version"`
	CUDADriverVersion int     `json:"cuda_driver_version"`
	NVRTCVersion      string  `json:"nvrtc_version"`
	MaxClockSMMHz     int     `json:"max_clock_sm_mhz"`
	PowerLimitW       float64 `json:"power_limit_w"`
	GOOS              string  `json:"goos"`
	GOARCH            string  `json:"goarch"`
}

// Fingerprint is the part of Device that decides whether two results can be
// compared: the device model, the driver and the NVRTC version.
type Fingerprint struct {
	DeviceModel   string `json:"device_model"`
	DriverVersion string `json:"driver_version"`
	NVRTCVersion  string `json:"nvrtc_version"`
	Key           string `json:"key"` // hex sha256 of the three fields, first 16 characters
}

// NewFingerprint derives the fingerprint of a device.
func NewFingerprint(d Device) Fingerprint {
	f := Fingerprint{DeviceModel: d.Name, DriverVersion: d.DriverVersion, NVRTCVersion: d.NVRTCVersion}
	f.Key = fingerprintKey(f)
	return f
}

func fingerprintKey(f Fingerprint) string {
	h := sha256.Sum256([]byte(f.DeviceModel + "\x00" + f.DriverVersion + "\x00" + f.NVRTCVersion))
	return hex.EncodeToString(h[:])[:16]
}

// ReadHead reads a result document's device name and fingerprint and
// stops there: both come before the shapes, whose raw samples are most of
// a document's bytes (~110 KB of 113 on an H200 group shape), and a
// history or a comparison reads hundreds of documents for these two
// fields (30x faster than decoding the whole document). ok is false for
// anything that is not a document with a fingerprint (an import of bare
// times, no result).
func ReadHead(doc []byte) (deviceName string, fp Fingerprint, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", Fingerprint{}, false
	}
	var gotFP, gotName bool
	for dec.More() && !(gotFP && gotName) {
		t, err := dec.Token()
		if err != nil {
			return "", Fingerprint{}, false
		}
		switch t {
		case "fingerprint":
			if dec.Decode(&fp) != nil {
				return "", Fingerprint{}, false
			}
			gotFP = true
		case "device":
			var d struct {
				Name string `json:"name"`
			}
			if dec.Decode(&d) != nil {
				return "", Fingerprint{}, false
			}
			deviceName, gotName = d.Name, true
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", Fingerprint{}, false
			}
		}
	}
	return deviceName, fp, gotFP && fp.Key != ""
}

// Comparable says whether two results were measured under conditions that
// make their times comparable (measurement.md rule 10): the same device
// model, driver version and NVRTC version. The reason names the first
// difference, or is empty when they are comparable.
func Comparable(a, b *Result) (bool, string) {
	if a == nil || b == nil {
		return false, "a result is missing"
	}
	fa, fb := a.Fingerprint, b.Fingerprint
	switch {
	case fa.DeviceModel != fb.DeviceModel:
		return false, fmt.Sprintf("device model differs: %q vs %q", fa.DeviceModel, fb.DeviceModel)
	case fa.DriverVersion != fb.DriverVersion:
		return false, fmt.Sprintf("driver version differs: %q vs %q", fa.DriverVersion, fb.DriverVersion)
	case fa.NVRTCVersion != fb.NVRTCVersion:
		return false, fmt.Sprintf("NVRTC version differs: %q vs %q", fa.NVRTCVersion, fb.NVRTCVersion)
	}
	return true, ""
}

// Ceilings are the device rates the speed-of-light floor is computed from.
type Ceilings struct {
	TensorFLOPS    float64 `json:"tensor_flops"`      // FLOP/s on the fp16 tensor path
	MemBytesPerSec float64 `json:"mem_bytes_per_sec"` // device memory bandwidth
	Source         string  `json:"source"`            // where the numbers come from
}

// Protocol records the rules the run followed, so a reader can tell two
// protocols apart without reading the code that produced them.
type Protocol struct {
	StopRule          StopRule `json:"stop_rule"`
	WarmupMinLaunches int      `json:"warmup_min_launches"`
	WarmupMinSeconds  float64  `json:"warmup_min_seconds"`
	WarmupMaxSeconds  float64  `json:"warmup_max_seconds"` // cap on the warm-up; 0 = none
	CacheMode         string   `json:"cache_mode"`         // "cold" (flush before every sample) or "warm"
	FlushBytes        int64    `json:"flush_bytes"`        // bytes written before every sample; 0 when warm
	MinRounds         int      `json:"min_rounds"`         // paired rounds at least
	BootstrapSamples  int      `json:"bootstrap_resamples"`
	ConfidenceLevel   float64  `json:"confidence_level"`
	MinEffect         float64  `json:"min_effect"`      // smallest effect called faster/slower (0.01)
	SeedsPerShape     int      `json:"seeds_per_shape"` // fresh input sets per shape: each checked, all rotated in timing
	Timer             string   `json:"timer"`           // "cuda_events", "cuda_events_gated" (the stream held until the sample is enqueued) or "wall_clock"
	// The timing guard (guard.go): off only with --unguarded.
	Guarded   bool   `json:"guarded" since:"2"`
	GuardSeed uint64 `json:"guard_seed" since:"2"` // seeds the checked samples, poison and content changes; drawn per run
	CheckRate int    `json:"check_rate" since:"2"` // a timed sample is checked with probability 1/check_rate (0: the default, 8)
}

// StopRule is stats.StopRule in the document's units.
type StopRule struct {
	MinSamples    int     `json:"min_samples"`
	MinSeconds    float64 `json:"min_seconds"`
	MaxRelSEM     float64 `json:"max_rel_sem"`
	MaxSeconds    float64 `json:"max_seconds"`
	MaxSamples    int     `json:"max_samples"`
	MaxRunSeconds float64 `json:"max_run_seconds"` // --max-time: the whole run's wall-clock cap
}

// Build records how one variant was compiled (rule 10: source hash, compile
// options, per-kernel resources).
type Build struct {
	Role           string            `json:"role"` // "variant", "baseline" or "reference"
	Spec           string            `json:"spec"` // as given, e.g. "baseline?stages=3"
	Name           string            `json:"name"`
	Title          string            `json:"title"`
	SourceFile     string            `json:"source_file"`
	SourceHash     string            `json:"source_hash"`
	Knobs          map[string]string `json:"knobs"` // compile-time defines and launch knobs
	Arch           string            `json:"arch"`
	CompileOptions []string          `json:"compile_options"`
	CubinKey       string            `json:"cubin_key"`
	CacheHit       bool              `json:"cache_hit"`
	CompileSeconds float64           `json:"compile_seconds"`
	Kernels        []KernelAttrs     `json:"kernels"`
}

// KernelAttrs are one kernel's resources as the loaded module reports them.
type KernelAttrs struct {
	Name         string `json:"name"`
	Registers    int    `json:"registers"`
	SharedStatic int    `json:"shared_static_bytes"`
	LocalBytes   int    `json:"local_bytes"` // stack frame and spills
	MaxThreads   int    `json:"max_threads"`
}

// Shape is one shape's measurement.
type Shape struct {
	Index            int          `json:"index"`
	M                []int        `json:"m"`
	N                int          `json:"n"`
	K                int          `json:"k"`
	FLOPs            float64      `json:"flops"`
	MinBytes         float64      `json:"min_bytes"`
	FloorNs          float64      `json:"floor_ns"`
	FloorBound       string       `json:"floor_bound"` // "compute" or "memory"
	ATol             float64      `json:"atol"`
	RTol             float64      `json:"rtol"`
	Seeds            []uint64     `json:"seeds"`      // one input set per seed, each checked, all rotated in timing
	InputSets        int          `json:"input_sets"` // input sets rotated in timing: round r runs set r mod input_sets
	ReferenceChecked bool         `json:"reference_checked_against_cpu"`
	Checks           []Check      `json:"checks"`
	Correct          bool         `json:"correct"`           // the variant passed every check
	BaselineCorrect  *bool        `json:"baseline_correct"`  // null when nothing is paired
	Launch           []LaunchPlan `json:"launch"`            // per role: the launch configuration
	Variant          *Measurement `json:"variant_timing"`    // null when not timed
	Baseline         *Measurement `json:"baseline_timing"`   // null when nothing is paired or not timed
	Pairing          *Pairing     `json:"pairing"`           // null when nothing is paired or not timed
	FractionOfFloor  float64      `json:"fraction_of_floor"` // floor / variant median; 0 when not timed
	TelemetryBefore  *Telemetry   `json:"telemetry_before"`  // null where NVML is absent (CPU)
	TelemetryAfter   *Telemetry   `json:"telemetry_after"`
	Flags            []string     `json:"flags"`
	Skipped          string       `json:"skipped"`         // why timing was skipped; "" when timed
	Guard            *ShapeGuard  `json:"guard" since:"2"` // null when the shape was not timed
}

// ShapeGuard records what the timing guard did on one shape, so that a run
// can be audited and replayed (with the protocol's guard_seed).
type ShapeGuard struct {
	// CheckedSamples lists, per role (variant, then baseline), the indexes
	// of the timed samples whose output was checked right after the timer.
	CheckedSamples [][]int `json:"checked_samples"`
	// ContentChanges counts the executions that ran on changed inputs.
	ContentChanges int `json:"content_changes"`
	// MoveRound is the round before which every input set moved to fresh
	// allocations; -1 when the timing ended before it.
	MoveRound int `json:"move_round"`
	// FreshSet is the input set that then also got new inputs, drawn from
	// FreshSeed; -1 with MoveRound.
	FreshSet  int    `json:"fresh_set"`
	FreshSeed uint64 `json:"fresh_seed"`
}

// Check is one correctness check (rule 1).
type Check struct {
	Role         string   `json:"role"`  // "variant", "baseline" or "reference"
	Phase        string   `json:"phase"` // "fresh", "last_timed" or "reference_vs_cpu"
	Seed         uint64   `json:"seed"`
	Elements     int      `json:"elements"`
	Mismatches   int      `json:"mismatches"`
	NaNs         int      `json:"nans"`
	MaxAbsErr    *float64 `json:"max_abs_err"` // null when not finite (see nans)
	MaxRelErr    *float64 `json:"max_rel_err"`
	RelL2Err     *float64 `json:"rel_l2_err"`
	ATol         float64  `json:"atol"`
	RTol         float64  `json:"rtol"`
	InputsIntact bool     `json:"inputs_intact"` // input hash unchanged by the launch
	InputHash    string   `json:"input_hash"`
	Pass         bool     `json:"pass"`
	Sample       int      `json:"sample" since:"2"` // the timed sample checked (timed_sample, work_after_timer); -1 otherwise
	Set          int      `json:"set" since:"2"`    // its input set; -1 when not a timed check
	Detail       string   `json:"detail" since:"2"` // what failed, in words; "" when passed
}

// Failure names one failed check: the shape, the role and the check
// (a check phase), with what was wrong.
type Failure struct {
	Shape  int    `json:"shape"`
	Role   string `json:"role"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// LaunchPlan is a role's launch configuration on one shape.
type LaunchPlan struct {
	Role     string   `json:"role"`
	Mode     string   `json:"mode"` // sequential, streams, graph, grouped; "cpu" in CPU mode
	Streams  int      `json:"streams"`
	Launches []Launch `json:"launches"`
	// Module is the concrete variant whose module ran the launches: the
	// build's own name, or for auto tile sizes the candidate the shape
	// resolved to (its kernels' resources are the build's kernels named
	// "<module> <entry>"); CubinKey is that module's cache key. Both ""
	// in CPU mode and where the module could not be named.
	Module   string `json:"module" since:"3"`
	CubinKey string `json:"cubin_key" since:"3"`
}

// Launch is one kernel launch of a plan.
type Launch struct {
	Kernel      string    `json:"kernel"`
	Grid        [3]uint32 `json:"grid"`
	Block       [3]uint32 `json:"block"`
	SharedBytes uint32    `json:"shared_bytes"`
	Group       int       `json:"group"` // -1: all groups
	Stream      int       `json:"stream"`
}

// Measurement is one role's timing on one shape (rules 2-5 and 10).
type Measurement struct {
	Role            string    `json:"role"`
	WarmupLaunches  int       `json:"warmup_launches"`
	WarmupSeconds   float64   `json:"warmup_seconds"`
	SamplesNs       []float64 `json:"samples_ns"`
	Stats           Stats     `json:"stats"`
	MeasuredSeconds float64   `json:"measured_seconds"` // sum of the samples
	StopReason      string    `json:"stop_reason"`
}

// Stats summarises samples, in nanoseconds (RelSEM is a fraction).
type Stats struct {
	N        int     `json:"n"`
	MedianNs float64 `json:"median_ns"`
	MeanNs   float64 `json:"mean_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	StddevNs float64 `json:"stddev_ns"`
	SEMNs    float64 `json:"sem_ns"`
	RelSEM   float64 `json:"rel_sem"`
}

// Pairing is the paired, interleaved comparison on one shape (rule 7).
type Pairing struct {
	Rounds    int      `json:"rounds"`
	Order     []string `json:"order"`     // per round: "AB" (variant first) or "BA"
	Sets      []int    `json:"sets"`      // per round: the input set both roles ran
	Bootstrap string   `json:"bootstrap"` // how the interval resamples: BootstrapMethod
	Speedup   Interval `json:"speedup"`
	Verdict   string   `json:"verdict"` // "faster", "slower" or "no clear difference"
}

// Interval is a speedup (baseline time / variant time) with its bootstrap interval.
type Interval struct {
	Point float64 `json:"point"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Level float64 `json:"level"`
}

// Telemetry is one NVML reading (rule 6).
type Telemetry struct {
	At                time.Time `json:"at"`
	SMClockMHz        int       `json:"sm_clock_mhz"`
	MemClockMHz       int       `json:"mem_clock_mhz"`
	TempC             int       `json:"temp_c"`
	PowerW            float64   `json:"power_w"`
	PowerLimitW       float64   `json:"power_limit_w"`
	ClockEventReasons uint64    `json:"clock_event_reasons"`
	Flags             []string  `json:"flags"`
}

// Summary aggregates across shapes (rule 9).
type Summary struct {
	Shapes               int       `json:"shapes"`
	Correct              int       `json:"correct"`
	Timed                int       `json:"timed"`
	AllCorrect           bool      `json:"all_correct"`
	GeomeanMedianNs      float64   `json:"geomean_median_ns"`          // variant, over timed shapes
	GeomeanBaselineNs    *float64  `json:"geomean_baseline_median_ns"` // null when nothing is paired
	GeomeanFloorNs       float64   `json:"geomean_floor_ns"`
	GeomeanFractionFloor float64   `json:"geomean_fraction_of_floor"`
	GeomeanSpeedup       *float64  `json:"geomean_speedup"` // null when nothing is paired
	FastP                []FastP   `json:"fast_p"`          // empty when nothing is paired
	Verdicts             Verdicts  `json:"verdicts"`
	Flags                []string  `json:"flags"`
	ShapeSpeedups        []float64 `json:"shape_speedups"`     // per shape; 0 for shapes not timed
	Failures             []Failure `json:"failures" since:"2"` // every failed check; empty when none
	Suspect              []string  `json:"suspect" since:"2"`  // why the result is suspect; empty when it is not
}

// FastP is KernelBench's fast_p: the share of shapes that are correct and
// faster than p times the baseline; incorrect shapes count as failures.
type FastP struct {
	P     float64 `json:"p"`
	Value float64 `json:"value"`
}

// Verdicts counts the per-shape verdicts.
type Verdicts struct {
	Faster   int `json:"faster"`
	Slower   int `json:"slower"`
	NoChange int `json:"no_clear_difference"`
}

// Exit codes of `web bench`.
const (
	ExitOK          = 0 // every shape correct, measured
	ExitIncorrect   = 1 // ran, but a kernel failed a correctness check on some shape
	ExitUsage       = 2 // usage or invalid input (flags, problem, variant, knob, shape)
	ExitCouldNotRun = 3 // device unavailable, compile error, CUDA error, timeout
	ExitSuspect     = 4 // every shape correct, but a figure is implausible (below the floor, over 10x) or the guard was off
)

// Roles of the things a run executes on one shape.
const (
	RoleVariant   = "variant"
	RoleBaseline  = "baseline"
	RoleReference = "reference"
)

// Phases of a correctness check.
const (
	PhaseFresh     = "fresh"            // fresh inputs, output poisoned before the launch
	PhaseLastTimed = "last_timed"       // the output left by the last timed launch
	PhaseRefVsCPU  = "reference_vs_cpu" // the GPU reference against the CPU reference
)

// Phases of the checks that guard timing against kernels that game it.
const (
	// PhaseTimedSample checks the output of a timed launch, read right
	// after the timer's stop event.
	PhaseTimedSample = "timed_sample"
	// PhaseAfterTimer fails a timed launch whose work was still running
	// when the timer's stop event completed.
	PhaseAfterTimer = "work_after_timer"
	// PhaseInputsAfter compares the inputs after timing, with every content
	// change undone, with the inputs as loaded.
	PhaseInputsAfter = "inputs_after_timing"
)
