package httpserver

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// clock is a settable store clock, so versions and runs get the times a
// test needs.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// importAt stores an import of pitch p (one shape, baseline/variant us) as
// the store's clock stands.
func importAt(t *testing.T, a *app, p *pitches.Pitch, baseUs, varUs float64, samples []float64) *runner.Run {
	t.Helper()
	variant := p.Variant // a run counts towards its pitch only if it measures the pitch's variant
	if variant == "" {
		variant = "baseline"
	}
	req := &runner.ImportRequest{Device: "B200", Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: variant,
		Baseline: "baseline", PitchID: p.ID, Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: baseUs, VariantUs: varUs}}}
	if samples != nil {
		req.Shapes[0].BaselineSamplesUs = samples
		req.Shapes[0].VariantSamplesUs = samples
	}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		t.Fatalf("import document: %v", err)
	}
	run, res, err := req.ImportResult(a.users["admin"].ID)
	if err != nil {
		t.Fatalf("import result: %v", err)
	}
	stored, err := a.db.Import(context.Background(), run, res)
	if err != nil {
		t.Fatalf("store import: %v", err)
	}
	return stored
}

// measuredRound creates round n measuring the group GEMM's benchmarks
// against "baseline", imports counting, so that the runs of these tests
// are its pitches' results.
func measuredRound(t *testing.T, a *app, n int) {
	t.Helper()
	a.round(n)
	m := pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "benchmarks", AllowImports: true}
	if _, err := a.db.SetRoundMeasurement(context.Background(), a.users["admin"], n, m, "baseline"); err != nil {
		t.Fatalf("round %d measurement: %v", n, err)
	}
}

func scoresWith(x float64, lo, hi float64) pitches.ScorecardInput {
	in := allScores(x)
	in.Estimate = pitches.Range{Lo: lo, Hi: hi}
	return in
}

type historyJSON struct {
	Pitch         int64      `json:"pitch"`
	FirstResultAt *time.Time `json:"first_result_at"`
	Hidden        int        `json:"hidden"`
	Scorecards    []struct {
		SharkID            int64 `json:"shark_id"`
		Shark              string
		ChangedAfterResult bool `json:"changed_after_result"`
		ScoredVersion      int  `json:"scored_version"`
		Versions           []struct {
			Version            int                `json:"version"`
			Scores             map[string]float64 `json:"scores"`
			Estimate           pitches.Range      `json:"estimate"`
			Verdict            string             `json:"verdict"`
			WeightedTotal      float64            `json:"weighted_total"`
			CreatedAt          time.Time          `json:"created_at"`
			ChangedAfterResult bool               `json:"changed_after_result"`
		} `json:"versions"`
	} `json:"scorecards"`
}

