package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// One kernel is one series: runs started as "baseline?stages=1" (stages=1
// is the default) or with their knobs in another order, through the
// variant spec or the knobs map, are stored in the catalogue's spelling,
// and the history and the runs list looked up by any spelling of the
// kernel find them all, with the rows stored before in the order they were
// typed. A lookup by a spelling with a default spelled out still finds the
// old rows stored in it.
func TestRunsOfOneKernelAreOneSeries(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"0"}}, false)
	ctx := context.Background()
	finish := func(id int64, us float64) {
		t.Helper()
		if err := a.db.MarkRunning(ctx, id); err != nil {
			t.Fatal(err)
		}
		res := &runner.Result{Doc: json.RawMessage(`{"note":"stand-in document"}`), Speedup: runner.Interval{Value: 400 / us}, Correct: true,
			Shapes: []runner.Shape{{Index: 0, Label: "g=8 N=4096 K=7168", BaselineMedianUs: 400, VariantMedianUs: us,
				Speedup: runner.Interval{Value: 400 / us}, Correct: true}}}
		if err := a.db.MarkSucceeded(ctx, id, res, runner.Finish{}); err != nil {
			t.Fatal(err)
		}
	}
	submit := func(body map[string]any, want string) int64 {
		t.Helper()
		body["problem"], body["suite"], body["device"] = "nvfp4_group_gemm", "benchmarks", "0"
		var run runner.Run
		a.api("POST", "/api/runs", "admin", body).wantStatus(t, http.StatusCreated).decode(t, &run)
		if run.Variant != want {
			t.Errorf("POST /api/runs %v stored variant %q, want %q", body, run.Variant, want)
		}
		finish(run.ID, 300)
		return run.ID
	}
	old := func(variant string) int64 { // a row stored before runs were stored canonically
		t.Helper()
		run, err := a.db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: variant, Device: "0"})
		if err != nil {
			t.Fatal(err)
		}
		finish(run.ID, 310)
		return run.ID
	}
	const canon = "baseline?tile_m=64&stages=3"
	plain := submit(map[string]any{"variant": "baseline?stages=1"}, "baseline")
	oldDefault := old("baseline?stages=1")
	tiles := []int64{
		submit(map[string]any{"variant": "baseline?stages=3&tile_m=64"}, canon),
		submit(map[string]any{"variant": "baseline", "knobs": map[string]any{"tile_m": 64, "stages": 3}}, canon),
		submit(map[string]any{"variant": canon}, canon),
		old("baseline?stages=3&tile_m=64"),
	}

	history := func(variant string) shapeHistoryJSON {
		t.Helper()
		var h shapeHistoryJSON
		a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant="+url.QueryEscape(variant), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
		return h
	}
	points := func(h shapeHistoryJSON) []int64 {
		var ids []int64
		for _, se := range h.Series {
			for _, p := range se.Points {
				ids = append(ids, p.RunID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	for _, spelling := range []string{canon, "baseline?stages=3&tile_m=64", "baseline?tile_k=256&stages=3&tile_m=64"} {
		h := history(spelling)
		if len(h.Series) != 1 || !slices.Equal(points(h), tiles) || h.Variant != canon {
			t.Errorf("history of %q: variant %q, %d series, points %v; want one series of %q with %v", spelling, h.Variant, len(h.Series), points(h), canon, tiles)
		}
		var runs []runner.Run
		a.api("GET", "/api/runs?problem=nvfp4_group_gemm&variant="+url.QueryEscape(spelling), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &runs)
		var ids []int64
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, tiles) {
			t.Errorf("runs list variant=%q: %v, want %v", spelling, ids, tiles)
		}
	}
	if got := points(history("baseline")); !slices.Equal(got, []int64{plain}) {
		t.Errorf("history of baseline: %v, want %v", got, []int64{plain})
	}
	if got := points(history("baseline?stages=1")); !slices.Equal(got, []int64{plain, oldDefault}) {
		t.Errorf("history of baseline?stages=1: %v, want the new run and the old row %v", got, []int64{plain, oldDefault})
	}
}

// A variant threshold created with another spelling of a kernel is stored
// in the catalogue's spelling (so the same bound in another spelling is a
// duplicate) and covers the runs of that kernel however they were typed;
// thresholds stored before in another spelling (knobs reordered, a default
// spelled out) cover them too. Another kernel's run raises nothing.
func TestThresholdSpellingMatchesTheKernelsRuns(t *testing.T) {
	a, _ := newTrackedApp(t)
	imp := func(variant string, us float64) runner.Run {
		t.Helper()
		var run runner.Run
		samples := func(x float64) []float64 { return []float64{x * 0.99, x, x * 1.01, x * 0.995, x * 1.005} }
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": variant,
			"baseline": "baseline", "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400,
				"variant_us": us, "baseline_samples_us": samples(400), "variant_samples_us": samples(us)}}}).wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	const canon = "baseline?tile_m=64&stages=3"
	base := imp(canon, 300)
	body := func(variant string, percent float64) map[string]any {
		return map[string]any{"problem": "nvfp4_group_gemm", "variant": variant, "baseline_run": base.ID, "percent": percent}
	}
	var th tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", body("baseline?stages=3&tile_m=64", 5)).wantStatus(t, http.StatusCreated).decode(t, &th)
	if th.Variant != canon {
		t.Errorf("threshold stored with variant %q, want %q", th.Variant, canon)
	}
	a.api("POST", "/api/thresholds", "admin", body("baseline?tile_k=256&stages=3&tile_m=64", 5)).wantError(t, http.StatusConflict, "conflict", "variant")
	for _, o := range []struct {
		variant string
		percent float64
	}{{"baseline?stages=3&tile_m=64", 10}, {"baseline?stages=3&tile_m=64&tile_k=256", 15}} {
		if _, err := a.db.AddThreshold(context.Background(), tracking.Threshold{Problem: "nvfp4_group_gemm", Variant: o.variant,
			BaselineRun: base.ID, Percent: o.percent, CreatedBy: a.users["admin"].ID}); err != nil {
			t.Fatal(err)
		}
	}

	alerts := func(run runner.Run) []tracking.Alert {
		t.Helper()
		var out struct {
			Regressions []tracking.Alert `json:"regressions"`
		}
		a.api("GET", fmt.Sprintf("/api/runs/%d/regressions", run.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &out)
		return out.Regressions
	}
	for _, spelling := range []string{canon, "baseline?stages=3&tile_m=64"} {
		slow := imp(spelling, 360) // 17% slower than the baseline run
		if got := alerts(slow); len(got) != 3 {
			t.Errorf("a slow run of %q (stored %q) raised %d alerts, want 3 (one per threshold): %+v", spelling, slow.Variant, len(got), got)
		}
	}
	if got := alerts(imp("baseline?stages=3", 360)); len(got) != 0 {
		t.Errorf("another kernel's run raised %+v", got)
	}
}
