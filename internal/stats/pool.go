package stats

import "math"

// Pooled is several independent estimates of one ratio (the geomean
// speedups of repeated runs of a pitch) pooled on the log scale.
type Pooled struct {
	N       int     // estimates pooled
	GeoMean float64 // exp(mean ln x)
	// Lo and Hi are the 95% Student-t interval of the mean log, exponentiated
	// (n >= 2); zero for n = 1, where the caller uses that run's own interval.
	Lo, Hi float64
	// SDLog is the sample standard deviation of ln x: the run-to-run
	// variation as a relative figure (0.05 = about 5%); zero for n = 1.
	SDLog    float64
	Min, Max float64
}

// Pool pools positive finite estimates xs of a ratio: their geometric mean,
// the spread of their logs, their range, and a 95% t-interval for the mean
// log (the runs are the sampling unit: run-to-run variation, not the
// within-run noise, is what another run of the same kernel would see). It
// returns the zero Pooled when CheckPositive(xs) fails.
func Pool(xs []float64) Pooled {
	if CheckPositive(xs) != nil {
		return Pooled{}
	}
	n := len(xs)
	p := Pooled{N: n, Min: xs[0], Max: xs[0]}
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
		p.Min, p.Max = math.Min(p.Min, x), math.Max(p.Max, x)
	}
	mean := sum / float64(n)
	p.GeoMean = math.Exp(mean)
	if n < 2 {
		return p
	}
	var ss float64
	for _, x := range xs {
		d := math.Log(x) - mean
		ss += d * d
	}
	p.SDLog = math.Sqrt(ss / float64(n-1))
	half := T975(n-1) * p.SDLog / math.Sqrt(float64(n))
	p.Lo, p.Hi = math.Exp(mean-half), math.Exp(mean+half)
	return p
}

// t975 are Student's t 0.975 quantiles for 1..30 degrees of freedom.
var t975 = [...]float64{12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423}

// T975 is the 0.975 quantile of Student's t with df degrees of freedom
// (df >= 1): a table to 30, then the Cornish-Fisher expansion around the
// normal quantile (error below 1e-4 there). NaN for df < 1.
func T975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(t975) {
		return t975[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v)
}
