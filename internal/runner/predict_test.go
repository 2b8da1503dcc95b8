package runner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

func TestScorePrediction(t *testing.T) {
	// Inside the range: the score is the range's log width, a hit.
	sc, err := runner.ScorePrediction(1.1, 1.3, 1.2)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Hit || !near(sc.IntervalScore, math.Log(1.3/1.1), 1e-12) {
		t.Fatalf("inside: %+v", sc)
	}
	if sc.Sentence != "predicted 1.1-1.3x, measured 1.20x: 20% faster" {
		t.Fatalf("sentence %q", sc.Sentence)
	}
	// Above the range: penalised on the upper side, pessimistic (negative signed error).
	sc, _ = runner.ScorePrediction(1.0, 1.0, 1.5)
	if sc.Hit || !near(sc.IntervalScore, 10*math.Log(1.5), 1e-12) || !(sc.SignedLogErr < 0) {
		t.Fatalf("above: %+v", sc)
	}
	if sc.Sentence != "predicted 1x, measured 1.50x: 50% faster" {
		t.Fatalf("sentence %q", sc.Sentence)
	}
	if s := runner.Sentence(1.25, 1.5, 1.002); !strings.HasSuffix(s, "no change") {
		t.Fatalf("sentence %q", s)
	}
	for _, bad := range [][3]float64{{0, 1, 1}, {2, 1, 1}, {1, 2, 0}, {1, 2, math.NaN()}, {math.NaN(), 2, 1}, {1, math.Inf(1), 1}} {
		if _, err := runner.ScorePrediction(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("ScorePrediction%v: want an error", bad)
		}
	}
}

func TestEvaluateTerms(t *testing.T) {
	run := &runner.Run{ID: 1, HasResult: true, Correct: true, Speedup: runner.Interval{Value: 1.45, Lo: 1.40, Hi: 1.50},
		Shapes: []runner.Shape{
			{Label: "a", Speedup: runner.Interval{Value: 2.0}, Correct: true},
			{Label: "b", Speedup: runner.Interval{Value: 0.95}, Correct: true},
		}}
	minG, maxReg, maxVar := 1.4, 0.10, 0.05
	terms := runner.Terms{MinGeomean: &minG, MaxRegression: &maxReg, MaxVariation: &maxVar, Correct: true}
	got := runner.EvaluateTerms(terms, run, nil)
	if len(got) != 4 {
		t.Fatalf("%+v", got)
	}
	for _, tr := range got {
		if !tr.Met {
			t.Errorf("%s not met: %s", tr.Term, tr.Text)
		}
	}
	if !near(got[1].Value, 1/0.95-1, 1e-12) || !strings.Contains(got[1].Text, "worst shape b is 5.3% slower") {
		t.Errorf("regression %+v", got[1])
	}
	if !strings.Contains(got[2].Text, "one run only") || !near(got[2].Value, 0.05/1.45, 1e-12) {
		t.Errorf("variation without repeats %+v", got[2])
	}
	// With repeats, the spread across runs decides.
	repeats := []runner.Run{{ID: 2, HasResult: true, Speedup: runner.Interval{Value: 1.30}}, {ID: 3}}
	v := runner.EvaluateTerms(runner.Terms{MaxVariation: &maxVar}, run, repeats)[0]
	if v.Met || !near(v.Value, 0.15/1.375, 1e-12) || !strings.Contains(v.Text, "2 runs spread") {
		t.Errorf("variation with a repeat %+v", v)
	}
	// One incorrect shape fails correctness; a run without a result meets nothing.
	run.Shapes[1].Correct, run.Correct = false, false
	if c := runner.EvaluateTerms(runner.Terms{Correct: true}, run, nil)[0]; c.Met || c.Text != "1 of 2 shapes correct: not met" {
		t.Errorf("correctness %+v", c)
	}
	for _, tr := range runner.EvaluateTerms(terms, &runner.Run{}, nil) {
		if tr.Met {
			t.Errorf("%s met on a run without a result", tr.Term)
		}
	}
}
