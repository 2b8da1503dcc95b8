package httpserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A shark who has not scored a pitch is told before scoring it that a card
// filed now is late (not scored as a prediction) whenever the store would
// treat it so: after any run with a result, incorrect and suspect included,
// not only after a succeeded one. Otherwise the card is silently not a
// prediction.
func TestLateCardNoticeAfterAnyResult(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	alice, bob := a.pitch("alice", 1, "Succeeds"), a.pitch("bob", 1, "Incorrect")
	a.status(1, pitches.RoundJudging)
	for _, tc := range []struct {
		p       *pitches.Pitch
		correct bool
	}{{alice, true}, {bob, false}} {
		p := tc.p
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": p.Variant,
			"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 373,
				"variant_us": 300, "correct": tc.correct}}}).wantStatus(t, http.StatusCreated)
		page := a.browser().login("oracle").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK)
		if !strings.Contains(page.body, "data-late-card") {
			t.Errorf("pitch %d (imported result correct=%v): the unscored shark's page has no late-card notice", p.ID, tc.correct)
		}
	}
}
