package httpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// demoApp serves the demo tournament with a runner over its database
// (not started: these tests only read results).
func demoApp(t *testing.T) (*app, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { _ = db.Close() })
	if _, err := demo.Load(context.Background(), db); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	r, err := runner.New(runner.Config{Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Runner: r}, db)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{t: t, srv: newTestServer(t, h), db: db, users: map[string]*pitches.User{}, tokens: map[string]string{}}
	return a, db
}

// demoLogin logs a browser in with a demo account's password.
func demoLogin(t *testing.T, a *app, login string) *browser {
	t.Helper()
	b := a.browser()
	for _, l := range demo.Logins {
		if l.Login == login {
			r := b.post("/login", map[string][]string{"login": {login}, "password": {l.Password}})
			if r.status != http.StatusSeeOther {
				t.Fatalf("login %s: %d", login, r.status)
			}
			return b
		}
	}
	t.Fatalf("no demo login %s", login)
	return nil
}

// scoring.md's worked example, on the demo's round-1 pitch page: the
// imported B200 run of Pipeline Stages measures 0.7355; the claim
// [1.5, 1.8] scores 7.31 (interval score) and 0.804 (absolute log error), a
// miss. The numbers are read from the page and from the results export.
func TestDemoPitchScoresMatchWorkedExample(t *testing.T) {
	a, db := demoApp(t)
	ps, err := db.Pitches(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var pipe *pitches.Pitch
	for i := range ps {
		if ps[i].Title == "Pipeline Stages" {
			pipe = &ps[i]
		}
	}
	if pipe == nil {
		t.Fatal("no Pipeline Stages pitch in round 1")
	}
	b := demoLogin(t, a, "viewer")
	page := b.get(fmt.Sprintf("/pitches/%d", pipe.ID)).wantStatus(t, http.StatusOK)
	wantContains(t, page.body, "0.7355x", "imported: B200, measured elsewhere", "<svg")

	// The claim's row of the predictions table.
	claimRow := regexp.MustCompile(`(?s)<tr><td>Contestant 1 <span class="muted small">claim</span></td><td>1.5-1.8x</td><td class="num" data-interval-score>([^<]*)</td><td class="num" data-abs-log-error>([^<]*)</td>.*?data-outcome>([a-z]+)<`)
	m := claimRow.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no claim row on the pitch page:\n%s", page.body)
	}
	if m[1] != "7.31" || m[2] != "0.804" || m[3] != "miss" {
		t.Fatalf("claim scored %q / %q / %q, want 7.31 / 0.804 / miss", m[1], m[2], m[3])
	}
	// Deal terms of the Pragmatic Engineer's vote, evaluated on the import.
	wantContains(t, page.body, "geomean 0.74x, needs &gt;= 1.4x: not met", "not met")

	// The same numbers from the round's results export (API).
	a.user("apiviewer", pitches.RoleViewer)
	var results []struct {
		Pitch    int64   `json:"pitch_id"`
		Measured float64 `json:"measured_speedup"`
		Recap    string  `json:"recap"`
		Preds    []struct {
			Kind  string       `json:"kind"`
			Score runner.Score `json:"score"`
		} `json:"predictions"`
	}
	a.api("GET", "/api/rounds/1/results", "apiviewer", nil).wantStatus(t, http.StatusOK).decode(t, &results)
	found := false
	for _, r := range results {
		if r.Pitch != pipe.ID {
			continue
		}
		found = true
		if fmt.Sprintf("%.4f", r.Measured) != "0.7355" || r.Recap != "predicted 1.5-1.8x, measured 0.74x: 26% slower" {
			t.Errorf("result %+v", r)
		}
		for _, p := range r.Preds {
			if p.Kind == "claim" && (fmt.Sprintf("%.2f", p.Score.IntervalScore) != "7.31" || fmt.Sprintf("%.3f", p.Score.AbsLogError) != "0.804" || p.Score.Hit) {
				t.Errorf("claim score %+v", p.Score)
			}
		}
	}
	if !found {
		t.Fatalf("pitch %d not in the results: %+v", pipe.ID, results)
	}
	csvResp := b.get("/rounds/1/results.csv").wantStatus(t, http.StatusOK)
	wantContains(t, csvResp.body, "Pipeline Stages", "7.3", "claim")

	// The round page's recap, written as the seeds' recaps are.
	round := b.get("/rounds/1").wantStatus(t, http.StatusOK)
	wantContains(t, round.body, "predicted 1.5-1.8x, measured 0.74x: 26% slower", "Predicted against measured")

	// The calibration page is not empty: the contestant's claim and the
	// Pragmatic Engineer's estimate are both scored.
	cal := b.get("/calibration").wantStatus(t, http.StatusOK)
	wantContains(t, cal.body, "Contestant 1", "The Pragmatic Engineer", "0% (0 of 1; nominal 80%)", "<svg")

	// The run page marks the import and shows the per-shape table.
	var runs []runner.Run
	a.api("GET", fmt.Sprintf("/api/runs?pitch=%d", pipe.ID), "apiviewer", nil).wantStatus(t, http.StatusOK).decode(t, &runs)
	if len(runs) != 1 || !runs[0].Imported {
		t.Fatalf("runs of the pitch: %+v", runs)
	}
	run := b.get(fmt.Sprintf("/runs/%d", runs[0].ID)).wantStatus(t, http.StatusOK)
	wantContains(t, run.body, "imported: B200, measured elsewhere", "g=8 N=4096 K=7168", "0.764x", "373.00", "488.00")
	var js map[string]any
	if err := json.Unmarshal([]byte(b.get(fmt.Sprintf("/runs/%d.json", runs[0].ID)).body), &js); err != nil || js["imported"] != true {
		t.Errorf("run JSON export: %v %v", err, js["imported"])
	}
}

