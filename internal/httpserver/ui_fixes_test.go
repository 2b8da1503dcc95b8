package httpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// The /runs page's export links work for a logged-in browser (session
// cookie, no token) and export what the page lists.
func TestRunsExportLinksWorkInTheBrowser(t *testing.T) {
	a, _ := demoApp(t)
	b := demoLogin(t, a, "viewer")
	page := b.get("/runs?problem=nvfp4_group_gemm").wantStatus(t, http.StatusOK)
	wantContains(t, page.body, `href="/runs.csv?problem=nvfp4_group_gemm"`, `href="/runs.json?problem=nvfp4_group_gemm"`)
	csvResp := b.get("/runs.csv?problem=nvfp4_group_gemm").wantStatus(t, http.StatusOK)
	if ct := csvResp.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("/runs.csv content type %q", ct)
	}
	wantContains(t, csvResp.body, "run_id,problem", "nvfp4_group_gemm")
	jsonResp := b.get("/runs.json").wantStatus(t, http.StatusOK)
	wantContains(t, jsonResp.body, `"problem"`)
	// Anonymous: sent to log in, not a raw JSON 401.
	if r := a.browser().get("/runs.csv"); r.status != http.StatusSeeOther {
		t.Fatalf("anonymous /runs.csv: %d", r.status)
	}
}

// Variant suggestions are listed once each; the form's defaults run on a
// cpu-only server (the reference against itself on the test suite).
func TestRunsFormOnACPUOnlyServer(t *testing.T) {
	a, _ := demoApp(t)
	body := demoLogin(t, a, "admin").get("/runs").wantStatus(t, http.StatusOK).body
	i, j := strings.Index(body, `<datalist id="variants">`), strings.Index(body, `</datalist>`)
	if i < 0 || j < i {
		t.Fatalf("no variants datalist")
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`<option value="([^"]*)">`).FindAllStringSubmatch(body[i:j], -1) {
		if seen[m[1]] {
			t.Fatalf("variant %q suggested twice", m[1])
		}
		seen[m[1]] = true
	}
	if !seen["baseline"] || !seen["reference"] {
		t.Fatalf("suggestions lack baseline or reference: %v", seen)
	}
	wantContains(t, body, `name="variant" value="reference"`, `name="baseline" value="reference"`,
		`<option value="tests" selected>`, `<option value="cpu" selected>`)
}

// A pitch page on a cpu-only server says why its variant cannot run here
// instead of offering a button that always fails.
func TestPitchPageSaysWhyNoRunOnCPUOnlyServer(t *testing.T) {
	a, _ := demoApp(t)
	admin := demoLogin(t, a, "admin")
	open := findPitchInRound(t, a, 5)
	body := admin.get(fmt.Sprintf("/pitches/%d", open)).wantStatus(t, http.StatusOK).body
	wantContains(t, body, "data-cannot-run", "its only device is the CPU")
	wantNotContains(t, body, "data-run-pitch")
	// A closed round's pitch: no run changes its result, and the page says so.
	body = admin.get("/pitches/1").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "data-cannot-run", "round 1 is closed", "run the variant without a pitch")
	wantNotContains(t, body, "data-run-pitch", "its only device is the CPU")
}

// "Run queued." belongs to the redirect after queueing, not to the page of
// a finished run.
func TestFinishedRunPageDropsQueuedFlash(t *testing.T) {
	a, _ := demoApp(t)
	b := demoLogin(t, a, "admin")
	body := b.get("/runs/1?ok=queued").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "Geomean speedup")
	wantNotContains(t, body, "Run queued.")
}

func TestUsText(t *testing.T) {
	for in, want := range map[float64]string{
		123.456:    "123.46 µs",
		5642860.94: "5.64 s",
		12345.6:    "12.3 ms",
		999.999:    "1000.00 µs",
		250000:     "250 ms",
		0:          "—",
	} {
		if got := usText(in); got != want {
			t.Errorf("usText(%v) = %q, want %q", in, got, want)
		}
	}
}

// HEAD answers like GET (headers, no body); a favicon is linked and served.
func TestHeadAndFavicon(t *testing.T) {
	a := newApp(t, Config{})
	for _, path := range []string{"/healthz", "/login", "/static/app.css", "/static/favicon.svg"} {
		res, err := http.Head(a.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(b) != 0 {
			t.Fatalf("HEAD %s: %d with %d body bytes, want 200 and none", path, res.StatusCode, len(b))
		}
	}
	fav := a.browser().get("/static/favicon.svg").wantStatus(t, http.StatusOK)
	if ct := fav.header.Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
		t.Fatalf("favicon content type %q", ct)
	}
	wantContains(t, a.browser().get("/login").body, `<link rel="icon" href="/static/favicon.svg"`)
	if r := a.browser().get("/favicon.ico"); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/static/favicon.svg" {
		t.Fatalf("/favicon.ico: %d -> %q", r.status, r.header.Get("Location"))
	}
}

