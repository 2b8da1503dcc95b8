package runner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/stats"
)

// PredictionAlpha is the interval score's alpha: a range is read as an 80%
// central interval (scoring.md).
const PredictionAlpha = stats.DefaultAlpha

// Score is how a speedup prediction [Lo, Hi] fared against a measured
// geometric-mean speedup. All errors are on the natural-log scale because
// speedups are ratios (scoring.md).
type Score struct {
	Lo            float64 `json:"lo"` // the prediction
	Hi            float64 `json:"hi"`
	Measured      float64 `json:"measured"`         // the run's geomean speedup y
	IntervalScore float64 `json:"interval_score"`   // (u-l) + (2/alpha)(l-x)[x<l] + (2/alpha)(x-u)[x>u]; lower is better
	AbsLogError   float64 `json:"abs_log_error"`    // |ln(sqrt(lo*hi)) - ln y|
	SignedLogErr  float64 `json:"signed_log_error"` // ln(sqrt(lo*hi)) - ln y; positive = predicted too fast
	Hit           bool    `json:"hit"`              // ln y inside [ln lo, ln hi]
	Sentence      string  `json:"sentence"`         // "predicted 1.5-1.8x, measured 0.74x: 26% slower"
}

// ScorePrediction scores the range [lo, hi] against measured speedup y with
// package stats' formulas: the interval score of Gneiting & Raftery (2007) as
// scoringutils implements it, and the log errors of the range's geometric
// midpoint, all on log speedups. All three numbers must be positive and
// finite, lo <= hi.
func ScorePrediction(lo, hi, y float64) (Score, error) {
	if err := stats.CheckPrediction(lo, hi, y); err != nil {
		return Score{}, fmt.Errorf("score prediction: %w", err)
	}
	return Score{
		Lo: lo, Hi: hi, Measured: y,
		IntervalScore: stats.IntervalScore(lo, hi, y, PredictionAlpha),
		AbsLogError:   stats.AbsLogError(lo, hi, y),
		SignedLogErr:  stats.SignedLogError(lo, hi, y),
		Hit:           stats.Hit(lo, hi, y),
		Sentence:      Sentence(lo, hi, y),
	}, nil
}

// Sentence says a prediction and its outcome the way the seeds' recaps do:
// "predicted 1.5-1.8x, measured 0.74x: 26% slower". The percentage is the
// change of the speedup against 1x (y-1), as the example in the brief reads.
func Sentence(lo, hi, y float64) string {
	pred := ratio(lo) + "x"
	if ratio(lo) != ratio(hi) {
		pred = ratio(lo) + "-" + ratio(hi) + "x"
	}
	return fmt.Sprintf("predicted %s, measured %.2fx: %s", pred, y, Change(y))
}

// Change says a speedup as a change: "26% slower", "12% faster", "no change".
func Change(y float64) string {
	pct := math.Round((y - 1) * 100)
	switch {
	case pct > 0:
		return fmt.Sprintf("%.0f%% faster", pct)
	case pct < 0:
		return fmt.Sprintf("%.0f%% slower", -pct)
	}
	return "no change"
}