// Measured results are withheld from a shark who has not scored the pitch
// while its round is open (scoring.md), on the pitch page and in the API;
// and once a result exists, predictions are locked (409).
func TestResultsHiddenAndPredictionsLocked(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	a.status(1, pitches.RoundJudging)
	card := map[string]any{"scores": map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8},
		"estimate": map[string]float64{"lo": 1, "hi": 1.2}, "verdict": "FUND"}
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "pragmatist", card).wantStatus(t, http.StatusOK)

	imp := fmt.Sprintf(`{"device":"B200","problem":"nvfp4_group_gemm","variant":"baseline","baseline":"baseline","pitch_id":%d,
		"shapes":[{"label":"g=8 N=4096 K=7168","baseline_us":373,"variant_us":488,"correct":true}]}`, p.ID)
	var run runner.Run
	a.api("POST", "/api/runs/import", "admin", imp).wantStatus(t, http.StatusCreated).decode(t, &run)

	// The Oracle has not scored: no figures for him.
	var got struct {
		runner.Run
		Hidden bool `json:"result_hidden"`
	}
	a.api("GET", fmt.Sprintf("/api/runs/%d", run.ID), "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if !got.Hidden || got.HasResult || got.Speedup.Value != 0 || len(got.Shapes) != 0 {
		t.Fatalf("oracle sees %+v", got)
	}
	page := a.browser().login("oracle").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	wantContains(t, page, "stay hidden until you submit your scorecard", "data-late-card")
	wantNotContains(t, page, "0.7643x", "0.764", "Locked: this pitch has been measured")
	if regexp.MustCompile(`name="lo"[^>]*readonly`).MatchString(page) {
		t.Error("a shark without a card gets a read-only estimate on a measured pitch: the form cannot score it")
	}
	// The pragmatist scored and sees it.
	page = a.browser().login("pragmatist").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	wantContains(t, page, "0.7643x", "data-interval-score")

	wantContains(t, page, "Locked: this pitch has been measured")
	// Locked: the pragmatist cannot change his estimate, and nothing is
	// stored. The Oracle may still score the pitch (a late card: stored,
	// never scored as a prediction), so his standings can show ranks.
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "oracle", card).wantStatus(t, http.StatusOK)
	card["estimate"] = map[string]float64{"lo": 0.7, "hi": 0.8}
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "pragmatist", card).wantError(t, http.StatusConflict, pitches.ECONFLICT, "estimate")
	cards := a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards", p.ID), "admin", nil).wantStatus(t, http.StatusOK).body
	if strings.Count(cards, `"shark_id"`) != 2 || strings.Count(cards, `"hi": 1.2`) != 2 || strings.Contains(cards, `"version": 2`) || strings.Contains(cards, `"hi": 0.8`) {
		t.Fatalf("cards after the refused edit: %s", cards)
	}

	// Deal terms on a vote, through the API, evaluated on the run.
	vote := map[string]any{"pitch": p.ID, "justification": "deal", "terms": map[string]any{"min_geomean": 1.4, "max_regression": 0.1, "correct": true}}
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", vote).wantStatus(t, http.StatusOK)
	var withTerms struct {
		Terms []struct {
			Shark string `json:"shark"`
			Term  string `json:"term"`
			Met   bool   `json:"met"`
			Text  string `json:"text"`
		} `json:"terms"`
	}
	a.api("GET", fmt.Sprintf("/api/runs/%d", run.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &withTerms)
	if len(withTerms.Terms) != 3 || withTerms.Terms[0].Met || withTerms.Terms[1].Met || !withTerms.Terms[2].Met {
		t.Fatalf("terms %+v", withTerms.Terms)
	}
	vote["terms"] = map[string]any{"max_variation": 2}
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", vote).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "terms.max_variation")
	vote["terms"] = map[string]any{"min_speedup": 2}
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", vote).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "terms.min_speedup")
}

