package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/pitchtank/pitchtank/internal/jsonpath"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/stats"
)

// ImportRequest is a measurement made elsewhere (another GPU, another
// harness), stored as a run marked imported. docs/runs-import.md documents
// the JSON forms: bare times per shape (Shapes), or the full result document
// of `web bench --json` (Document), which keeps its fingerprint, checks and
// intervals.
type ImportRequest struct {
	Device   string        `json:"device"`   // label of the machine, e.g. "B200"
	Problem  string        `json:"problem"`  // a known problem, e.g. "nvfp4_group_gemm"
	Suite    string        `json:"suite"`    // "tests" or "benchmarks"; empty means "benchmarks"
	Variant  string        `json:"variant"`  // what was measured; free text, need not be in the manifest (a built-in kernel's is stored in the catalogue's spelling)
	Baseline string        `json:"baseline"` // what it was compared against
	PitchID  int64         `json:"pitch_id"` // optional: the pitch this measures
	Note     string        `json:"note"`     // optional: where the numbers come from
	Shapes   []ImportShape `json:"shapes"`
	// Document is a full `web bench` result document (schema_version 1 to
	// 3). With it, problem, suite, variant and baseline come from the
	// document (given ones must agree), the device label defaults to its
	// fingerprint's device model, and Shapes must be empty.
	Document json.RawMessage `json:"document,omitempty"`

	parsed  *Result  // the validated Document (Validate)
	docExit int      // the document's exit_code
	docID   docIdent // the document's identity: which bench run it records
}

// ImportShape is one shape's times, in microseconds.
type ImportShape struct {
	Label             string    `json:"label"`
	BaselineUs        float64   `json:"baseline_us"`
	VariantUs         float64   `json:"variant_us"`
	BaselineSamplesUs []float64 `json:"baseline_samples_us,omitempty"`
	VariantSamplesUs  []float64 `json:"variant_samples_us,omitempty"`
	Correct           *bool     `json:"correct,omitempty"` // omitted: not reported
}

// Import limits keep an import cheap to validate, store and bootstrap
// (docs/runs-import.md, "Limits"). The bootstrap of bare samples costs
// bootstrapN resamples of every sample, so the total number of samples is
// what bounds an import's CPU time; a full bench document carries its own
// intervals and is only validated (linear in its size).
const (
	maxImportBytes        = 4 << 20 // the body, either form
	maxImportShapes       = 32
	maxImportSamples      = 1000 // per shape and role
	maxImportTotalSamples = 4096 // over all shapes and both roles
	maxLabelLen           = 64
	bootstrapN            = 2000
	// Times are microseconds; outside [minImportUs, maxImportUs] a figure is
	// a unit mistake or an attempt to make a speedup out of a denormal.
	minImportUs = 1e-3
	maxImportUs = 1e9
	// suspectSpeedup: an imported speedup over this is suspect, as bench's
	// own rule makes a measured one (docs/bench-result.md).
	suspectSpeedup = 10.0
	// pointVsMedians bounds how far a bench document's paired speedup may
	// be from its baseline median / variant median. They are not the same
	// figure (the point is the geometric mean of the paired rounds' ratios),
	// but close: at most 3.4% apart on 262 paired shapes of 114 H200
	// documents (99th percentile 2.5%), 2026-11.
	pointVsMedians = 0.05
	// sameFigure: figures bench computes from the same numbers agree but
	// for rounding.
	sameFigure = 1e-9
)

// MaxImportBytes is the most an import document (the request body) may
// hold: the web layer's body cap lets an import that much through.
const MaxImportBytes = maxImportBytes

// DecodeImport reads one strict JSON import document: unknown fields,
// trailing data and wrong types are EINVALID errors naming the field.
func DecodeImport(r io.Reader) (*ImportRequest, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("import: read document: %w", err)
	}
	if len(data) > maxImportBytes {
		return nil, pitches.Errorf(pitches.EINVALID, "document", "import document is larger than %d bytes", maxImportBytes)
	}
	// encoding/json replaces invalid UTF-8 with U+FFFD without a word: a
	// variant or device name would be stored other than it was sent.
	if field, at := jsonpath.UTF8Field(data, "document"); at >= 0 {
		return nil, pitches.Errorf(pitches.EINVALID, field, "%s must be valid UTF-8 text (invalid byte at offset %d)", field, at)
	}
	// A full bench result document has a top-level schema_version; it is
	// imported as it is (its own schema is result.Validate's to check).
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) == nil {
		if _, ok := probe["schema_version"]; ok {
			return &ImportRequest{Document: json.RawMessage(bytes.TrimSpace(data))}, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req ImportRequest
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, pitches.Errorf(pitches.EINVALID, "document", "import document has data after its JSON object")
	}
	if err := requireTimes(data); err != nil {
		return nil, err
	}
	return &req, nil
}

