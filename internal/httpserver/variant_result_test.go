package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// "Predictions are locked once a result for that variant exists"
// (scoring.md): a run of the variant under no pitch, made before the pitch
// was filed, is a result everyone could see. So the pitch's claim, filed
// after it, is not scored as a prediction and cannot be changed, and a
// shark's card is late (stored, counted in the standings, not a
// prediction), as after the pitch's own first result.
func TestAResultOfTheVariantBeforeThePitchLocksPredictions(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	if _, err := a.db.SetRoundMeasurement(context.Background(), a.users["admin"], 1,
		pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "benchmarks", AllowImports: true}, "baseline"); err != nil {
		t.Fatal(err)
	}
	imp := func(pitch int64, variantUs float64) {
		t.Helper()
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline?stages=2",
			"baseline": "baseline", "pitch_id": pitch, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 373,
				"variant_us": variantUs}}}).wantStatus(t, http.StatusCreated)
	}
	imp(0, 300) // the team measured it first, under no pitch: 1.24x for all to see
	var p struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": "Two stages", "body": "x",
		"claim": map[string]float64{"lo": 1.2, "hi": 1.3}, "variant": "baseline?stages=2"}).wantStatus(t, http.StatusCreated).decode(t, &p)
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", p.ID), "alice", map[string]any{"title": "Two stages", "body": "x",
		"claim": map[string]float64{"lo": 1.23, "hi": 1.25}, "variant": "baseline?stages=2"}).wantError(t, http.StatusConflict, pitches.ECONFLICT, "claim")
	a.status(1, pitches.RoundJudging)
	page := a.browser().login("oracle").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK)
	if !strings.Contains(page.body, "data-late-card") {
		t.Error("the pitch page does not tell the shark that a card now is late")
	}
	var card struct {
		ChangedAfterResult bool `json:"changed_after_result"`
	}
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "oracle", map[string]any{
		"scores":   map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8},
		"estimate": map[string]float64{"lo": 1.23, "hi": 1.25}, "verdict": "FUND"}).wantStatus(t, http.StatusOK).decode(t, &card)
	if !card.ChangedAfterResult {
		t.Error("a card given after a result of the pitch's variant existed is not marked late")
	}
	imp(p.ID, 301) // the pitch's own measurement
	var out []roundResult
	a.api("GET", "/api/rounds/1/results", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &out)
	if len(out) != 1 {
		t.Fatalf("results: %+v", out)
	}
	for _, sp := range out[0].Scores {
		t.Errorf("scored as a prediction, though made after the variant's result: %+v", sp)
	}
}
