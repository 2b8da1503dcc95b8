package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarizeKnownData(t *testing.T) {
	// 2,4,4,4,5,5,7,9: mean 5, squared deviations sum to 32, so the sample
	// variance is 32/7 and the sample stddev sqrt(32/7).
	s := Summarize([]float64{4, 9, 2, 4, 5, 7, 4, 5})
	sd := math.Sqrt(32.0 / 7)
	want := Summary{N: 8, Median: 4.5, Mean: 5, Min: 2, Max: 9, Stddev: sd, SEM: sd / math.Sqrt(8), RelSEM: sd / math.Sqrt(8) / 5}
	if s.N != want.N || s.Median != want.Median || s.Mean != want.Mean || s.Min != want.Min || s.Max != want.Max ||
		!near(s.Stddev, want.Stddev, 1e-12) || !near(s.SEM, want.SEM, 1e-12) || !near(s.RelSEM, want.RelSEM, 1e-12) {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if m := Summarize([]float64{3, 1, 2}).Median; m != 2 {
		t.Errorf("odd-length median = %v, want 2", m)
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("empty: %+v", s)
	}
	if s := Summarize([]float64{7}); s.N != 1 || s.Mean != 7 || s.Median != 7 || s.Stddev != 0 || s.RelSEM != 0 {
		t.Errorf("one sample: %+v", s)
	}
	// Large offset, tiny spread: the two-pass variance keeps its digits.
	s = Summarize([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3})
	if !near(s.Stddev, 1, 1e-6) {
		t.Errorf("stddev of 1e9+{1,2,3} = %v, want 1", s.Stddev)
	}
}

func TestGeoMeanAndFastP(t *testing.T) {
	if g := GeoMean([]float64{1, 4, 16}); !near(g, 4, 1e-12) {
		t.Errorf("GeoMean(1,4,16) = %v, want 4", g)
	}
	for _, bad := range [][]float64{nil, {1, 0}, {2, -1}, {math.Inf(1)}, {math.NaN()}} {
		if g := GeoMean(bad); !math.IsNaN(g) {
			t.Errorf("GeoMean(%v) = %v, want NaN", bad, g)
		}
		if CheckPositive(bad) == nil {
			t.Errorf("CheckPositive(%v) accepted", bad)
		}
	}
	speedups := []float64{1.5, 2.5, 0.9, 1.1, 3}
	correct := []bool{true, false, true, true, true}
	cases := map[float64]float64{1.0: 3.0 / 5, 1.2: 2.0 / 5, 2.0: 1.0 / 5}
	for p, want := range cases {
		if got := FastP(speedups, correct, p); !near(got, want, 1e-15) {
			t.Errorf("fast_%v = %v, want %v (the 2.5x shape is incorrect)", p, got, want)
		}
	}
	if got := FastP(speedups, correct[:2], 1.0); got != 1.0/5 {
		t.Errorf("missing correctness entries must count as failures: %v", got)
	}
	if got := FastP(nil, nil, 1); got != 0 {
		t.Errorf("no shapes: %v", got)
	}
}
