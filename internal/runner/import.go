package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/stats"
)

// ImportRequest is a measurement made elsewhere (another GPU, another
// harness), stored as a succeeded run marked imported. docs/runs-import.md
// documents the JSON form.
type ImportRequest struct {
	Device   string        `json:"device"`   // label of the machine, e.g. "B200"
	Problem  string        `json:"problem"`  // a known problem, e.g. "nvfp4_group_gemm"
	Suite    string        `json:"suite"`    // "tests" or "benchmarks"; empty means "benchmarks"
	Variant  string        `json:"variant"`  // what was measured; free text, need not be in the manifest
	Baseline string        `json:"baseline"` // what it was compared against
	PitchID  int64         `json:"pitch_id"` // optional: the pitch this measures
	Note     string        `json:"note"`     // optional: where the numbers come from
	Shapes   []ImportShape `json:"shapes"`
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

// Import limits keep a document small enough to store and to bootstrap.
const (
	maxImportBytes   = 4 << 20
	maxImportShapes  = 64
	maxImportSamples = 5000
	maxLabelLen      = 64
	bootstrapN       = 2000
)

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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req ImportRequest
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, pitches.Errorf(pitches.EINVALID, "document", "import document has data after its JSON object")
	}
	return &req, nil
}

// jsonError turns a decoding error into an EINVALID error naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "document"
		}
		return pitches.Errorf(pitches.EINVALID, field, "expected %s, got JSON %s", te.Type, te.Value)
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

// Validate checks the document; the error names the first bad field.
func (r *ImportRequest) Validate(cat Catalog) error {
	r.Device = strings.TrimSpace(r.Device)
	r.Problem = strings.TrimSpace(r.Problem)
	r.Suite = strings.TrimSpace(r.Suite)
	r.Variant = strings.TrimSpace(r.Variant)
	r.Baseline = strings.TrimSpace(r.Baseline)
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
	if err := checkLabel("variant", r.Variant); err != nil {
		return err
	}
	if err := checkLabel("baseline", r.Baseline); err != nil {
		return err
	}
	if r.PitchID < 0 {
		return pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch id must be >= 0")
	}
	if len(r.Note) > 4000 {
		return pitches.Errorf(pitches.EINVALID, "note", "note is longer than 4000 bytes")
	}
	if len(r.Shapes) == 0 {
		return pitches.Errorf(pitches.EINVALID, "shapes", "at least one shape is required")
	}
	if len(r.Shapes) > maxImportShapes {
		return pitches.Errorf(pitches.EINVALID, "shapes", "at most %d shapes", maxImportShapes)
	}
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
		if !positive(s.BaselineUs) {
			return pitches.Errorf(pitches.EINVALID, f("baseline_us"), "baseline time must be a number > 0 (microseconds)")
		}
		if !positive(s.VariantUs) {
			return pitches.Errorf(pitches.EINVALID, f("variant_us"), "variant time must be a number > 0 (microseconds)")
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
			for j, x := range xs {
				if !positive(x) {
					return pitches.Errorf(pitches.EINVALID, fmt.Sprintf("%s[%d]", f(name), j), "sample must be a number > 0 (microseconds)")
				}
			}
		}
	}
	return nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// checkLabel requires a short single-line label.
func checkLabel(field, s string) error {
	if s == "" {
		return pitches.Errorf(pitches.EINVALID, field, "%s is required", field)
	}
	if len(s) > maxLabelLen {
		return pitches.Errorf(pitches.EINVALID, field, "%s is longer than %d bytes", field, maxLabelLen)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return pitches.Errorf(pitches.EINVALID, field, "%s must not contain control characters", field)
	}
	return nil
}

// ImportResult computes the stored form of a validated import: the run and
// its result. Speedups are baseline/variant per shape and their geometric
// mean across shapes (measurement.md rule 9). Intervals exist only where raw
// samples were given: a 95% percentile bootstrap of the ratio of medians,
// resampling baseline and variant independently (imported samples are not
// paired), with a fixed seed so an import is reproducible.
func (r *ImportRequest) ImportResult(by int64) (*Run, *Result, error) {
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, nil, fmt.Errorf("import: encode document: %w", err)
	}
	res := &Result{Doc: doc, Correct: true}
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
	if withSamples {
		bootstrapImport(r.Shapes, res)
	}
	if !res.Correct {
		res.Flags = append(res.Flags, "not_all_correct")
	}
	run := &Run{
		Problem: r.Problem, Suite: r.Suite, Variant: r.Variant, Baseline: r.Baseline,
		Device: r.Device, RequestedBy: by, PitchID: r.PitchID,
		Imported: true, Status: StatusSucceeded,
	}
	return run, res, nil
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
