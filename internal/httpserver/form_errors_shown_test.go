package httpserver

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// A refused form post whose form is not on the page for this user (a
// viewer's weights, a contestant's weights, a run form on a server that
// runs nothing for them, an accept form for a run that is not an
// unaccepted suspect) shows the refusal's message; it used to re-render the
// page without the form, and so without any message.
func TestRefusedFormsShowTheirMessage(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	for _, who := range []string{"vera", "alice"} {
		res := a.browser().login(who).post("/rounds/1/weights", map[string][]string{"w_speedup": {"50"}, "w_risk": {"x"}})
		if res.status != http.StatusForbidden {
			t.Fatalf("%s's weights: status %d", who, res.status)
		}
		wantContains(t, res.body, "may not set personal weights")
	}
	// A shark on a closed round: no weights form on its page either.
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "judging"}).wantStatus(t, http.StatusOK)
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "closed"}).wantStatus(t, http.StatusOK)
	res := a.browser().login("oracle").post("/rounds/1/weights", map[string][]string{"w_speedup": {"50"}, "w_risk": {"50"}})
	if res.status != http.StatusConflict {
		t.Fatalf("weights on a closed round: status %d", res.status)
	}
	wantContains(t, res.body, "set personal weights")
	// An accept form post for a run already succeeded: the run page has no
	// accept form, so the refusal is the page.
	var run runner.Run
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "LAB-H100", "problem": "nvfp4_group_gemm", "variant": "auditk",
		"baseline": "baseline", "shapes": []map[string]any{{"label": "s1", "baseline_us": 100, "variant_us": 80, "correct": true}}}).
		wantStatus(t, http.StatusCreated).decode(t, &run)
	res = a.browser().login("admin").post(fmt.Sprintf("/runs/%d/accept", run.ID), map[string][]string{"reason": {"x\x1b"}})
	if res.status < 400 {
		t.Fatalf("accepting a succeeded run: status %d", res.status)
	}
	wantContains(t, res.body, "without control characters")
}
