package httpserver

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// A suspect run an admin accepted counts as a result: the run page's own
// history chart has it (it had only succeeded runs, so an accepted run was
// missing from its own page while /runs/history showed it).
func TestRunPageHistoryHasAcceptedRuns(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	imp := func(variantUs float64) runner.Run {
		var run runner.Run
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "LAB-H100", "problem": "nvfp4_group_gemm", "variant": "auditk",
			"baseline": "baseline", "shapes": []map[string]any{{"label": "s1", "baseline_us": 100, "variant_us": variantUs, "correct": true}}}).
			wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	imp(50)
	imp(52)
	fast := imp(8) // 12.5x: suspect until an admin accepts it
	if fast.Status != runner.StatusSuspect {
		t.Fatalf("a 12.5x import is %s, want suspect", fast.Status)
	}
	page := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", fast.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "2 run(s) of auditk that count as results")
	a.api("POST", fmt.Sprintf("/api/runs/%d/accept", fast.ID), "admin", map[string]string{"reason": "profiled: real"}).wantStatus(t, http.StatusOK)
	page = a.browser().login("admin").get(fmt.Sprintf("/runs/%d", fast.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "3 run(s) of auditk that count as results", fmt.Sprintf("#%d ", fast.ID))
}