// The round's baseline is the admin's to set, in the API and on the admin
// rounds page, checked against the kernel manifest, until the round closes.
func TestRoundBaseline(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm"})
	a.status(1, pitches.RoundJudging)
	var round struct {
		Baseline string `json:"baseline"`
	}
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]string{"baseline": "baseline?stages=2"}).wantStatus(t, http.StatusOK).decode(t, &round)
	if round.Baseline != "baseline?stages=2" {
		t.Fatalf("baseline %q", round.Baseline)
	}
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]string{"baseline": "baseline?stages=9"}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	a.api("PUT", "/api/rounds/1/baseline", "oracle", map[string]string{"baseline": "baseline"}).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	b := a.browser().login("admin")
	wantContains(t, b.get("/admin/rounds").body, `action="/admin/rounds/1/baseline"`, `value="baseline?stages=2"`)
	r := b.post("/admin/rounds/1/baseline", map[string][]string{"baseline": {"baseline"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("admin form: %d %s", r.status, r.body)
	}
	if got, _ := a.db.Round(context.Background(), 1); got.Baseline != "baseline" {
		t.Fatalf("stored baseline %q", got.Baseline)
	}
}

// The run page's history leaves out runs measured with another fingerprint
// (device model, driver, NVRTC) and flags the mismatch.
func TestRunHistoryFingerprintMismatch(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	doc, err := os.ReadFile("../runner/testdata/cpu-tests-aa.json")
	if err != nil {
		t.Skipf("needs the runner's A/A fixture: %v", err)
	}
	ctx := context.Background()
	store := func(doc []byte) int64 {
		run, err := a.db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := runner.ParseResult(doc, run)
		if err != nil {
			t.Fatalf("parse fixture: %v", err)
		}
		if err := a.db.MarkRunning(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if err := a.db.MarkSucceeded(ctx, run.ID, res, runner.Finish{}); err != nil {
			t.Fatal(err)
		}
		return run.ID
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	first := store(doc)
	fp := d["fingerprint"].(map[string]any)
	fp["driver_version"] = "go0.0-other"
	// Keep the document valid: its key is derived from the three fields.
	fp["key"] = fingerprintKey(fp["device_model"].(string), "go0.0-other", fp["nvrtc_version"].(string))
	d["device"].(map[string]any)["driver_version"] = "go0.0-other"
	other, _ := json.Marshal(d)
	second := store(other)

	page := a.browser().login("vera").get(fmt.Sprintf("/runs/%d", second)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "fingerprint_mismatch", fmt.Sprintf("#%d (", first))
	page = a.browser().login("vera").get(fmt.Sprintf("/runs/%d", first)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "fingerprint_mismatch")
}

// fingerprintKey is docs/bench-result.md's key: the first 16 hex digits of
// sha256(device_model NUL driver_version NUL nvrtc_version).
func fingerprintKey(model, driver, nvrtc string) string {
	h := sha256.Sum256([]byte(model + "\x00" + driver + "\x00" + nvrtc))
	return hex.EncodeToString(h[:])[:16]
}