// Every scorecard version with its time, by API and on the pitch page,
// with the versions stored after the first result marked, under the
// scorecards' own visibility; and every vote version.
func TestScorecardAndVoteHistory(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	clk := &clock{t: t0}
	a.db.Now = clk.now
	third := a.user("third", pitches.RoleShark)
	_ = third
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Pipeline stages")
	q := a.pitch("bob", 1, "Other")
	a.status(1, pitches.RoundJudging)

	submit := func(at time.Duration, login string, in pitches.ScorecardInput) {
		t.Helper()
		clk.set(t0.Add(at))
		if _, err := a.db.SubmitScorecard(ctx, a.users[login], p.ID, in); err != nil {
			t.Fatalf("%s scores at +%v: %v", login, at, err)
		}
	}
	submit(0, "oracle", scoresWith(5, 1.1, 1.3))
	submit(30*time.Minute, "pragmatist", scoresWith(6, 0.9, 1.2))
	submit(time.Hour, "oracle", scoresWith(6, 1.2, 1.4))
	clk.set(t0.Add(2 * time.Hour))
	importAt(t, a, p, 120, 100, nil) // the first result: 1.2x
	submit(3*time.Hour, "oracle", func() pitches.ScorecardInput {
		in := scoresWith(9, 1.2, 1.4) // the estimate is locked; the scores move
		in.Verdict = "REJECT"
		return in
	}())

	var h historyJSON
	a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards/history", p.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
	if h.FirstResultAt == nil || !h.FirstResultAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("first_result_at %v, want %v", h.FirstResultAt, t0.Add(2*time.Hour))
	}
	if len(h.Scorecards) != 2 || h.Hidden != 0 {
		t.Fatalf("admin sees %d histories (%d hidden), want 2", len(h.Scorecards), h.Hidden)
	}
	var oracle = h.Scorecards[0]
	if oracle.SharkID != a.users["oracle"].ID {
		oracle = h.Scorecards[1]
	}
	if len(oracle.Versions) != 3 || !oracle.ChangedAfterResult || oracle.ScoredVersion != 2 {
		t.Fatalf("oracle's history: %d versions, changed after %v, scored version %d; want 3, true, 2", len(oracle.Versions), oracle.ChangedAfterResult, oracle.ScoredVersion)
	}
	for i, want := range []struct {
		at      time.Duration
		total   float64
		lo      float64
		verdict string
		after   bool
	}{{0, 5, 1.1, "FUND", false}, {time.Hour, 6, 1.2, "FUND", false}, {3 * time.Hour, 9, 1.2, "REJECT", true}} {
		v := oracle.Versions[i]
		if v.Version != i+1 || !v.CreatedAt.Equal(t0.Add(want.at)) || v.WeightedTotal != want.total || v.Estimate.Lo != want.lo ||
			v.Verdict != want.verdict || v.ChangedAfterResult != want.after || v.Scores["speedup"] != want.total {
			t.Errorf("version %d: %+v, want at +%v total %v estimate lo %v verdict %s changed after %v", i+1, v, want.at, want.total, want.lo, want.verdict, want.after)
		}
	}

	// The current cards say so too.
	var cur struct {
		Scorecards []scorecardJSON `json:"scorecards"`
	}
	a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards", p.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &cur)
	for _, c := range cur.Scorecards {
		if want := c.SharkID == a.users["oracle"].ID; c.ChangedAfterResult != want {
			t.Errorf("current card of %s: changed_after_result %v, want %v", c.Shark, c.ChangedAfterResult, want)
		}
	}
	clk.set(t0.Add(3*time.Hour + time.Minute))
	var again scorecardJSON
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "pragmatist", map[string]any{"scores": scoresWith(7, 0, 0).Scores,
		"estimate": map[string]float64{"lo": 0.9, "hi": 1.2}}).wantStatus(t, http.StatusOK).decode(t, &again)
	if !again.ChangedAfterResult || again.Version != 2 {
		t.Fatalf("a card changed after the result comes back as %+v", again)
	}

	// Same visibility as the scorecards: a shark who has not scored sees
	// none of the others' histories, another contestant neither; a shark
	// who scored sees them all.
	for login, want := range map[string]int{"third": 0, "bob": 0, "pragmatist": 2, "oracle": 2} {
		var got historyJSON
		a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards/history", p.ID), login, nil).wantStatus(t, http.StatusOK).decode(t, &got)
		if len(got.Scorecards) != want || got.Hidden != 2-want {
			t.Errorf("%s sees %d histories (%d hidden), want %d", login, len(got.Scorecards), got.Hidden, want)
		}
	}
	a.api("GET", "/api/pitches/999/scorecards/history", "admin", nil).wantError(t, http.StatusNotFound, pitches.ENOTFOUND, "")
	a.api("GET", "/api/pitches/x/scorecards/history", "admin", nil).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "id")

	// The page: each card's history, collapsed, the late version marked.
	page := a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "History: 3 version(s)", "History: 2 version(s)", "changed after the result", "scored estimate",
		"1.1x – 1.3x", "REJECT", t0.Add(time.Hour).Format("2006-01-02 15:04 UTC"))
	third2 := a.browser().login("third").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantNotContains(t, third2, "History:", "1.1x – 1.3x")

	// Votes: every version, by API and on the round page.
	vote := func(at time.Duration, pitch *pitches.Pitch, why string) {
		t.Helper()
		clk.set(t0.Add(at))
		if _, err := a.db.CastVote(ctx, a.users["oracle"], 1, pitches.VoteInput{PitchID: pitch.ID, Justification: why}); err != nil {
			t.Fatalf("vote: %v", err)
		}
	}
	vote(4*time.Hour, p, "first thoughts")
	vote(5*time.Hour, q, "changed my mind")
	var vh struct {
		Round int `json:"round"`
		Votes []struct {
			SharkID  int64      `json:"shark_id"`
			Versions []voteJSON `json:"versions"`
		} `json:"votes"`
	}
	a.api("GET", "/api/rounds/1/votes/history", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &vh)
	if len(vh.Votes) != 1 || len(vh.Votes[0].Versions) != 2 {
		t.Fatalf("vote history: %+v", vh)
	}
	v1, v2 := vh.Votes[0].Versions[0], vh.Votes[0].Versions[1]
	if v1.Pitch != p.ID || v2.Pitch != q.ID || v1.Justification != "first thoughts" || !v2.CreatedAt.Equal(t0.Add(5*time.Hour)) {
		t.Fatalf("vote versions %+v, %+v", v1, v2)
	}
	// Votes stay hidden from a shark who has not voted, while the round is open.
	var none struct {
		Votes []json.RawMessage `json:"votes"`
	}
	a.api("GET", "/api/rounds/1/votes/history", "pragmatist", nil).wantStatus(t, http.StatusOK).decode(t, &none)
	if len(none.Votes) != 0 {
		t.Fatalf("pragmatist (no vote) sees %d vote histories", len(none.Votes))
	}
	a.api("GET", "/api/rounds/9/votes/history", "admin", nil).wantError(t, http.StatusNotFound, pitches.ENOTFOUND, "*")
	round := a.browser().login("admin").get("/rounds/1").wantStatus(t, http.StatusOK).body
	wantContains(t, round, "Vote history", "first thoughts", "changed my mind")
	wantNotContains(t, a.browser().login("pragmatist").get("/rounds/1").body, "first thoughts")
}

