package runner

import (
	"slices"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Request asks for a run. The web layer builds it from a form, the JSON API or
// a pitch (its variant spec and its round's baseline).
type Request struct {
	Problem     string `json:"problem"`
	Suite       string `json:"suite"`    // "tests" or "benchmarks"; empty means "benchmarks"
	Variant     string `json:"variant"`  // e.g. "baseline?stages=3"
	Baseline    string `json:"baseline"` // empty means bench's default baseline; equal to Variant means an A/A run
	Device      string `json:"device"`   // one of the runner's devices
	Seed        int64  `json:"seed"`     // 0 means bench's default
	PitchID     int64  `json:"pitch_id"` // 0 when the run measures no pitch
	RequestedBy int64  `json:"-"`        // set by the web layer from the session, never from the body
}

// Catalog answers what the kernel manifest knows. The runner owns this
// interface so that it can be tested without the manifest; KernelsCatalog is
// the real one.
type Catalog interface {
	// CheckProblem returns an error saying why name is not a known problem.
	CheckProblem(name string) error
	// CheckVariant returns an error saying why spec (a variant name with
	// optional knob overrides) is not a valid variant of problem, and
	// whether spec names the reference variant (the one that checks the
	// others: the only one the CPU runs, never a timed one on a GPU).
	CheckVariant(problem, spec string) (reference bool, err error)
	// CanonicalVariant returns spec as the problem's manifest spells it
	// (defaults dropped, knobs in the kernel's order), or CheckVariant's
	// error.
	CanonicalVariant(problem, spec string) (string, error)
}

// Normalize trims the spaces around the request's text fields and fills
// defaults. Only spaces (pitches.TrimLine): a control character at an end
// stays, for Validate to refuse.
func (r *Request) Normalize() {
	r.Problem = pitches.TrimLine(r.Problem)
	r.Suite = pitches.TrimLine(r.Suite)
	r.Variant = pitches.TrimLine(r.Variant)
	r.Baseline = pitches.TrimLine(r.Baseline)
	r.Device = pitches.TrimLine(r.Device)
	if r.Suite == "" {
		r.Suite = SuiteBenchmarks
	}
}

// Validate checks the request against the catalog and the device list and
// returns a *pitches.Error with code EINVALID naming the first bad field.
// It does not normalize; call Normalize first.
func (r *Request) Validate(cat Catalog, devices []string) error {
	return r.validate(cat, devices, func(d string) bool { return d == "cpu" })
}

// validate is Validate where isCPU says which devices run bench with
// --device cpu (a remote device may: Executor.CPU).
func (r *Request) validate(cat Catalog, devices []string, isCPU func(string) bool) error {
	if r.Problem == "" {
		return pitches.Errorf(pitches.EINVALID, "problem", "a problem is required")
	}
	if err := cat.CheckProblem(r.Problem); err != nil {
		return pitches.Errorf(pitches.EINVALID, "problem", "%s", message(err))
	}
	if r.Suite != SuiteTests && r.Suite != SuiteBenchmarks {
		return pitches.Errorf(pitches.EINVALID, "suite", "unknown suite %q: use %q or %q", r.Suite, SuiteTests, SuiteBenchmarks)
	}
	if r.Variant == "" {
		return pitches.Errorf(pitches.EINVALID, "variant", "a variant is required")
	}
	// One line each: the kernel catalogue trims a spec as it resolves it,
	// so "reference\n" would otherwise run as the reference and be stored
	// as typed.
	if err := pitches.CheckLine("variant", r.Variant, pitches.MaxVariantChars); err != nil {
		return err
	}
	if err := pitches.CheckLine("baseline", r.Baseline, pitches.MaxVariantChars); err != nil {
		return err
	}
	// A submitted kernel (kernel:<hash>) is checked against its stored
	// manifest by Runner.Submit (kernel.go): the catalog knows built-ins only.
	_, _, submitted := pitches.ParseKernelVariant(r.Variant)
	varRef := false
	if !submitted {
		var err error
		if varRef, err = cat.CheckVariant(r.Problem, r.Variant); err != nil {
			return pitches.Errorf(pitches.EINVALID, "variant", "%s", message(err)).WithCause(err)
		}
	}
	baseRef := false
	if _, _, ok := pitches.ParseKernelVariant(r.Baseline); ok {
		return pitches.Errorf(pitches.EINVALID, "baseline", "the baseline must be a built-in variant (e.g. \"baseline\"); a submitted kernel is measured against it")
	}
	if r.Baseline != "" {
		var err error
		if baseRef, err = cat.CheckVariant(r.Problem, r.Baseline); err != nil {
			return pitches.Errorf(pitches.EINVALID, "baseline", "%s", message(err)).WithCause(err)
		}
	}
	if r.Device == "" {
		return pitches.Errorf(pitches.EINVALID, "device", "a device is required (one of %s)", strings.Join(devices, ", "))
	}
	if !slices.Contains(devices, r.Device) {
		if len(devices) == 0 {
			return pitches.Errorf(pitches.EINVALID, "device", "device %q does not exist: this server has no devices", r.Device)
		}
		return pitches.Errorf(pitches.EINVALID, "device", "device %q does not exist (have %s)", r.Device, strings.Join(devices, ", "))
	}
	// What `web bench` accepts per device kind, checked here so that a run
	// bench would refuse is never queued.
	if isCPU(r.Device) {
		if !varRef {
			return pitches.Errorf(pitches.EINVALID, "variant", "the cpu device runs only the reference variant (%q needs a GPU)", r.Variant)
		}
		if r.Baseline != "" && r.Baseline != r.Variant {
			return pitches.Errorf(pitches.EINVALID, "baseline", "the cpu device can pair the reference only with itself (an A/A run); %q needs a GPU", r.Baseline)
		}
	} else {
		if varRef {
			return pitches.Errorf(pitches.EINVALID, "variant", "the reference variant checks the others and is not timed on a GPU; pick \"baseline\" or a knob variant")
		}
		if baseRef {
			return pitches.Errorf(pitches.EINVALID, "baseline", "the reference variant is not a timed baseline on a GPU; use \"baseline\"")
		}
	}
	if r.Seed < 0 {
		return pitches.Errorf(pitches.EINVALID, "seed", "seed must be >= 0")
	}
	if r.PitchID < 0 {
		return pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch id must be >= 0")
	}
	return nil
}

// message is the text of err for people: the domain message when err is a
// *pitches.Error, else its Error().
func message(err error) string {
	if m := pitches.ErrorMessage(err); pitches.ErrorCode(err) != pitches.EINTERNAL {
		return m
	}
	return err.Error()
}
