package httpserver

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A shark who had not scored a pitch before it was measured scores it
// afterwards through the API (a late review is still a review): 200, the
// card marked changed_after_result, the shark's standings show the ranking
// once every pitch is scored, and the estimate is never scored as a
// prediction (results, history). Changing that estimate later is refused.
func TestLateScorecardThroughTheAPI(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Three stages")
	a.status(1, pitches.RoundJudging)
	card := map[string]any{"scores": map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8},
		"estimate": map[string]float64{"lo": 1, "hi": 1.2}, "verdict": "FUND"}
	path := fmt.Sprintf("/api/pitches/%d/scorecard", p.ID)
	a.api("PUT", path, "pragmatist", card).wantStatus(t, http.StatusOK)
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": p.Variant,
		"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 373,
			"variant_us": 488}}}).wantStatus(t, http.StatusCreated)

	var st struct {
		RanksShown bool `json:"ranks_shown"`
	}
	a.api("GET", "/api/rounds/1/standings", "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &st)
	if st.RanksShown {
		t.Fatal("the oracle sees the ranking before scoring")
	}

	// Without an estimate: still required.
	a.api("PUT", path, "oracle", map[string]any{"scores": card["scores"]}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "estimate.lo")

	late := map[string]any{"scores": card["scores"], "estimate": map[string]float64{"lo": 0.7, "hi": 0.8}, "verdict": "REJECT"}
	var got struct {
		Version            int  `json:"version"`
		ChangedAfterResult bool `json:"changed_after_result"`
	}
	a.api("PUT", path, "oracle", late).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Version != 1 || !got.ChangedAfterResult {
		t.Fatalf("late card: %+v, want version 1 changed after the result", got)
	}
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": p.ID, "justification": "late but sure"}).wantStatus(t, http.StatusOK)
	a.api("GET", "/api/rounds/1/standings", "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &st)
	if !st.RanksShown {
		t.Error("the oracle scored every pitch and voted, yet the ranking stays withheld")
	}

	// Scored predictions: the claim and the pragmatist's estimate, never the late one.
	var out []roundResult
	a.api("GET", "/api/rounds/1/results", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &out)
	if len(out) != 1 {
		t.Fatalf("results: %+v", out)
	}
	estimates := 0
	for _, sp := range out[0].Scores {
		if sp.Kind != "estimate" {
			continue
		}
		estimates++
		if sp.WhoID == a.users["oracle"].ID {
			t.Errorf("the late estimate is scored: %+v", sp)
		}
	}
	if estimates != 1 {
		t.Errorf("%d estimates scored, want the pragmatist's alone: %+v", estimates, out[0].Scores)
	}
	var h historyJSON
	a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards/history", p.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
	for _, c := range h.Scorecards {
		if c.SharkID == a.users["oracle"].ID && (c.ScoredVersion != 0 || !c.ChangedAfterResult) {
			t.Errorf("the oracle's history: scored version %d, changed after %v; want none scored, changed after", c.ScoredVersion, c.ChangedAfterResult)
		}
	}

	// The late estimate is now locked like any other.
	late["estimate"] = map[string]float64{"lo": 0.7, "hi": 0.9}
	a.api("PUT", path, "oracle", late).wantError(t, http.StatusConflict, pitches.ECONFLICT, "estimate")
}

// Revoking a token twice answers 204 both times (the documented status),
// and the audit log has one token.revoke: the second call changed nothing.
func TestRevokeTokenTwiceAuditsOnce(t *testing.T) {
	a := newApp(t, Config{})
	var tok struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/tokens", "bob", map[string]string{"label": "laptop"}).wantStatus(t, http.StatusCreated).decode(t, &tok)
	path := fmt.Sprintf("/api/tokens/%d", tok.ID)
	a.api("DELETE", path, "bob", nil).wantStatus(t, http.StatusNoContent)
	a.api("DELETE", path, "bob", nil).wantStatus(t, http.StatusNoContent)
	a.api("DELETE", path, "admin", nil).wantStatus(t, http.StatusNoContent)
	var log struct {
		Entries []struct {
			Target string `json:"target"`
		} `json:"entries"`
	}
	a.api("GET", "/api/audit?action=token.revoke", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &log)
	if len(log.Entries) != 1 || log.Entries[0].Target != fmt.Sprintf("token %d", tok.ID) {
		t.Fatalf("token.revoke entries %+v, want one for token %d", log.Entries, tok.ID)
	}
}
