package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/result"
)

// ParseResult validates a result document of `web bench` (result.Validate:
// strict schema, numbers that make sense together), checks that it answers
// run (same problem, suite and variant), and extracts the summary and the
// per-shape rows that are stored next to it.
func ParseResult(doc []byte, run *Run) (*Result, error) {
	if err := result.Validate(doc); err != nil {
		return nil, err
	}
	var d result.Result
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode result document: %w", err)
	}
	if run != nil {
		if d.Problem != run.Problem {
			return nil, fmt.Errorf("result is for problem %q, the run asked for %q", d.Problem, run.Problem)
		}
		if d.Suite != run.Suite {
			return nil, fmt.Errorf("result is for suite %q, the run asked for %q", d.Suite, run.Suite)
		}
		if d.Variant.Spec != run.Variant && d.Variant.Spec != benchVariant(run.Variant) {
			return nil, fmt.Errorf("result is for variant %q, the run asked for %q", d.Variant.Spec, run.Variant)
		}
	}
	res := &Result{
		Doc:        json.RawMessage(doc),
		Correct:    d.Summary.AllCorrect,
		Flags:      append([]string(nil), d.Summary.Flags...),
		DeviceName: d.Fingerprint.DeviceModel,
		Status:     d.Status,
	}
	if res.DeviceName == "" {
		res.DeviceName = d.Device.Name
	}
	// Schema 2's failures and suspect reasons, read on their own so that
	// this works whether or not result.Result declares them yet; a schema 1
	// document has neither (empty).
	var v2 struct {
		Summary struct {
			Failures []Failure `json:"failures"`
			Suspect  []string  `json:"suspect"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(doc, &v2); err != nil {
		return nil, fmt.Errorf("decode result summary: %w", err)
	}
	res.Failures, res.Suspect = v2.Summary.Failures, v2.Summary.Suspect
	if d.Summary.GeomeanSpeedup != nil {
		res.Speedup.Value = *d.Summary.GeomeanSpeedup
	}
	if !res.Correct && !containsStr(res.Flags, "incorrect") {
		res.Flags = append(res.Flags, "incorrect")
	}
	for _, s := range d.Shapes {
		sh := Shape{
			Index:           s.Index,
			Label:           shapeLabel(s),
			FloorUs:         s.FloorNs / 1e3,
			FractionOfFloor: s.FractionOfFloor,
			Correct:         s.Correct,
			Flags:           append([]string(nil), s.Flags...),
		}
		if m := s.Variant; m != nil {
			sh.VariantMedianUs, sh.VariantSEMUs, sh.VariantSamples = m.Stats.MedianNs/1e3, m.Stats.SEMNs/1e3, m.Stats.N
		}
		if m := s.Baseline; m != nil {
			sh.BaselineMedianUs, sh.BaselineSEMUs, sh.BaselineSamples = m.Stats.MedianNs/1e3, m.Stats.SEMNs/1e3, m.Stats.N
		}
		if p := s.Pairing; p != nil {
			sh.Speedup = Interval{Value: p.Speedup.Point, Lo: p.Speedup.Lo, Hi: p.Speedup.Hi}
		}
		if s.Skipped != "" && !containsStr(sh.Flags, "not_timed") {
			sh.Flags = append(sh.Flags, "not_timed")
		}
		// The worst figures over the variant's checks. A non-finite error has
		// no JSON number (null); it is flagged instead of stored.
		for _, c := range s.Checks {
			if c.Role != "variant" {
				continue
			}
			for _, f := range []struct {
				p   *float64
				dst *float64
			}{{c.MaxAbsErr, &sh.MaxAbsErr}, {c.MaxRelErr, &sh.MaxRelErr}, {c.RelL2Err, &sh.RelL2Err}} {
				if f.p == nil {
					if !containsStr(sh.Flags, "nonfinite_error") {
						sh.Flags = append(sh.Flags, "nonfinite_error")
					}
					continue
				}
				*f.dst = math.Max(*f.dst, *f.p)
			}
		}
		res.Shapes = append(res.Shapes, sh)
		if !s.Correct {
			res.failedChecks = append(res.failedChecks, shapeFailures(s)...)
		}
	}
	return res, nil
}

// shapeFailures names the failed checks of an incorrect shape from its
// per-check records: the schema 1 fallback for summary.failures.
func shapeFailures(s result.Shape) []Failure {
	var out []Failure
	for _, c := range s.Checks {
		if c.Pass {
			continue
		}
		check := c.Phase
		if !c.InputsIntact {
			check = "inputs_modified"
		}
		detail := fmt.Sprintf("%d of %d elements differ", c.Mismatches, c.Elements)
		if c.NaNs > 0 {
			detail += fmt.Sprintf(", %d not finite", c.NaNs)
		}
		if c.MaxAbsErr != nil {
			detail += fmt.Sprintf(", max abs err %.3g (atol %.3g)", *c.MaxAbsErr, c.ATol)
		}
		out = append(out, Failure{Shape: s.Index, Role: c.Role, Check: check, Detail: detail})
	}
	if len(out) == 0 {
		out = append(out, Failure{Shape: s.Index, Role: "variant", Check: "correct", Detail: "the shape is marked incorrect"})
	}
	return out
}

// shapeLabel names a shape the way the seeds' tables do: "g=8 N=4096 K=7168"
// for a grouped GEMM, "M=256 N=4096 K=7168" for a single one.
func shapeLabel(s result.Shape) string {
	if len(s.M) == 1 {
		return fmt.Sprintf("M=%d N=%d K=%d", s.M[0], s.N, s.K)
	}
	ms := make([]string, len(s.M))
	for i, m := range s.M {
		ms[i] = strconv.Itoa(m)
	}
	label := fmt.Sprintf("g=%d N=%d K=%d", len(s.M), s.N, s.K)
	if len(label)+len(ms)*4 < 80 {
		label += " M=" + strings.Join(ms, ",")
	}
	return label
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Comparable says whether two runs' times can be set side by side
// (measurement.md rule 10): both measured here with the same device model,
// driver and NVRTC version (result.Comparable on their documents), or both
// imported from the same device label, and then, where both imports are
// bench documents, with the same fingerprint too. The reason names the
// difference. Both runs must come from Get (with their result documents).
func Comparable(a, b *Run) (bool, string) {
	if !a.HasResult || !b.HasResult {
		return false, "a run has no result"
	}
	if a.Imported || b.Imported {
		if a.Imported != b.Imported {
			return false, "one run was measured here, the other imported"
		}
		if a.Device != b.Device {
			return false, fmt.Sprintf("imported from different devices: %q vs %q", a.Device, b.Device)
		}
		// A hand-written import has no fingerprint: its label is all
		// there is to compare.
		da, oka := importedDocument(a)
		db, okb := importedDocument(b)
		if !oka || !okb {
			return true, ""
		}
		return result.Comparable(da, db)
	}
	// The fingerprints alone (result.ReadHead), not the whole documents:
	// the run page compares each of a variant's last runs with its own.
	_, fa, oka := result.ReadHead(a.Result)
	if !oka {
		return false, fmt.Sprintf("run %d: its result document has no fingerprint", a.ID)
	}
	_, fb, okb := result.ReadHead(b.Result)
	if !okb {
		return false, fmt.Sprintf("run %d: its result document has no fingerprint", b.ID)
	}
	return result.Comparable(&result.Result{Fingerprint: fa}, &result.Result{Fingerprint: fb})
}

// importedDocument is an imported run's bench document's fingerprint, when
// it was imported as one; false for an import of hand-written shapes.
func importedDocument(r *Run) (*result.Result, bool) {
	_, fp, ok := result.ReadHead(r.Result)
	if !ok {
		return nil, false
	}
	return &result.Result{Fingerprint: fp}, true
}
