package templates

// Views of the runs pages (runs list and form, run page), the measured
// results on pitch and round pages, and the calibration page. Handlers fill
// them with text already formatted, so the templates stay free of
// arithmetic.

// RunRow is one run in a list.
type RunRow struct {
	ID          int64
	Problem     string
	Suite       string
	Variant     string
	Baseline    string
	Device      string
	Status      string
	Reason      string
	Imported    bool
	PitchID     int64
	PitchTitle  string
	Created     string
	Speedup     string // "0.74x [0.70, 0.78]" or "—"
	Hidden      bool   // result withheld from this viewer (hidden-score rule)
	DeviceLabel string // "imported: B200, measured elsewhere" for imports, else "device 0" / "cpu"
}

// ProblemOption describes a problem for the runs form.
type ProblemOption struct {
	Name     string
	Variants []string
	Knobs    []KnobOption
}

// KnobOption is one declared knob with its allowed values.
type KnobOption struct {
	Key, Values, Default, Doc string
}

// RunForm is the launch form's input, kept on a refused submission.
type RunForm struct {
	Problem, Variant, Knobs, Suite, Device, Baseline, Pitch string
	Err                                                     *FormError
}

// RunsView is the runs page: recent runs with filters, and the launch form.
type RunsView struct {
	Runs      []RunRow
	Filter    map[string]string
	Enabled   bool // a runner is attached to this server
	CanLaunch bool
	Form      RunForm
	Problems  []ProblemOption
	Devices   []string
	Flash     string
	NextPage  string    // query for the next (older) page, "" when none
	Export    string    // the export links' query ("" or "?problem=…"): the filter and search, no paging
	Search    RunSearch // text, prefix, person, round, dates, sort (tracking.templ)
}

// ShapeRow is one row of a run's per-shape table.
type ShapeRow struct {
	Label       string
	Baseline    string // median, microseconds
	Variant     string
	Speedup     string
	Interval    string
	FloorFrac   string
	Correct     bool
	CorrectText string // "not reported" for imports that give no correctness
	Noise       string // relative SEM of the variant's median
	Flags       []string
	Slower      bool
}

// KV is a labelled value.
type KV struct{ K, V string }

// BuildRow describes one compiled variant of a run (variant, baseline).
type BuildRow struct {
	Role, Spec, SourceHash, Options, Knobs string
}

// ModuleRow is one module an auto variant ran: the shapes (indexes), the
// concrete variant, its cubin key (abbreviated) and its kernels' resources.
type ModuleRow struct {
	Shapes, Module, Cubin, Resources string
}

// TermRow is one deal term evaluated on a run.
type TermRow struct {
	Who  string // the shark whose vote set the term
	Text string // "geomean 0.74x, needs >= 1.4x: not met"
	Met  bool
}

// ProgressView is the latest progress of a running run.
type ProgressView struct {
	Phase, Shape, Samples, Median string
}

// RunView is the run page.
type RunView struct {
	Tracking    RunTracking // regressions raised, source hash and app build (tracking.templ)
	Run         RunRow
	Seed        string
	Started     string
	Finished    string
	RequestedBy string
	ImportNote  string
	Live        bool // queued or running: the page follows the event stream
	Progress    ProgressView
	HasResult   bool
	Hidden      bool // result withheld from this shark until they score the pitch
	Geomean     string
	Correct     bool
	CorrectText string // set when correctness was not reported (imports)
	Flags       []string
	Shapes      []ShapeRow
	Fingerprint []KV
	Builds      []BuildRow
	Modules     []ModuleRow // an auto variant's modules, per shape (empty otherwise)
	BarsSVG     string
	HistorySVG  string
	HistoryNote string
	Terms       []TermRow
	CanCancel   bool
	CanRequeue  bool
	CanAccept   bool   // a suspect run an admin may accept as a result, with a written reason
	Accepted    string // who accepted this suspect run, when and why
	AcceptErr   string
	Log         string
	Stderr      string
	Flash       string
	Err         string
}

// PredictionRow is one prediction scored against the accepted run.
type PredictionRow struct {
	Who           string
	Kind          string // "claim" or "estimate"
	Range         string
	IntervalScore string
	AbsLogError   string
	SignedLogErr  string
	Hit           bool
	Sentence      string
}

// PitchResults is the measured side of a pitch page.
type PitchResults struct {
	Enabled     bool
	Runs        []RunRow
	Hidden      bool   // results withheld: a shark who has not scored, round open
	Locked      bool   // predictions are locked: a succeeded run exists
	AcceptedID  int64  // the newest run of the result
	Accepted    string // the pooled result: "0.7355x [0.70, 0.78] over 3 runs"
	Measurement string // the round's measurement in words
	Pooled      string // how the runs pool: "3 runs: #4 1.21x, #7 1.19x, ...; run-to-run variation 1.2% (1.19x-1.23x)"
	Counted     []ExcludedRow
	NotCounted  []ExcludedRow // runs of the measurement that do not count, and why
	Other       []ExcludedRow // "not this round's measurement", and why
	Predictions []PredictionRow
	ChartSVG    string
	Terms       []TermRow
	CanRun      bool
	Devices     []string
	Baseline    string // the round's baseline the run compares against
	Problems    []string
	RunErr      *FormError
	CannotRun   string // why no run can start here (the pitch's variant needs a GPU this server lacks)
}

// ExcludedRow is a run of a pitch with what it means for the result.
type ExcludedRow struct {
	RunID int64
	Text  string
}

// RecapRow is one pitch with a measured result on the round page.
type RecapRow struct {
	PitchID   int64
	Title     string
	Claim     string
	Estimates string
	Measured  string
	Sentence  string // "predicted 1.5-1.8x, measured 0.74x: 26% slower"
	Terms     string // "deal terms: 1 of 2 met" or ""
	RunID     int64
	Source    string // "device 0" or "imported: B200, measured elsewhere"
}

// RecapView is the round page's recap of predictions against results.
type RecapView struct {
	Rows     []RecapRow
	Hidden   int    // pitches with results withheld from this viewer
	ChartSVG string // claimed range against measured, per pitch (charts.Recap)
}

// CalRow is one predictor's calibration.
type CalRow struct {
	Name        string
	WhoID       int64 // the predictor, for the drill-down link (/calibration?who=ID)
	N           int
	Hits        int
	Coverage    string // "25% (nominal 80%)"
	MeanSigned  string
	MeanRelIS   string // mean relative interval score; "—" when no peers
	MeanIS      string
	ScatterSVG  string
	Predictions []PredictionRow // the latest first; on the overview at most CalibrationShown of N
}

// CalibrationShown is how many of a predictor's predictions the calibration
// overview lists (the latest); the drill-down lists them all.
const CalibrationShown = 10

// More is how many of the row's predictions the page leaves to the
// drill-down.
func (r CalRow) More() int { return r.N - len(r.Predictions) }

// CalGroup is the sharks' or the contestants' table.
type CalGroup struct {
	Title string
	Rows  []CalRow
	SVG   string
	Trust string // whose estimates to trust, in a sentence (pitches.TrustSentence)
}

// CalibrationView is the calibration page.
type CalibrationView struct {
	Who     string // the drill-down's predictor ("": the overview of everyone)
	Groups  []CalGroup
	Pitches int // pitches with a measured result counted
	Hidden  int // pitches left out for this viewer (hidden-score rule)
}

// uniqueVariants is every problem's variant names once each, in first-seen
// order: most problems share baseline and reference, and the suggestions
// list should not repeat them.
func uniqueVariants(problems []ProblemOption) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range problems {
		for _, name := range p.Variants {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}
