package httpserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// A zscore threshold is created through the API (kind, window, z; no
// baseline run), listed with them, and judges each imported run against
// the latest comparable imports of its variant: nothing before 5 of them,
// nothing for noise, an alert for a clear slowdown; an import from another
// device label is no part of the history. Its fields are checked, each 422
// naming it, and an exact duplicate is a 409.
func TestZScoreThresholdAlertsOnImports(t *testing.T) {
	a, _ := newTrackedApp(t)
	const variant = "baseline?stages=3"
	imp := func(device string, us float64) runner.Run {
		t.Helper()
		var run runner.Run
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": device, "problem": "nvfp4_group_gemm", "variant": variant,
			"baseline": "baseline", "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400, "variant_us": us}}}).
			wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	alerts := func(run runner.Run) []tracking.Alert {
		t.Helper()
		var out struct {
			Regressions []tracking.Alert `json:"regressions"`
		}
		a.api("GET", fmt.Sprintf("/api/runs/%d/regressions", run.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &out)
		return out.Regressions
	}
	body := func(kv ...any) map[string]any {
		m := map[string]any{"problem": "nvfp4_group_gemm", "variant": variant, "kind": "zscore", "window": 10, "z": 3}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"an unknown kind", body("kind", "ttest"), "kind"},
		{"a window of 4", body("window", 4), "window"},
		{"a window of 101", body("window", 101), "window"},
		{"z of 0.5", body("z", 0.5), "z"},
		{"z of 11", body("z", 11), "z"},
		{"no z", body("z", nil), "z"},
		{"a baseline run", body("baseline_run", 1), "baseline_run"},
		{"a window on a percent threshold", body("kind", "percent", "baseline_run", 1, "percent", 5, "z", nil), "window"},
		{"a z on a percent threshold", body("kind", "percent", "baseline_run", 1, "percent", 5, "window", nil), "z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := a.api("POST", "/api/thresholds", "admin", c.body)
			res.wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, c.field)
		})
	}
	var th tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", body()).wantStatus(t, http.StatusCreated).decode(t, &th)
	if th.Kind != "zscore" || th.Window != 10 || th.Z != 3 || th.BaselineRun != 0 {
		t.Fatalf("created: %+v", th)
	}
	a.api("POST", "/api/thresholds", "admin", body()).wantError(t, http.StatusConflict, "conflict", "variant")
	var def tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", body("window", nil, "z", 5)).wantStatus(t, http.StatusCreated).decode(t, &def)
	if def.Window != tracking.DefaultWindow {
		t.Errorf("default window: %+v", def)
	}
	res := a.api("GET", "/api/thresholds", "admin", nil).wantStatus(t, http.StatusOK)
	for _, field := range []string{`"kind": "zscore"`, `"window": 10`, `"z": 3`} {
		wantContains(t, res.body, field)
	}

	// Four runs of history: the fifth run is judged by nothing, however slow.
	for _, us := range []float64{300, 303, 297, 301.5} {
		imp("B200", us)
	}
	if got := alerts(imp("B200", 600)); len(got) != 0 {
		t.Errorf("with 4 runs of history: %+v", got)
	}
	// Now five (the slow one counts too: it is a result); another
	// device's import is not comparable and stays out of the history.
	imp("H100", 900)
	for _, us := range []float64{299, 302} {
		imp("B200", us)
	}
	if got := alerts(imp("B200", 305)); len(got) != 0 {
		t.Errorf("noise raised %+v", got)
	}
	// With 600 us in the history the sd is large; add enough quiet runs to
	// push it out of the window of 10.
	for _, us := range []float64{300, 301, 299, 302, 298, 300, 301, 299.5, 300.5, 300} {
		imp("B200", us)
	}
	slow := imp("B200", 360)
	got := alerts(slow)
	if len(got) != 1 || got[0].ThresholdID != th.ID || got[0].Kind != "zscore" || got[0].History != 10 || len(got[0].Shapes) != 1 {
		t.Fatalf("a 20%% slower run: %+v", got)
	}
	s := got[0].Shapes[0]
	if s.RunUs != 360 || !(s.MeanUs > 299 && s.MeanUs < 301) || !(s.BoundaryUs > 300 && s.BoundaryUs < 310) || !(s.ZScore > 3) {
		t.Errorf("shape: %+v", s)
	}
	want := fmt.Sprintf("run #%d is above the z=3 boundary of its last 10 comparable runs on 1 of 1 shapes (variant %s of nvfp4_group_gemm); worst: g=8 N=4096 K=7168 at ", slow.ID, variant)
	if !strings.HasPrefix(got[0].Summary, want) {
		t.Errorf("summary: %s", got[0].Summary)
	}
	// The H100 import has fewer than 5 runs of its own history.
	if got := alerts(imp("H100", 2000)); len(got) != 0 {
		t.Errorf("H100 run with 1 run of history: %+v", got)
	}
}