// Calibration (and every scored prediction) uses the estimate as it stood
// when the pitch's first result existed, not a later edit.
func TestCalibrationScoresThePreResultEstimate(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	clk := &clock{t: t0}
	a.db.Now = clk.now
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(ctx, a.users["oracle"], p.ID, scoresWith(6, 1.1, 1.3)); err != nil {
		t.Fatal(err)
	}
	// The store refuses a new estimate once a succeeded run exists, so the
	// change after the result is made here the only way the store allows:
	// stored before the run row, which then carries an earlier time (as a
	// run finished before a late scorecard reached the database would).
	// The rule under test is the scoring's, independent of the lock.
	clk.set(t0.Add(3 * time.Hour))
	if _, err := a.db.SubmitScorecard(ctx, a.users["oracle"], p.ID, scoresWith(6, 2, 2.5)); err != nil {
		t.Fatal(err)
	}
	clk.set(t0.Add(2 * time.Hour))
	importAt(t, a, p, 120, 100, nil) // measured 1.2x: inside 1.1-1.3, outside 2-2.5
	a.status(1, pitches.RoundClosed)

	cal := a.browser().login("vera").get("/calibration").wantStatus(t, http.StatusOK).body
	wantContains(t, cal, "100% (1 of 1; nominal 80%)", "1.1-1.3x (before the result; now 2-2.5x)")
	wantNotContains(t, cal, "0% (0 of 1")

	var out []roundResult
	a.api("GET", "/api/rounds/1/results", "vera", nil).wantStatus(t, http.StatusOK).decode(t, &out)
	found := false
	for _, sp := range out[0].Scores {
		if sp.Kind != "estimate" {
			continue
		}
		found = true
		if sp.Score.Lo != 1.1 || sp.Score.Hi != 1.3 || !sp.Score.Hit || sp.Version != 1 || sp.Now == nil || sp.Now.Lo != 2 {
			t.Fatalf("scored estimate %+v (version %d, now %+v), want 1.1-1.3 from version 1, now 2-2.5", sp.Score, sp.Version, sp.Now)
		}
	}
	if !found {
		t.Fatalf("no estimate scored: %+v", out)
	}
	round := a.browser().login("vera").get("/rounds/1").wantStatus(t, http.StatusOK).body
	wantContains(t, round, "Oracle 1.1-1.3x")
}

// The run page's "Noise (rel SEM)" is the document's SEM/mean, not the
// stored SEM over the median: with a skewed sample they differ eightfold.
func TestRunNoiseIsTheDocumentsRelSEM(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ctx := context.Background()
	run, err := a.db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline", Baseline: "baseline", Device: "9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.db.MarkRunning(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	// Median 10 us, SEM 30.5 us (a few very slow samples), mean 80.9 us:
	// rel SEM 37.7%; SEM/median would say 305%.
	doc := `{"schema_version":2,"status":"ok","shapes":[{"index":0,"variant_timing":{"stats":{"median_ns":10000,"mean_ns":80900,"sem_ns":30500,"rel_sem":0.377}}}]}`
	res := &runner.Result{Doc: json.RawMessage(doc), Speedup: runner.Interval{Value: 1.5}, Correct: true,
		Shapes: []runner.Shape{{Index: 0, Label: "g=8 N=4096 K=7168", BaselineMedianUs: 15, VariantMedianUs: 10, VariantSEMUs: 30.5,
			VariantSamples: 40, Speedup: runner.Interval{Value: 1.5}, Correct: true}}}
	if err := a.db.MarkSucceeded(ctx, run.ID, res, runner.Finish{}); err != nil {
		t.Fatal(err)
	}
	page := a.browser().login("vera").get(fmt.Sprintf("/runs/%d", run.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "37.70%")
	wantNotContains(t, page, "305.00%")

	rows, err := csv.NewReader(strings.NewReader(a.api("GET", "/api/runs.csv", "vera", nil).wantStatus(t, http.StatusOK).body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "variant_rel_sem" {
			col = i
		}
	}
	if col < 0 || len(rows) != 2 || rows[1][col] != "0.377" {
		t.Fatalf("CSV variant_rel_sem: %v", rows)
	}

	// An import with raw samples: SEM/mean of the variant's samples.
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Samples")
	samples := []float64{10, 10, 10, 10, 100} // mean 28, sd 40.25, SEM 18, rel 0.6429
	imp := importAt(t, a, p, 12, 10, samples)
	wantContains(t, a.browser().login("admin").get(fmt.Sprintf("/runs/%d", imp.ID)).wantStatus(t, http.StatusOK).body, "64.29%")
}