// ratio prints a predicted speedup with at most two decimals and no trailing zeros.
func ratio(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// Terms are the deal terms a winning pitch carries (scoring.md), each
// machine-checkable against a run. Nil / false fields are not terms.
type Terms struct {
	// MinGeomean is the lowest acceptable geomean speedup ("settling for 1.4x").
	MinGeomean *float64 `json:"min_geomean,omitempty"`
	// MaxRegression is the largest acceptable slowdown of any single shape, as
	// a fraction: 0.10 for "no shape regresses more than 10%". A shape's
	// regression is variant time / baseline time - 1, the way the seeds' tables
	// compute "-31% SLOWER" from 373 -> 488 us.
	MaxRegression *float64 `json:"max_regression,omitempty"`
	// MaxVariation is the largest acceptable run-to-run variation as a
	// fraction ("variance < 5%"): (max - min) / mean of the geomean speedups
	// of the run and its repeats (same problem, suite, variant, baseline and
	// device). With no repeat, the run's own 95% interval half-width relative
	// to its geomean stands in, and the result says so.
	MaxVariation *float64 `json:"max_variation,omitempty"`
	// Correct requires every shape to pass the correctness check.
	Correct bool `json:"correct,omitempty"`
}

// TermResult is one deal term evaluated on a run.
type TermResult struct {
	Term  string  `json:"term"`  // "min_geomean", "max_regression", "max_variation", "correct"
	Met   bool    `json:"met"`   // false also when the term could not be evaluated
	Value float64 `json:"value"` // the run's number (fractions for regression and variation)
	Limit float64 `json:"limit"`
	Text  string  `json:"text"` // e.g. "geomean 0.74x, needs >= 1.4x: not met"
}

// TermsMet tallies evaluated terms: how many were met, and the texts of
// those that were not, in order.
func TermsMet(ts []TermResult) (met int, notMet []string) {
	for _, t := range ts {
		if t.Met {
			met++
		} else {
			notMet = append(notMet, t.Text)
		}
	}
	return met, notMet
}

// EvaluateTerms checks terms against run (which must have a result and its
// shapes). repeats are other finished runs of the same configuration, used
// for run-to-run variation; runs in it without a result are ignored.
func EvaluateTerms(t Terms, run *Run, repeats []Run) []TermResult {
	var out []TermResult
	metText := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	if t.MinGeomean != nil {
		r := TermResult{Term: "min_geomean", Limit: *t.MinGeomean}
		if !run.HasResult {
			r.Text = fmt.Sprintf("needs geomean >= %sx: the run has no result", ratio(r.Limit))
		} else {
			r.Value = run.Speedup.Value
			r.Met = r.Value >= r.Limit
			r.Text = fmt.Sprintf("geomean %.2fx, needs >= %sx: %s", r.Value, ratio(r.Limit), metText(r.Met))
		}
		out = append(out, r)
	}
	if t.MaxRegression != nil {
		r := TermResult{Term: "max_regression", Limit: *t.MaxRegression}
		worst, label, ok := worstRegression(run)
		if !ok {
			r.Text = fmt.Sprintf("needs no shape slower than %.0f%%: the run has no per-shape speedups", r.Limit*100)
		} else {
			r.Value = worst
			r.Met = worst <= r.Limit
			if worst > 0 {
				r.Text = fmt.Sprintf("worst shape %s is %.1f%% slower, limit %.0f%%: %s", label, worst*100, r.Limit*100, metText(r.Met))
			} else {
				r.Text = fmt.Sprintf("no shape is slower (worst %s, %.1f%% faster), limit %.0f%%: %s", label, -worst*100, r.Limit*100, metText(r.Met))
			}
		}
		out = append(out, r)
	}
	if t.MaxVariation != nil {
		out = append(out, variationTerm(*t.MaxVariation, run, repeats))
	}
	if t.Correct {
		r := TermResult{Term: "correct"}
		bad := 0
		for _, s := range run.Shapes {
			if !s.Correct {
				bad++
			}
		}
		switch {
		case !run.HasResult || len(run.Shapes) == 0:
			r.Text = "needs correctness on all shapes: the run has no per-shape results"
		default:
			r.Met = run.Correct && bad == 0
			r.Value = float64(len(run.Shapes) - bad)
			r.Limit = float64(len(run.Shapes))
			r.Text = fmt.Sprintf("%d of %d shapes correct: %s", len(run.Shapes)-bad, len(run.Shapes), metText(r.Met))
		}
		out = append(out, r)
	}
	return out
}

// worstRegression returns the largest variant/baseline - 1 over the shapes.
func worstRegression(run *Run) (worst float64, label string, ok bool) {
	for _, s := range run.Shapes {
		if !(s.Speedup.Value > 0) {
			continue
		}
		reg := 1/s.Speedup.Value - 1
		if !ok || reg > worst {
			worst, label, ok = reg, s.Label, true
		}
	}
	if label == "" && ok {
		label = "?"
	}
	return worst, label, ok
}

func variationTerm(limit float64, run *Run, repeats []Run) TermResult {
	r := TermResult{Term: "max_variation", Limit: limit}
	if !run.HasResult {
		r.Text = fmt.Sprintf("needs run-to-run variation < %.0f%%: the run has no result", limit*100)
		return r
	}
	vals := []float64{run.Speedup.Value}
	for _, o := range repeats {
		if o.ID != run.ID && o.HasResult && o.Speedup.Value > 0 {
			vals = append(vals, o.Speedup.Value)
		}
	}
	if len(vals) >= 2 {
		lo, hi, sum := vals[0], vals[0], 0.0
		for _, v := range vals {
			lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
		}
		r.Value = (hi - lo) / (sum / float64(len(vals)))
		r.Met = r.Value < limit
		met := "not met"
		if r.Met {
			met = "met"
		}
		r.Text = fmt.Sprintf("%d runs spread %.1f%% (%.2fx-%.2fx), limit %.0f%%: %s", len(vals), r.Value*100, lo, hi, limit*100, met)
		return r
	}
	if run.Speedup.HasInterval() {
		r.Value = (run.Speedup.Hi - run.Speedup.Lo) / 2 / run.Speedup.Value
		r.Met = r.Value < limit
		met := "not met"
		if r.Met {
			met = "met"
		}
		r.Text = fmt.Sprintf("one run only: its 95%% interval is +/-%.1f%%, limit %.0f%%: %s (repeat the run to measure run-to-run variation)", r.Value*100, limit*100, met)
		return r
	}
	r.Text = fmt.Sprintf("needs run-to-run variation < %.0f%%: repeat the run to measure it", limit*100)
	return r
}
