package tracking_test

import (
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// zrun is an imported run from label B200 with one time per shape a, b.
func zrun(id int64, a, b float64) *runner.Run {
	return &runner.Run{ID: id, HasResult: true, Imported: true, Device: "B200", Problem: "p", Suite: "benchmarks",
		Status: runner.StatusSucceeded, Speedup: runner.Interval{Value: 1},
		Shapes: []runner.Shape{shape("a", a, 0), shape("b", b, 0)}}
}

func TestEvaluateZScore(t *testing.T) {
	th := tracking.Threshold{ID: 7, Problem: "p", Variant: "v", Kind: tracking.KindZScore, Window: 20, Z: 3}
	// A history newest first, ids 1..8: shape a about 100 us with about 1%
	// noise, shape b 200 us every time (sd 0: the MinSD floor).
	noise := []float64{100, 101, 99, 100.5, 99.5, 100, 101.5, 98.5}
	var hist []*runner.Run
	for i, us := range noise {
		hist = append([]*runner.Run{zrun(int64(i+1), us, 200)}, hist...)
	}

	// Fewer than 5 earlier comparable runs: no alert, and why.
	if a, skip := tracking.EvaluateZScore(th, zrun(9, 150, 300), hist[:4]); a != nil || skip != "not enough history: 4 of 5" {
		t.Errorf("4 runs of history: %+v %q", a, skip)
	}
	// Noise inside the boundary: a at 102 (~1.7 sd of ~1%), b at 200.5
	// (0.25% over, half the 0.5% floor): nothing.
	if a, skip := tracking.EvaluateZScore(th, zrun(9, 102, 200.5), hist); a != nil || skip != "" {
		t.Errorf("noise: %+v %q", a, skip)
	}
	// A clear regression on a: 20% slower. b 1% slower: 2 floors, inside z=3.
	a, skip := tracking.EvaluateZScore(th, zrun(9, 120, 202), hist)
	if a == nil {
		t.Fatalf("20%% slower raised nothing (%q)", skip)
	}
	if a.Kind != tracking.KindZScore || a.Window != 20 || a.Z != 3 || a.History != 8 || a.BaselineRun != 0 || len(a.Shapes) != 1 {
		t.Fatalf("alert: %+v", a)
	}
	s := a.Shapes[0]
	if s.Label != "a" || s.RunUs != 120 || !(s.MeanUs > 99.9 && s.MeanUs < 100.1) || !(s.SD > 0.008 && s.SD < 0.012) ||
		!(s.BoundaryUs > 102 && s.BoundaryUs < 104) || !(s.ZScore > 10) {
		t.Errorf("shape a: %+v", s)
	}
	if !strings.HasPrefix(a.Summary, "run #9 is above the z=3 boundary of its last 8 comparable runs on 1 of 2 shapes (variant v of p); worst: a at ") {
		t.Errorf("summary: %s", a.Summary)
	}
	// The floor: b 2% slower than its constant 200 us is 4 floors out.
	if a, _ := tracking.EvaluateZScore(th, zrun(9, 100, 204), hist); a == nil || a.Shapes[0].Label != "b" || a.Shapes[0].SD != tracking.MinSD {
		t.Errorf("b over a constant history: %+v", a)
	}

	// Not in the window: another device's, a failed, a later run. With
	// them, only 4 usable runs remain: not enough history.
	mixed := append([]*runner.Run{}, hist[:4]...)
	other := zrun(5, 300, 600)
	other.Device = "H100"
	failed := zrun(6, 300, 600)
	failed.Status = runner.StatusFailed
	mixed = append([]*runner.Run{zrun(10, 300, 600), other, failed}, mixed...)
	if a, skip := tracking.EvaluateZScore(th, zrun(9, 300, 600), mixed); a != nil || skip != "not enough history: 4 of 5" {
		t.Errorf("non-comparable runs in the history: %+v %q", a, skip)
	}
	if why := tracking.InHistory(zrun(9, 1, 1), other); !strings.HasPrefix(why, "not comparable: different device") {
		t.Errorf("another device: %q", why)
	}
	// The window takes the newest: with a window of 5, the 5 newest runs.
	th.Window = 5
	if a, _ := tracking.EvaluateZScore(th, zrun(9, 120, 200), hist); a == nil || a.History != 5 ||
		!strings.Contains(a.Summary, "of its last 5 comparable runs") {
		t.Errorf("window 5: %+v", a)
	}
}

func TestCheckKind(t *testing.T) {
	for _, tc := range []struct {
		th    tracking.Threshold
		field string
	}{
		{tracking.Threshold{Kind: "ttest", Z: 3}, "kind"},
		{tracking.Threshold{Kind: "zscore", Window: 4, Z: 3}, "window"},
		{tracking.Threshold{Kind: "zscore", Window: 101, Z: 3}, "window"},
		{tracking.Threshold{Kind: "zscore", Z: 0.5}, "z"},
		{tracking.Threshold{Kind: "zscore", Z: 11}, "z"},
		{tracking.Threshold{Kind: "zscore", Z: 3, BaselineRun: 2}, "baseline_run"},
		{tracking.Threshold{Kind: "zscore", Z: 3, Percent: 5}, "percent"},
		{tracking.Threshold{BaselineRun: 2, Percent: 5, Window: 20}, "window"},
		{tracking.Threshold{BaselineRun: 2, Percent: 5, Z: 3}, "z"},
	} {
		err := tracking.CheckKind(&tc.th)
		if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v, want 422 naming %s", tc.th, err, tc.field)
		}
	}
	th := tracking.Threshold{Kind: "zscore", Z: 3}
	if err := tracking.CheckKind(&th); err != nil || th.Window != tracking.DefaultWindow {
		t.Errorf("default window: %+v %v", th, err)
	}
	p := tracking.Threshold{BaselineRun: 2, Percent: 5}
	if err := tracking.CheckKind(&p); err != nil || p.Kind != tracking.KindPercent {
		t.Errorf("percent by default: %+v %v", p, err)
	}
	// Duplicates consider kind, window and z.
	z3 := tracking.Threshold{Problem: "p", Variant: "v", Kind: "zscore", Window: 20, Z: 3}
	z5 := z3
	z5.Z = 5
	w10 := z3
	w10.Window = 10
	if !z3.SameAs(z3) || z3.SameAs(z5) || z3.SameAs(w10) || (tracking.Threshold{Round: 1, BaselineRun: 2, Percent: 5}).SameAs(tracking.Threshold{Round: 1, Kind: "zscore", Window: 20, Z: 3}) {
		t.Error("SameAs ignores kind, window or z")
	}
	if !(tracking.Threshold{Round: 1, BaselineRun: 2, Percent: 5}).SameAs(tracking.Threshold{Round: 1, Kind: "percent", BaselineRun: 2, Percent: 5}) {
		t.Error("an empty kind is not percent")
	}
}
