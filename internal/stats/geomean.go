package stats

import (
	"fmt"
	"math"
)

// CheckPositive says why xs has no geometric mean (empty, or a value that is
// not a positive finite number), or returns nil.
func CheckPositive(xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("stats: no values")
	}
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("stats: value %d is %v, want a positive finite number", i, x)
		}
	}
	return nil
}

// GeoMean is exp(mean(ln x)), the aggregate of ratios across shapes
// (measurement.md rule 9). It is NaN when CheckPositive(xs) fails.
func GeoMean(xs []float64) float64 {
	if CheckPositive(xs) != nil {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// FastP is KernelBench's fast_p: the share of shapes that are correct and
// whose speedup exceeds p. An incorrect shape, a shape with no correctness
// entry, and a NaN speedup all count as failures. 0 for no shapes.
func FastP(speedups []float64, correct []bool, p float64) float64 {
	if len(speedups) == 0 {
		return 0
	}
	n := 0
	for i, s := range speedups {
		if i < len(correct) && correct[i] && s > p {
			n++
		}
	}
	return float64(n) / float64(len(speedups))
}
