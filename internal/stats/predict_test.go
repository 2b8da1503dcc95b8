package stats

import (
	"fmt"
	"math"
	"testing"
)

// The worked example of scoring.md: round 1's Pipeline Stages on the B200,
// claimed [1.5, 1.8].
func TestWorkedExample(t *testing.T) {
	speedups := []float64{373.0 / 488, 372.0 / 462, 173.0 / 249, 156.0 / 228}
	y := GeoMean(speedups)
	if got := fmt.Sprintf("%.4f", y); got != "0.7355" {
		t.Errorf("geomean = %s, want 0.7355", got)
	}
	if got := fmt.Sprintf("%.2f", IntervalScore(1.5, 1.8, y, DefaultAlpha)); got != "7.31" {
		t.Errorf("interval score = %s, want 7.31", got)
	}
	if got := fmt.Sprintf("%.3f", AbsLogError(1.5, 1.8, y)); got != "0.804" {
		t.Errorf("absolute log error = %s, want 0.804", got)
	}
	if s := SignedLogError(1.5, 1.8, y); !(s > 0) {
		t.Errorf("signed log error %v: the claim was optimistic, want > 0", s)
	}
	if Hit(1.5, 1.8, y) {
		t.Errorf("a hit, want a miss")
	}
}

func TestIntervalScoreCases(t *testing.T) {
	l, u := math.Log(1.2), math.Log(1.5)
	cases := []struct {
		y, want float64
	}{
		{1.3, u - l},                        // inside: only the width
		{1.2, u - l},                        // on the bound
		{1.0, u - l + 10*(l-math.Log(1.0))}, // below: penalty 2/alpha per log unit
		{2.0, u - l + 10*(math.Log(2.0)-u)}, // above
	}
	for _, c := range cases {
		if got := IntervalScore(1.2, 1.5, c.y, 0.2); !near(got, c.want, 1e-12) {
			t.Errorf("IntervalScore(1.2, 1.5, %v) = %v, want %v", c.y, got, c.want)
		}
	}
	if !Hit(1.2, 1.5, 1.2) || !Hit(1.2, 1.5, 1.5) || !Hit(1.3, 1.3, 1.3) {
		t.Errorf("bounds and point predictions must count as hits")
	}
	if got := IntervalScore(1.3, 1.3, 1.3, 0.2); got != 0 {
		t.Errorf("exact point prediction scores %v, want 0", got)
	}
	if s := SignedLogError(1, 1, 2); !near(s, -math.Log(2), 1e-15) {
		t.Errorf("pessimistic prediction: signed error %v, want -ln 2", s)
	}
}

func TestPredictionInvalidInput(t *testing.T) {
	for _, c := range [][3]float64{{0, 1, 1}, {2, 1, 1}, {1, 2, 0}, {1, math.Inf(1), 1}, {math.NaN(), 1, 1}} {
		if CheckPrediction(c[0], c[1], c[2]) == nil {
			t.Errorf("CheckPrediction%v accepted", c)
		}
		if !math.IsNaN(IntervalScore(c[0], c[1], c[2], 0.2)) || !math.IsNaN(AbsLogError(c[0], c[1], c[2])) || Hit(c[0], c[1], c[2]) {
			t.Errorf("invalid %v scored", c)
		}
	}
	if !math.IsNaN(IntervalScore(1, 2, 1.5, 0)) {
		t.Errorf("alpha 0 accepted")
	}
}

func TestRelativeScoreAndCoverage(t *testing.T) {
	if got := RelativeScore(2, []float64{1, 5, 3}); got != -1 {
		t.Errorf("RelativeScore = %v, want 2 - median 3 = -1", got)
	}
	if !math.IsNaN(RelativeScore(2, nil)) {
		t.Errorf("no others: want NaN")
	}
	if got := Coverage([]bool{true, false, true, true}); got != 0.75 {
		t.Errorf("Coverage = %v", got)
	}
}
