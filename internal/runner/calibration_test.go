package runner_test

import (
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

func TestRelativeScores(t *testing.T) {
	if got := runner.RelativeScores([]runner.Score{{IntervalScore: 1}}); len(got) != 1 || got[0] != nil {
		t.Fatalf("a lone prediction: got %v, want one nil (nobody to compare with)", got)
	}
	scores := []runner.Score{{IntervalScore: 1}, {IntervalScore: 3}, {IntervalScore: 8}, {IntervalScore: 4}}
	// Each minus the median of the other three.
	want := []float64{1 - 4, 3 - 4, 8 - 3, 4 - 3}
	got := runner.RelativeScores(scores)
	for i := range want {
		if got[i] == nil || math.Abs(*got[i]-want[i]) > 1e-12 {
			t.Fatalf("relative score %d: got %v, want %v", i, got[i], want[i])
		}
	}
	two := runner.RelativeScores([]runner.Score{{IntervalScore: 2}, {IntervalScore: 5}})
	if *two[0] != -3 || *two[1] != 3 {
		t.Fatalf("two predictions: got %v %v, want -3 and 3", *two[0], *two[1])
	}
}

func TestCalibrate(t *testing.T) {
	if c := runner.Calibrate(nil, nil); c != (runner.Calibration{}) {
		t.Fatalf("no scores: got %+v, want the zero record", c)
	}
	rel := -1.5
	scores := []runner.Score{
		{Hit: true, SignedLogErr: 0.2, IntervalScore: 1},
		{Hit: false, SignedLogErr: -0.4, IntervalScore: 5},
		{Hit: true, SignedLogErr: 0.5, IntervalScore: 3},
	}
	c := runner.Calibrate(scores, []*float64{nil, &rel, nil})
	if c.N != 3 || c.Hits != 2 || math.Abs(c.Coverage-2.0/3) > 1e-12 {
		t.Fatalf("counts: got %+v, want 3 predictions, 2 hits, coverage 2/3", c)
	}
	if math.Abs(c.MeanSignedLogErr-0.1) > 1e-12 || math.Abs(c.MeanIntervalScore-3) > 1e-12 {
		t.Fatalf("means: got signed %v, interval score %v; want 0.1 and 3", c.MeanSignedLogErr, c.MeanIntervalScore)
	}
	if c.NRelative != 1 || c.MeanRelative != -1.5 {
		t.Fatalf("relative: got %d, mean %v; want 1 and -1.5", c.NRelative, c.MeanRelative)
	}
}

func TestTermsMet(t *testing.T) {
	met, notMet := runner.TermsMet([]runner.TermResult{
		{Met: true, Text: "correct: met"},
		{Met: false, Text: "geomean 0.74x, needs >= 1.4x: not met"},
		{Met: false, Text: "variation 3%, needs <= 1%: not met"},
	})
	if met != 1 || len(notMet) != 2 || notMet[0] != "geomean 0.74x, needs >= 1.4x: not met" || notMet[1] != "variation 3%, needs <= 1%: not met" {
		t.Fatalf("got %d met, not met %q; want 1 and the other two in order", met, notMet)
	}
	if met, notMet := runner.TermsMet(nil); met != 0 || notMet != nil {
		t.Fatalf("no terms: got %d, %q", met, notMet)
	}
}