// A refused form is re-rendered with 422 and names the field; its page
// tells app.js the form's GET address, so the browser's history never holds
// the POST. A success redirects (PRG).
func TestRefusedFormStaysOffThePostURL(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	b := a.browser().login("alice")
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+"/pitches", strings.NewReader(url.Values{"round": {"1"}, "title": {""},
		"body": {"b"}, "lo": {"1.1"}, "hi": {"1.2"}, "variant": {"baseline"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Referer", a.srv.URL+"/pitches/new?round=1")
	r := a.do(b.c, req)
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `data-replace-url="/pitches/new?round=1"`, "title")
	ok := b.post("/pitches", url.Values{"round": {"1"}, "title": {"Stages"}, "body": {"b"}, "lo": {"1.1"}, "hi": {"1.2"}, "variant": {"baseline"}})
	if ok.status != http.StatusSeeOther {
		t.Fatalf("valid pitch: %d, want 303", ok.status)
	}
	// The script does the swap.
	js := a.browser().get("/static/app.js").body
	wantContains(t, js, "data-replace-url", "history.replaceState")
}

// Every refused form names its field, even where the form has no inline
// slot for it: the summary at the top says "<field>: <message>".
func TestFormErrorNamesTheField(t *testing.T) {
	a := newApp(t, Config{})
	b := a.browser().login("alice")
	r := b.post("/tokens", url.Values{"label": {"lap\x1btop"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, "label: must not contain control characters")
}

// A viewer is told a hidden row opens when the round closes; a shark that
// it opens when they score it.
func TestHiddenRowSaysUntilWhen(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("alice", 1, "Stages")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(t.Context(), a.users["pragmatist"], p.ID, pitches.ScorecardInput{
		Scores:   map[string]float64{"speedup": 7, "feasibility": 6, "risk": 5, "pitch_quality": 8},
		Estimate: pitches.Range{Lo: 1.1, Hi: 1.3}, Verdict: "in"}); err != nil {
		t.Fatal(err)
	}
	viewer := a.browser().login("vera").get("/rounds/1").body
	wantContains(t, viewer, "hidden until the round closes", "the ranking and the winner are shown when the round closes")
	wantNotContains(t, viewer, "until you score it")
	pitchPage := a.browser().login("vera").get("/pitches/" + strconv.FormatInt(p.ID, 10)).body
	wantContains(t, pitchPage, "1 more scorecard(s) hidden until the round closes")
	wantNotContains(t, pitchPage, "submit your own")
	shark := a.browser().login("oracle").get("/rounds/1").body
	wantContains(t, shark, "hidden until you score it", "once you have scored every pitch")
}

// The standings' # is the rank, with the rule in words; a shark who has
// scored every pitch sees the ranking and the winner; unscored pitches are
// "not scored yet", unranked.
func TestStandingsRanksOnTheRoundPage(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p1 := a.pitch("alice", 1, "Stages")
	p2 := a.pitch("bob", 1, "Tiles")
	a.pitch("bob", 1, "Nobody scored this")
	a.status(1, pitches.RoundJudging)
	score := func(shark string, p *pitches.Pitch, s float64) {
		t.Helper()
		if _, err := a.db.SubmitScorecard(t.Context(), a.users[shark], p.ID, pitches.ScorecardInput{
			Scores:   map[string]float64{"speedup": s, "feasibility": s, "risk": s, "pitch_quality": s},
			Estimate: pitches.Range{Lo: 1.1, Hi: 1.3}, Verdict: "in"}); err != nil {
			t.Fatal(err)
		}
	}
	score("pragmatist", p1, 5)
	score("pragmatist", p2, 8)
	if _, err := a.db.CastVote(t.Context(), a.users["pragmatist"], 1, pitches.VoteInput{PitchID: p2.ID, Justification: "tiles"}); err != nil {
		t.Fatal(err)
	}
	b := a.browser().login("oracle")
	body := b.get("/rounds/1").body
	wantContains(t, body, "data-rank-withheld")
	wantNotContains(t, body, "badge-winner")
	// The oracle scores two of three: still withheld.
	score("oracle", p1, 6)
	score("oracle", p2, 7)
	wantContains(t, b.get("/rounds/1").body, "data-rank-withheld")
	ps, err := a.db.Pitches(t.Context(), 1)
	if err != nil || len(ps) != 3 {
		t.Fatalf("pitches: %v %v", ps, err)
	}
	score("oracle", &ps[2], 2)
	// Every pitch scored, no vote yet: the ranking is votes first, so it
	// would show the others' votes. Withheld until the oracle votes, and
	// the votes column says "–", not 0.
	body = b.get("/rounds/1").body
	wantContains(t, body, "data-rank-withheld", `data-label="Votes" data-withheld`)
	if _, err := a.db.CastVote(t.Context(), a.users["oracle"], 1, pitches.VoteInput{PitchID: p2.ID, Justification: "tiles too"}); err != nil {
		t.Fatal(err)
	}
	body = b.get("/rounds/1").body
	wantContains(t, body, "data-rank-rule", "Ranked by most votes", "badge-winner", "decided by")
	ranks := regexp.MustCompile(`data-rank>\s*([0-9–]+)`).FindAllStringSubmatch(body, -1)
	if len(ranks) != 3 || ranks[0][1] != "1" || ranks[1][1] != "2" || ranks[2][1] != "3" {
		t.Fatalf("ranks %v, want 1, 2, 3", ranks)
	}
	if i, j := strings.Index(body, "Tiles"), strings.Index(body, "Stages"); i < 0 || j < i {
		t.Fatalf("Tiles (1 vote) not listed before Stages")
	}
}

// A closed round nobody scored: no pitch is ranked 1-16 with 0.00.
func TestUnscoredPitchesAreNotRanked(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	a.pitch("alice", 1, "Stages")
	a.pitch("bob", 1, "Tiles")
	a.status(1, pitches.RoundJudging)
	a.status(1, pitches.RoundClosed)
	body := a.browser().login("vera").get("/rounds/1").body
	if n := strings.Count(body, "data-unscored"); n != 2 {
		t.Fatalf("%d rows say not scored yet, want 2", n)
	}
	wantContains(t, body, "not scored yet")
	wantNotContains(t, body, "0.00")
	if regexp.MustCompile(`data-rank>\s*[0-9]`).MatchString(body) {
		t.Fatalf("an unscored pitch has a rank")
	}
}

// The calibration page answers "whose estimates should we trust?" in a
// sentence above its table and chart; a closed round's page draws its
// pitches' claims against their measurements.
func TestCalibrationTrustAndRoundChart(t *testing.T) {
	a, _ := demoApp(t)
	b := demoLogin(t, a, "viewer")
	cal := b.get("/calibration").wantStatus(t, http.StatusOK).body
	wantContains(t, cal, "data-trust", "Of the contestants,", "class=\"legend\"")
	round6 := b.get("/rounds/6").wantStatus(t, http.StatusOK).body
	wantContains(t, round6, "data-recap-chart", "claim held")
}

// The API's standings carry the rank, the rule and whether the ranking is
// shown to the caller.
func TestAPIStandingsRanks(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p1 := a.pitch("alice", 1, "Stages")
	a.pitch("bob", 1, "Unscored")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(t.Context(), a.users["pragmatist"], p1.ID, pitches.ScorecardInput{
		Scores:   map[string]float64{"speedup": 7, "feasibility": 6, "risk": 5, "pitch_quality": 8},
		Estimate: pitches.Range{Lo: 1.1, Hi: 1.3}, Verdict: "in"}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		RanksShown bool   `json:"ranks_shown"`
		RankRule   string `json:"rank_rule"`
		Pitches    []struct {
			ID   int64 `json:"id"`
			Rank *int  `json:"rank"`
		} `json:"pitches"`
	}
	a.api("GET", "/api/rounds/1/standings", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &st)
	if !st.RanksShown || st.RankRule == "" || st.Pitches[0].ID != p1.ID || st.Pitches[0].Rank == nil || *st.Pitches[0].Rank != 1 || st.Pitches[1].Rank != nil {
		t.Fatalf("admin's standings: %+v", st)
	}
	st.Pitches = nil
	a.api("GET", "/api/rounds/1/standings", "vera", nil).wantStatus(t, http.StatusOK).decode(t, &st)
	if st.RanksShown || st.Pitches[0].Rank != nil {
		t.Fatalf("viewer sees the ranking of an open round: %+v", st)
	}
}

// findPitchInRound is the id of a pitch of round n that names a variant.
func findPitchInRound(t *testing.T, a *app, n int) int64 {
	t.Helper()
	ps, err := a.db.Pitches(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Variant != "" {
			return p.ID
		}
	}
	t.Fatalf("round %d has no pitch with a variant", n)
	return 0
}
