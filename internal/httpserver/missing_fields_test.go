package httpserver

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A required field left out (or null) is refused naming it, never read as
// empty: it would clear the round's baseline or stop imports counting. An
// explicit "" baseline still means bench's default.
func TestMissingFieldsChangeNothing(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	full := map[string]any{"problem": "nvfp4_group_gemm", "suite": "tests", "baseline": "baseline?stages=2", "device_class": "H100", "allow_imports": true}
	a.api("PUT", "/api/rounds/1/measurement", "admin", full).wantStatus(t, http.StatusOK)
	want, _ := a.db.Round(context.Background(), 1)
	unchanged := func(what string) {
		t.Helper()
		if r, _ := a.db.Round(context.Background(), 1); r.Baseline != want.Baseline || r.Measurement != want.Measurement {
			t.Fatalf("%s changed the round: %q %+v", what, r.Baseline, r.Measurement)
		}
	}

	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]any{}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]any{"baseline": nil}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	unchanged("a baseline request without its baseline")
	b := a.browser().login("admin")
	b.post("/admin/rounds/1/baseline", url.Values{}).wantStatus(t, http.StatusUnprocessableEntity)
	unchanged("the baseline form without its field")
	for field := range full {
		body := maps.Clone(full)
		delete(body, field)
		a.api("PUT", "/api/rounds/1/measurement", "admin", body).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, field)
		body[field] = nil
		a.api("PUT", "/api/rounds/1/measurement", "admin", body).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, field)
		unchanged("a measurement without " + field)
	}

	// "" is bench's default, said on purpose.
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]any{"baseline": ""}).wantStatus(t, http.StatusOK)
	if r, _ := a.db.Round(context.Background(), 1); r.Baseline != "" {
		t.Fatalf("baseline %q, want bench's default", r.Baseline)
	}
	b.post("/admin/rounds/1/baseline", url.Values{"baseline": {"baseline"}}).wantStatus(t, http.StatusSeeOther)
	b.post("/admin/rounds/1/baseline", url.Values{"baseline": {""}}).wantStatus(t, http.StatusSeeOther)
}
