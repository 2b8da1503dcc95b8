package stats

import (
	"fmt"
	"math"
)

// DefaultAlpha makes a predicted range [lo, hi] an 80% central interval
// (scoring.md: "A range means an 80% central interval").
const DefaultAlpha = 0.2

// CheckPrediction says why a predicted range and a measured speedup cannot be
// scored, or returns nil. A single-number prediction is lo == hi.
func CheckPrediction(lo, hi, y float64) error {
	switch {
	case !(lo > 0) || math.IsInf(lo, 0) || !(hi > 0) || math.IsInf(hi, 0):
		return fmt.Errorf("stats: predicted range [%v, %v] must be positive finite speedups", lo, hi)
	case lo > hi:
		return fmt.Errorf("stats: predicted range [%v, %v] has lo above hi", lo, hi)
	case !(y > 0) || math.IsInf(y, 0):
		return fmt.Errorf("stats: measured speedup %v must be a positive finite number", y)
	}
	return nil
}

// IntervalScore is the interval score of [lo, hi] as a central (1-alpha)
// interval for the measured speedup y, on the natural-log scale because
// speedups are ratios (Gneiting and Raftery 2007; scoringutils):
// IS = (u - l) + (2/alpha)(l - x)[x < l] + (2/alpha)(x - u)[x > u] with
// l = ln lo, u = ln hi, x = ln y. Lower is better. NaN when CheckPrediction
// fails or alpha is not in (0, 1).
func IntervalScore(lo, hi, y, alpha float64) float64 {
	if CheckPrediction(lo, hi, y) != nil || !(alpha > 0 && alpha < 1) {
		return math.NaN()
	}
	l, u, x := math.Log(lo), math.Log(hi), math.Log(y)
	s := u - l
	if x < l {
		s += 2 / alpha * (l - x)
	}
	if x > u {
		s += 2 / alpha * (x - u)
	}
	return s
}

// SignedLogError is ln(sqrt(lo*hi)) - ln(y): positive when the prediction was
// too optimistic (predicted faster than measured). NaN when CheckPrediction
// fails.
func SignedLogError(lo, hi, y float64) float64 {
	if CheckPrediction(lo, hi, y) != nil {
		return math.NaN()
	}
	return (math.Log(lo)+math.Log(hi))/2 - math.Log(y)
}

// AbsLogError is |ln(sqrt(lo*hi)) - ln(y)|, the error of the range's
// geometric midpoint. NaN when CheckPrediction fails.
func AbsLogError(lo, hi, y float64) float64 {
	return math.Abs(SignedLogError(lo, hi, y))
}

// Hit reports whether y lies inside [lo, hi] (bounds included). False when
// CheckPrediction fails.
func Hit(lo, hi, y float64) bool {
	return CheckPrediction(lo, hi, y) == nil && y >= lo && y <= hi
}

// RelativeScore is a predictor's score minus the median of the other
// predictors' scores on the same pitch (Fatebook's relative Brier score,
// Metaculus's peer score); negative is better than the field. NaN when there
// are no others.
func RelativeScore(own float64, others []float64) float64 {
	return own - Median(others)
}

// Coverage is the share of hits, to set against the nominal 80%. NaN for no
// predictions.
func Coverage(hits []bool) float64 {
	if len(hits) == 0 {
		return math.NaN()
	}
	n := 0
	for _, h := range hits {
		if h {
			n++
		}
	}
	return float64(n) / float64(len(hits))
}
