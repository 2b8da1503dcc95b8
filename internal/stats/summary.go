package stats

import (
	"math"
	"slices"
)

// Summary describes one set of samples (seconds or ns, as long as they are
// consistent). With fewer than two samples Stddev, SEM and RelSEM are 0.
type Summary struct {
	N                      int
	Median, Mean, Min, Max float64
	Stddev, SEM, RelSEM    float64
}

// Summarize computes the summary with the sample standard deviation (n-1
// denominator), SEM = Stddev/sqrt(N) and RelSEM = SEM/|Mean|. RelSEM is
// math.MaxFloat64 when the mean is 0 but the samples vary (a relative error
// of a zero mean is unbounded; the value stays finite so it can be stored).
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Median = quantileSorted(sorted, 0.5)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) < 2 {
		return s
	}
	// Two passes: the squared deviations from the mean, not sum(x^2) - n*mean^2,
	// which cancels badly for timings that vary by 0.1%.
	var ss float64
	for _, x := range xs {
		d := x - s.Mean
		ss += d * d
	}
	s.Stddev = math.Sqrt(ss / float64(len(xs)-1))
	s.SEM = s.Stddev / math.Sqrt(float64(len(xs)))
	switch {
	case s.Mean != 0:
		s.RelSEM = s.SEM / math.Abs(s.Mean)
	case s.SEM != 0:
		s.RelSEM = math.MaxFloat64
	}
	return s
}

// quantileSorted is the linearly interpolated quantile q in [0, 1] of sorted
// data (Hyndman and Fan type 7, the default of R and NumPy).
func quantileSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Median returns the median of xs (NaN when empty).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return quantileSorted(sorted, 0.5)
}
