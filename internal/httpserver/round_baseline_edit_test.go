package httpserver

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Editing or creating a round checks its baseline as PUT
// /api/rounds/{n}/baseline does: against the round's measurement (the
// stored one when the edit leaves it), and not at all on a round that
// declares no problem, which takes no baseline. A refused edit changes
// nothing.
func TestRoundEditChecksBaseline(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	edit := func(baseline string) map[string]any {
		return map[string]any{"title": "Round title", "criteria": rubricJSON(), "baseline": baseline}
	}
	form := func(baseline string) url.Values {
		return url.Values{"title": {"Round title"}, "problem": {""}, "baseline": {baseline}, "key": {"speedup"}, "name": {"S"},
			"description": {""}, "weight": {"100"}}
	}
	b := a.browser().login("admin")
	// No problem declared: no baseline at all.
	for _, method := range []string{"PUT", "PATCH"} {
		a.api(method, "/api/rounds/1", "admin", edit("baseline")).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	}
	b.post("/admin/rounds/1/edit", form("baseline")).wantStatus(t, http.StatusUnprocessableEntity)
	a.api("POST", "/api/rounds", "admin", map[string]any{"number": 2, "title": "r2", "criteria": rubricJSON(), "baseline": "nonsense?x=1"}).
		wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	if _, err := a.db.Round(context.Background(), 2); pitches.ErrorCode(err) != pitches.ENOTFOUND {
		t.Fatalf("a refused round was stored: %v", err)
	}
	if r, _ := a.db.Round(context.Background(), 1); r.Baseline != "" {
		t.Fatalf("a refused edit stored baseline %q", r.Baseline)
	}

	// A declared problem: the baseline is checked against it.
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline?stages=2"})
	for _, bad := range []string{"reference", "baseline?zz=1"} {
		for _, method := range []string{"PUT", "PATCH"} {
			a.api(method, "/api/rounds/1", "admin", edit(bad)).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
		}
		b.post("/admin/rounds/1/edit", form(bad)).wantStatus(t, http.StatusUnprocessableEntity)
	}
	if r, _ := a.db.Round(context.Background(), 1); r.Baseline != "baseline?stages=2" {
		t.Fatalf("a refused edit stored baseline %q", r.Baseline)
	}
	a.api("PUT", "/api/rounds/1", "admin", edit("baseline?stages=3")).wantStatus(t, http.StatusOK)
	b.post("/admin/rounds/1/edit", form("baseline")).wantStatus(t, http.StatusSeeOther)
	if r, _ := a.db.Round(context.Background(), 1); r.Baseline != "baseline" || r.Measurement.Problem != "nvfp4_group_gemm" {
		t.Fatalf("edits stored %q %+v", r.Baseline, r.Measurement)
	}
}
