package httpserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Audit finding (blind judging): a shark who had not scored a pitch ran
// its variant under no pitch, read the speedup (runs of no pitch are
// nobody's judgement and visible to all), and filed an estimate fitted to
// it, scored as a prediction since the pitch had no result yet. While the
// round is open, a run of the variant an active pitch names must be a run
// of that pitch (pitches.CheckBlindRun): refused under no pitch or under
// another pitch, for admins too, with nothing stored; accepted on the pitch
// itself, and under no pitch again once the round has closed.
func TestRunOfAPitchedVariantMustBeThePitchs(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	if _, err := a.db.SetRoundMeasurement(context.Background(), a.users["admin"], 1,
		pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "tests", AllowImports: true}, "baseline"); err != nil {
		t.Fatal(err)
	}
	// A run under no pitch from before the pitch was filed: re-queued after
	// the filing, it would be a new run under no pitch.
	var early struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/runs", "admin", cpuRun).wantStatus(t, http.StatusCreated).decode(t, &early)
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", early.ID), "admin", nil).wantStatus(t, http.StatusOK)
	var ref, other struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": "Reference kernel", "body": "x",
		"claim": map[string]float64{"lo": 1.5, "hi": 1.8}, "variant": "reference"}).wantStatus(t, http.StatusCreated).decode(t, &ref)
	a.api("POST", "/api/pitches", "bob", map[string]any{"round": 1, "title": "Something else", "body": "x",
		"claim": map[string]float64{"lo": 1.1, "hi": 1.2}, "variant": "baseline?stages=2"}).wantStatus(t, http.StatusCreated).decode(t, &other)
	a.status(1, pitches.RoundJudging)

	with := func(pitch int64) map[string]any {
		body := maps.Clone(cpuRun)
		if pitch != 0 {
			body["pitch"] = pitch
		}
		return body
	}
	for _, who := range []string{"oracle", "admin"} {
		before := a.countRuns()
		a.api("POST", "/api/runs", who, with(0)).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch_id")
		if a.countRuns() != before {
			t.Fatalf("%s: a refused run was stored", who)
		}
	}
	before := a.countRuns()
	a.api("POST", "/api/runs", "admin", with(other.ID)).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch_id")
	if a.countRuns() != before {
		t.Fatal("a refused run under another pitch was stored")
	}
	a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", early.ID), "admin", nil).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch_id")
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "H100", "problem": "nvfp4_group_gemm", "suite": "tests",
		"variant": "reference", "baseline": "baseline", "shapes": []map[string]any{{"label": "s1", "baseline_us": 100, "variant_us": 50}}}).
		wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch_id")
	if a.countRuns() != before {
		t.Fatal("a refused import was stored")
	}
	var own struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/runs", "admin", with(ref.ID)).wantStatus(t, http.StatusCreated).decode(t, &own)

	// Closed: every result is public, a run under no pitch hides nothing.
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", own.ID), "admin", nil)
	a.status(1, pitches.RoundClosed)
	a.api("POST", "/api/runs", "oracle", with(0)).wantStatus(t, http.StatusCreated)
}