// jsonError turns a decoding error of data into an EINVALID error naming
// the field, with the index of its shape (jsonpath): "shapes[1].variant_us
// must be a number, not string".
func jsonError(data []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := jsonpath.Field(data, te)
		if field == "" {
			field = "document"
		}
		return pitches.Errorf(pitches.EINVALID, field, "%s must be %s, not %s", field, jsonpath.Want(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return pitches.Errorf(pitches.EINVALID, "document", "malformed JSON at byte %d: %v", se.Offset, err)
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return pitches.Errorf(pitches.EINVALID, field, "unknown field %q", field)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return pitches.Errorf(pitches.EINVALID, "document", "import document is empty or cut short")
	}
	return pitches.Errorf(pitches.EINVALID, "document", "malformed import document: %v", err)
}

// requireTimes refuses a shape whose baseline_us or variant_us is missing
// or null, and a null sample. encoding/json leaves 0 there, which
// checkTime would report as "got 0": a time nobody gave is missing, not
// zero.
func requireTimes(data []byte) error {
	var doc struct {
		Shapes []map[string]json.RawMessage `json:"shapes"`
	}
	if json.Unmarshal(data, &doc) != nil {
		// data decoded into an ImportRequest already, so its shapes are
		// objects; were they not, Validate would still judge the times.
		return nil
	}
	for i, shape := range doc.Shapes {
		for _, name := range []string{"baseline_us", "variant_us"} {
			field := fmt.Sprintf("shapes[%d].%s", i, name)
			v, ok := member(shape, name)
			if !ok {
				return pitches.Errorf(pitches.EINVALID, field, "%s is required", field)
			}
			if isNull(v) {
				return pitches.Errorf(pitches.EINVALID, field, "%s is required (null given)", field)
			}
		}
		for _, name := range []string{"baseline_samples_us", "variant_samples_us"} {
			v, _ := member(shape, name)
			var xs []json.RawMessage
			_ = json.Unmarshal(v, &xs) // absent or null: no samples
			for j, x := range xs {
				if isNull(x) {
					field := fmt.Sprintf("shapes[%d].%s[%d]", i, name, j)
					return pitches.Errorf(pitches.EINVALID, field, "%s must be a number (null given)", field)
				}
			}
		}
	}
	return nil
}

// member is obj's value for name, matched as encoding/json matches a
// struct's fields (case-insensitively), so that it is the value the
// ImportShape got.
func member(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// Validate checks the document; the error names the first bad field.
func (r *ImportRequest) Validate(cat Catalog) error {
	r.Device = strings.TrimSpace(r.Device)
	r.Problem = strings.TrimSpace(r.Problem)
	r.Suite = strings.TrimSpace(r.Suite)
	r.Variant = strings.TrimSpace(r.Variant)
	r.Baseline = strings.TrimSpace(r.Baseline)
	if len(r.Document) > 0 {
		if err := r.adoptDocument(); err != nil {
			return err
		}
	}
	if r.Suite == "" {
		r.Suite = SuiteBenchmarks
	}
	if err := checkLabel("device", r.Device); err != nil {
		return err
	}
	if r.Problem == "" {
		return pitches.Errorf(pitches.EINVALID, "problem", "a problem is required")
	}
	if err := cat.CheckProblem(r.Problem); err != nil {
		return pitches.Errorf(pitches.EINVALID, "problem", "%s", message(err))
	}
	if r.Suite != SuiteTests && r.Suite != SuiteBenchmarks {
		return pitches.Errorf(pitches.EINVALID, "suite", "unknown suite %q: use %q or %q", r.Suite, SuiteTests, SuiteBenchmarks)
	}
	// Imported variants were measured elsewhere and need not exist in this
	// manifest (the seeds' B200 kernels do not), so only their form is checked.
	if hash, _, ok := pitches.ParseKernelVariant(r.Variant); ok && pitches.ValidKernelHash(hash) {
		// A submitted kernel's spec (kernel:<hash>?knobs) is longer than
		// a label; its form is the pitch variant's.
		if err := pitches.ValidateVariant("variant", r.Variant); err != nil {
			return err
		}
	} else if err := checkName("variant", r.Variant, pitches.MaxVariantChars); err != nil {
		return err
	}
	// A built-in kernel of the problem is stored in the catalogue's
	// spelling, as runs measured here are; free labels keep theirs. A bench
	// document keeps its own variant string (checked against a given one
	// above, before this).
	r.Variant = VariantSpelling(cat, r.Problem, r.Variant)
	if err := checkName("baseline", r.Baseline, pitches.MaxVariantChars); err != nil {
		return err
	}
	if r.PitchID < 0 {
		return pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch id must be >= 0")
	}
	if len(r.Note) > 4000 {
		return pitches.Errorf(pitches.EINVALID, "note", "note is longer than 4000 bytes")
	}
	if r.parsed != nil {
		return nil
	}
	if len(r.Shapes) == 0 {
		return pitches.Errorf(pitches.EINVALID, "shapes", "at least one shape is required")
	}
	if len(r.Shapes) > maxImportShapes {
		return pitches.Errorf(pitches.EINVALID, "shapes", "at most %d shapes", maxImportShapes)
	}
	total := 0
	for i := range r.Shapes {
		s := &r.Shapes[i]
		f := func(name string) string { return fmt.Sprintf("shapes[%d].%s", i, name) }
		s.Label = strings.TrimSpace(s.Label)
		if s.Label == "" {
			s.Label = fmt.Sprintf("shape %d", i+1)
		}
		if err := checkLabel(f("label"), s.Label); err != nil {
			return err
		}
		if err := checkTime(f("baseline_us"), "baseline time", s.BaselineUs); err != nil {
			return err
		}
		if err := checkTime(f("variant_us"), "variant time", s.VariantUs); err != nil {
			return err
		}
		nb, nv := len(s.BaselineSamplesUs), len(s.VariantSamplesUs)
		if (nb == 0) != (nv == 0) {
			return pitches.Errorf(pitches.EINVALID, f("variant_samples_us"), "give raw samples for both baseline and variant, or for neither")
		}
		for _, set := range []struct {
			name string
			xs   []float64
		}{{"baseline_samples_us", s.BaselineSamplesUs}, {"variant_samples_us", s.VariantSamplesUs}} {
			name, xs := set.name, set.xs
			if len(xs) == 0 {
				continue
			}
			if len(xs) < 2 || len(xs) > maxImportSamples {
				return pitches.Errorf(pitches.EINVALID, f(name), "give between 2 and %d samples", maxImportSamples)
			}
			total += len(xs)
			if total > maxImportTotalSamples {
				return pitches.Errorf(pitches.EINVALID, f(name), "an import holds at most %d samples over all shapes and both roles", maxImportTotalSamples)
			}
			for j, x := range xs {
				if err := checkTime(fmt.Sprintf("%s[%d]", f(name), j), "sample", x); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkTime requires a finite time in [minImportUs, maxImportUs]
// microseconds: a denormal such as 1e-320 would make a speedup of 0 or +Inf.
func checkTime(field, what string, x float64) error {
	if !(x >= minImportUs && x <= maxImportUs) {
		return pitches.Errorf(pitches.EINVALID, field, "%s must be a number of microseconds between %g and %g, got %g", what, minImportUs, maxImportUs, x)
	}
	return nil
}

// adoptDocument validates a full bench result document and takes the
// run's description from it; given fields must agree with it.
func (r *ImportRequest) adoptDocument() error {
	if len(r.Shapes) > 0 {
		return pitches.Errorf(pitches.EINVALID, "shapes", "give either shapes or a bench result document, not both")
	}
	res, err := ParseResult(r.Document, nil)
	if err != nil {
		return pitches.Errorf(pitches.EINVALID, "document", "not a valid web bench result document: %s", strings.TrimPrefix(err.Error(), "bench: "))
	}
	var d result.Result
	if err := json.Unmarshal(r.Document, &d); err != nil {
		return pitches.Errorf(pitches.EINVALID, "document", "not a valid web bench result document: %v", err)
	}
	if d.Mode == "cpu" {
		return pitches.Errorf(pitches.EINVALID, "document", "the document is from web bench --device cpu (mode \"cpu\"): it times the CPU reference, not a kernel on a GPU, and is no measurement to import")
	}
	if d.Baseline == nil || !(res.Speedup.Value > 0) {
		return pitches.Errorf(pitches.EINVALID, "document", "the document pairs no baseline with the variant (no speedup to import); run bench with --baseline or --aa")
	}
	if err := checkFigures(&d); err != nil {
		return err
	}
	for _, f := range []struct {
		name       string
		given, doc string
		dst        *string
	}{{"problem", r.Problem, d.Problem, &r.Problem}, {"suite", r.Suite, d.Suite, &r.Suite},
		{"variant", r.Variant, d.Variant.Spec, &r.Variant}, {"baseline", r.Baseline, d.Baseline.Spec, &r.Baseline}} {
		if f.given != "" && f.given != f.doc {
			return pitches.Errorf(pitches.EINVALID, f.name, "%s %q disagrees with the document's %q", f.name, f.given, f.doc)
		}
		*f.dst = f.doc
	}
	if r.Device == "" {
		r.Device = res.DeviceName
		if len(r.Device) > maxLabelLen {
			r.Device = r.Device[:maxLabelLen]
		}
	}
	r.docExit = d.ExitCode
	r.docID = docIdent{key: d.Fingerprint.Key, started: d.StartedAt, finished: d.FinishedAt}
	r.parsed = res
	return nil
}

// checkFigures checks that a bench document's figures agree with
// themselves, so that a hand-edited speedup is not imported: each timed
// role's median is the median of its samples; each paired shape's speedup
// is the geometric mean of its paired rounds' ratios (bench's point,
// stats.PairedSpeedup) and within pointVsMedians of baseline median /
// variant median; summary.shape_speedups are the shapes' speedups (0 where
// none), and summary.geomean_speedup their geometric mean. The error names
// the field and the shape. The document has passed result.Validate.
func checkFigures(d *result.Result) error {
	var speedups []float64
	for i, s := range d.Shapes {
		at := func(field string) string { return fmt.Sprintf("document.shapes[%d].%s", i, field) }
		shape := fmt.Sprintf("shape %d (%s)", s.Index, shapeLabel(s))
		for _, t := range []struct {
			role string
			m    *result.Measurement
		}{{"variant", s.Variant}, {"baseline", s.Baseline}} {
			m := t.m
			if m == nil || len(m.SamplesNs) == 0 {
				continue
			}
			if med := stats.Median(m.SamplesNs); !sameRel(m.Stats.MedianNs, med, sameFigure) {
				return pitches.Errorf(pitches.EINVALID, at(t.role+"_timing.stats.median_ns"), "%s: the %s median %g ns is not the median of its %d samples (%g ns)",
					shape, t.role, m.Stats.MedianNs, len(m.SamplesNs), med)
			}
		}
		point := 0.0
		if p := s.Pairing; p != nil && s.Variant != nil && s.Baseline != nil {
			point = p.Speedup.Point
			ratio := s.Baseline.Stats.MedianNs / s.Variant.Stats.MedianNs
			if !sameRel(point, ratio, pointVsMedians) {
				return pitches.Errorf(pitches.EINVALID, at("pairing.speedup.point"), "%s: speedup %.4gx is more than %g%% from the ratio of the medians, %g / %g ns = %.4gx",
					shape, point, pointVsMedians*100, s.Baseline.Stats.MedianNs, s.Variant.Stats.MedianNs, ratio)
			}
			b, v := s.Baseline.SamplesNs, s.Variant.SamplesNs
			if len(b) != p.Rounds || len(v) != p.Rounds {
				return pitches.Errorf(pitches.EINVALID, at("pairing.rounds"), "%s: %d paired rounds, but %d baseline and %d variant samples", shape, p.Rounds, len(b), len(v))
			}
			sum := 0.0
			for j := range b {
				sum += math.Log(b[j]) - math.Log(v[j])
			}
			if paired := math.Exp(sum / float64(len(b))); !sameRel(point, paired, sameFigure) {
				return pitches.Errorf(pitches.EINVALID, at("pairing.speedup.point"), "%s: speedup %.6gx is not the geometric mean of its %d paired rounds' ratios (%.6gx)",
					shape, point, len(b), paired)
			}
			speedups = append(speedups, point)
		}
		if sp := d.Summary.ShapeSpeedups; len(sp) > 0 && !sameRel(sp[i], point, sameFigure) {
			return pitches.Errorf(pitches.EINVALID, fmt.Sprintf("document.summary.shape_speedups[%d]", i), "%s: summary speedup %.6gx, the shape's is %.6gx", shape, sp[i], point)
		}
	}
	if g := d.Summary.GeomeanSpeedup; g != nil && len(speedups) > 0 {
		if want := stats.GeoMean(speedups); !sameRel(*g, want, sameFigure) {
			return pitches.Errorf(pitches.EINVALID, "document.summary.geomean_speedup", "geomean speedup %.6gx is not the geometric mean of the %d shapes' speedups (%.6gx)", *g, len(speedups), want)
		}
	}
	return nil
}

// sameRel says whether a and b differ by at most tol relative to b (both
// positive; 0 equals only 0).
func sameRel(a, b, tol float64) bool {
	if b == 0 {
		return a == 0
	}
	return math.Abs(a-b) <= tol*math.Abs(b)
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// checkLabel requires a short single-line label.
func checkLabel(field, s string) error { return checkName(field, s, maxLabelLen) }

// checkName requires a single-line name of at most max bytes. Variants and
// baselines may be as long as a pitch's variant: a manifest variant with
// several knobs (the dual GEMM's best wgmma is 69 bytes) is one of them.
func checkName(field, s string, max int) error {
	if s == "" {
		return pitches.Errorf(pitches.EINVALID, field, "%s is required", field)
	}
	if len(s) > max {
		return pitches.Errorf(pitches.EINVALID, field, "%s is longer than %d bytes", field, max)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return pitches.Errorf(pitches.EINVALID, field, "%s must not contain control characters", field)
	}
	return nil
}

// ImportResult computes the stored form of a validated import: the run and
// its result. A full bench document is stored as it is, with the status its
// exit code and contents give (Classify), except that a run that would
// succeed is suspect where web bench's own rule says so on its figures
// (documentSuspect). For bare times, speedups are
// baseline/variant per shape and their geometric mean across shapes
// (measurement.md rule 9). Intervals exist only where raw samples were
// given: a 95% percentile bootstrap of the ratio of medians, resampling
// baseline and variant independently (imported samples are not paired),
// with a fixed seed so an import is reproducible. A shape reported
// incorrect makes the run incorrect; a speedup over 10x makes it suspect.
func (r *ImportRequest) ImportResult(by int64) (*Run, *Result, error) {
	run := &Run{
		Problem: r.Problem, Suite: r.Suite, Variant: r.Variant, Baseline: r.Baseline,
		Device: r.Device, RequestedBy: by, PitchID: r.PitchID, Imported: true, Note: r.Note,
	}
	if r.parsed != nil {
		cp := *r.parsed
		res := &cp
		res.DeviceName = firstNonEmpty(res.DeviceName, r.Device)
		run.Status, run.Reason = Classify(r.docExit, res)
		if !run.Status.Measured() {
			return nil, nil, pitches.Errorf(pitches.EINVALID, "document", "the document holds no result to import: %s", run.Reason)
		}
		if over := documentSuspect(res); run.Status == StatusSucceeded && len(over) > 0 {
			res.Suspect = append(slices.Clone(res.Suspect), over...)
			res.Flags = append(slices.Clone(res.Flags), "suspect")
			run.Status, run.Reason = StatusSuspect, SuspectReason(res)
		}
		run.DeviceName = res.DeviceName
		return run, res, nil
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, nil, fmt.Errorf("import: encode document: %w", err)
	}
	res := &Result{Doc: doc, Correct: true, DeviceName: r.Device}
	withSamples := true
	speedups := make([]float64, 0, len(r.Shapes))
	for i, s := range r.Shapes {
		sh := Shape{
			Index:            i,
			Label:            s.Label,
			BaselineMedianUs: s.BaselineUs,
			VariantMedianUs:  s.VariantUs,
			Speedup:          Interval{Value: s.BaselineUs / s.VariantUs},
			Correct:          s.Correct != nil && *s.Correct,
		}
		if s.Correct == nil {
			sh.Flags = append(sh.Flags, "correctness_not_reported")
		} else if !*s.Correct {
			res.Failures = append(res.Failures, Failure{Shape: i, Role: "variant", Check: "reported", Detail: "the import reports this shape incorrect"})
		}
		if len(s.BaselineSamplesUs) > 0 {
			sh.BaselineSamples, sh.BaselineSEMUs = len(s.BaselineSamplesUs), sem(s.BaselineSamplesUs)
			sh.VariantSamples, sh.VariantSEMUs = len(s.VariantSamplesUs), sem(s.VariantSamplesUs)
		} else {
			withSamples = false
		}
		if !sh.Correct {
			res.Correct = false
		}
		speedups = append(speedups, sh.Speedup.Value)
		res.Shapes = append(res.Shapes, sh)
	}
	res.Speedup = Interval{Value: stats.GeoMean(speedups)}
	res.Suspect = overSpeedup(res)
	if withSamples {
		bootstrapImport(r.Shapes, res)
	}
	if !res.Correct {
		res.Flags = append(res.Flags, "not_all_correct")
	}
	switch {
	case len(res.Failures) > 0:
		run.Status, run.Reason = StatusIncorrect, IncorrectReason(res)
	case len(res.Suspect) > 0:
		run.Status, run.Reason = StatusSuspect, SuspectReason(res)
		res.Flags = append(res.Flags, "suspect")
	default:
		// Correctness not reported is a flag, not a failed check: the
		// seeds' results were published without it.
		run.Status = StatusSucceeded
	}
	run.DeviceName = res.DeviceName
	return run, res, nil
}

// documentSuspect applies web bench's own suspect rule to an imported
// bench document's figures (checked against its samples by now), so that a
// document edited to say "ok" is judged as bench would have judged it: a
// variant median below a shape's speed-of-light floor, or a geomean over
// the 10x review bound. One shape over 10x is only a flag there (honest
// kernels beat the per-group baseline by 13-23x on small group shapes), so
// it is here too; bare times, which carry no floor, keep the stricter
// per-shape rule of overSpeedup.
func documentSuspect(res *Result) []string {
	var out []string
	if res.Speedup.Value > suspectSpeedup {
		out = append(out, fmt.Sprintf("geomean speedup %.2fx is over %gx the baseline", res.Speedup.Value, suspectSpeedup))
	}
	for _, s := range res.Shapes {
		if s.FloorUs > 0 && s.VariantMedianUs > 0 && s.VariantMedianUs < s.FloorUs {
			out = append(out, fmt.Sprintf("shape %d (%s): variant median %.2f us is below the speed-of-light floor %.2f us", s.Index, s.Label, s.VariantMedianUs, s.FloorUs))
		}
	}
	return out
}

// overSpeedup lists an imported result's implausible speedups: the
// geomean, then each shape, over suspectSpeedup.
func overSpeedup(res *Result) []string {
	var out []string
	if res.Speedup.Value > suspectSpeedup {
		out = append(out, fmt.Sprintf("geomean speedup %.2fx is over %gx the baseline", res.Speedup.Value, suspectSpeedup))
	}
	for _, s := range res.Shapes {
		if s.Speedup.Value > suspectSpeedup {
			out = append(out, fmt.Sprintf("shape %d (%s): speedup %.2fx is over %gx the baseline", s.Index, s.Label, s.Speedup.Value, suspectSpeedup))
		}
	}
	return out
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// bootstrapImport fills per-shape and geomean 95% intervals.
func bootstrapImport(shapes []ImportShape, res *Result) {
	rng := rand.New(rand.NewPCG(0x70697463, 0x6874616e)) // fixed: reproducible imports
	per := make([][]float64, len(shapes))
	geo := make([]float64, bootstrapN)
	var bufB, bufV []float64
	for b := 0; b < bootstrapN; b++ {
		ratios := make([]float64, len(shapes))
		for i, s := range shapes {
			bufB = resample(rng, s.BaselineSamplesUs, bufB)
			bufV = resample(rng, s.VariantSamplesUs, bufV)
			ratios[i] = median(bufB) / median(bufV)
			per[i] = append(per[i], ratios[i])
		}
		geo[b] = stats.GeoMean(ratios)
	}
	for i := range shapes {
		res.Shapes[i].Speedup.Lo, res.Shapes[i].Speedup.Hi = percentiles95(per[i])
	}
	res.Speedup.Lo, res.Speedup.Hi = percentiles95(geo)
}

func resample(rng *rand.Rand, xs, buf []float64) []float64 {
	buf = buf[:0]
	for range xs {
		buf = append(buf, xs[rng.IntN(len(xs))])
	}
	return buf
}

// median sorts xs in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func percentiles95(xs []float64) (lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Round(q * float64(len(s)-1)))
		return s[i]
	}
	return at(0.025), at(0.975)
}

// sem is the standard error of the mean.
func sem(xs []float64) float64 {
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// docIdent identifies the bench run a result document records: the machine
// (its fingerprint key) and when the run started and finished, to the
// nanosecond. Two runs of bench never share it; the same document imported
// again, re-encoded or wrapped in an envelope, keeps it.
type docIdent struct {
	key               string
	started, finished time.Time
}

func (a docIdent) same(b docIdent) bool {
	return a.key != "" && a.key == b.key && a.started.Equal(b.started) && a.finished.Equal(b.finished)
}

// docIdentOf reads the identity of a stored result document; ok is false
// for one that is not bench's (the normalized document of bare times).
func docIdentOf(doc []byte) (id docIdent, ok bool) {
	var d struct {
		SchemaVersion int `json:"schema_version"`
		Fingerprint   struct {
			Key string `json:"key"`
		} `json:"fingerprint"`
		StartedAt  time.Time `json:"started_at"`
		FinishedAt time.Time `json:"finished_at"`
	}
	if json.Unmarshal(doc, &d) != nil || d.SchemaVersion == 0 {
		return docIdent{}, false
	}
	return docIdent{key: d.Fingerprint.Key, started: d.StartedAt, finished: d.FinishedAt}, true
}

// sameShapes says whether two results have the same per-shape times and
// speedups, shape by shape.
func sameShapes(a, b []Shape) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if !sameRel(a[i].BaselineMedianUs, b[i].BaselineMedianUs, sameFigure) || !sameRel(a[i].VariantMedianUs, b[i].VariantMedianUs, sameFigure) ||
			!sameRel(a[i].Speedup.Value, b[i].Speedup.Value, sameFigure) {
			return false
		}
	}
	return true
}

// refuseRepeat refuses an import onto a pitch that already has a run with
// the same measurement (docs/runs-import.md, "One measurement, one run"):
// pooled with itself, a measurement would narrow the pitch's interval
// (ResultOf) with no new evidence. A run of the pitch (imported or measured
// here, any status with a result) on the same device has the same
// measurement when it has the same variant (knob order ignored:
// pitches.SameVariant) and the same per-shape baseline
// and variant times and speedups, or, for a bench document, records the
// same bench run (docIdent). The error is ECONFLICT naming the run.
func (r *Runner) refuseRepeat(ctx context.Context, run *Run, res *Result, id docIdent) error {
	f := Filter{PitchID: run.PitchID, WithShapes: true, Limit: 1000}
	for {
		runs, err := r.cfg.Store.List(ctx, f)
		if err != nil {
			return fmt.Errorf("import: list the runs of pitch %d: %w", run.PitchID, err)
		}
		for i := range runs {
			old := &runs[i]
			if !old.HasResult || old.DeviceName != run.DeviceName {
				continue
			}
			why := ""
			if pitches.SameVariant(old.Variant, run.Variant) && sameShapes(old.Shapes, res.Shapes) {
				why = "the same variant, device and per-shape times"
			} else if id.key != "" {
				full, err := r.cfg.Store.Get(ctx, old.ID)
				if err != nil {
					return fmt.Errorf("import: read run %d: %w", old.ID, err)
				}
				if oid, ok := docIdentOf(full.Result); ok && oid.same(id) {
					why = "the same web bench run: fingerprint key, started_at and finished_at"
				}
			}
			if why != "" {
				return pitches.Errorf(pitches.ECONFLICT, "", "pitch %d already has run %d with this measurement (%s): importing it again would pool one measurement with itself",
					run.PitchID, old.ID, why)
			}
		}
		if len(runs) < f.Limit {
			return nil
		}
		f.BeforeID = runs[len(runs)-1].ID
	}
}
