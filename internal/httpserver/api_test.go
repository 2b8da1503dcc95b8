package httpserver

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestHealthz(t *testing.T) {
	a := newApp(t, Config{})
	r := a.api("GET", "/healthz", "", nil).wantStatus(t, http.StatusOK)
	var got map[string]string
	r.decode(t, &got)
	if got["status"] != "ok" {
		t.Fatalf("healthz = %v", got)
	}
}

func TestAPIAuth(t *testing.T) {
	a := newApp(t, Config{})
	a.api("GET", "/api/rounds", "", nil).wantError(t, 401, "unauthorized", "")
	a.api("GET", "/api/rounds", "not-a-real-token", nil).wantError(t, 401, "unauthorized", "")

	// A session cookie alone does not authenticate the API.
	b := a.browser().login("admin")
	b.get("/api/me").wantError(t, 401, "unauthorized", "")

	// Basic auth is not a bearer token.
	req, _ := http.NewRequest("GET", a.srv.URL+"/api/me", nil)
	req.SetBasicAuth("admin", testPassword)
	a.do(http.DefaultClient, req).wantError(t, 401, "unauthorized", "")

	var me userJSON
	a.api("GET", "/api/me", "oracle", nil).wantStatus(t, 200).decode(t, &me)
	if me.Login != "oracle" || me.Role != "shark" {
		t.Fatalf("me = %+v", me)
	}

	// A revoked token stops working at once.
	var toks []tokenJSON
	a.api("GET", "/api/tokens", "vera", nil).wantStatus(t, 200).decode(t, &toks)
	if len(toks) != 1 {
		t.Fatalf("tokens = %+v", toks)
	}
	a.api("DELETE", fmt.Sprintf("/api/tokens/%d", toks[0].ID), "vera", nil).wantStatus(t, http.StatusNoContent)
	a.api("GET", "/api/me", "vera", nil).wantError(t, 401, "unauthorized", "")

	a.api("GET", "/api/nothing-here", "oracle", nil).wantError(t, 404, "not_found", "")
}

func TestAPITokens(t *testing.T) {
	a := newApp(t, Config{})
	var tok tokenJSON
	a.api("POST", "/api/tokens", "alice", map[string]string{"label": "ci"}).wantStatus(t, 201).decode(t, &tok)
	if tok.Secret == "" || tok.Label != "ci" {
		t.Fatalf("created token = %+v", tok)
	}
	// The new secret works as a bearer token.
	a.tokens["alice-ci"] = tok.Secret
	var me userJSON
	a.api("GET", "/api/me", "alice-ci", nil).wantStatus(t, 200).decode(t, &me)
	if me.Login != "alice" {
		t.Fatalf("me via new token = %+v", me)
	}
	// Listing never shows secrets.
	r := a.api("GET", "/api/tokens", "alice", nil).wantStatus(t, 200)
	wantNotContains(t, r.body, tok.Secret)
	// Someone else's token cannot be revoked.
	a.api("DELETE", fmt.Sprintf("/api/tokens/%d", tok.ID), "bob", nil).wantError(t, 403, "forbidden", "*")
}

func TestAPIRounds(t *testing.T) {
	a := newApp(t, Config{})
	body := map[string]any{"number": 1, "title": "Pipeline", "rules": "Be **bold**.", "criteria": []map[string]any{
		{"key": "speedup", "name": "Speedup", "description": "how much", "weight": 60},
		{"key": "risk", "name": "Risk", "weight": 40},
	}}
	var created roundJSON
	a.api("POST", "/api/rounds", "admin", body).wantStatus(t, 201).decode(t, &created)
	if created.Number != 1 || created.Status != "pitching" || len(created.Criteria) != 2 {
		t.Fatalf("created = %+v", created)
	}

	// Roles: only admins create rounds.
	body["number"] = 2
	a.api("POST", "/api/rounds", "oracle", body).wantError(t, 403, "forbidden", "")
	// Weights must sum to 100.
	body["criteria"] = []map[string]any{{"key": "speedup", "name": "Speedup", "weight": 60}, {"key": "risk", "name": "Risk", "weight": 30}}
	a.api("POST", "/api/rounds", "admin", body).wantError(t, 422, "invalid", "weights")
	// Duplicate number.
	body["number"] = 1
	body["criteria"] = []map[string]any{{"key": "speedup", "name": "Speedup", "weight": 100}}
	a.api("POST", "/api/rounds", "admin", body).wantError(t, 409, "conflict", "*")
	// Empty title.
	a.api("POST", "/api/rounds", "admin", map[string]any{"number": 3, "title": " ", "criteria": body["criteria"]}).wantError(t, 422, "invalid", "title")

	var list []map[string]any
	a.api("GET", "/api/rounds", "vera", nil).wantStatus(t, 200).decode(t, &list)
	if len(list) != 1 || list[0]["number"].(float64) != 1 || list[0]["status"] != "pitching" {
		t.Fatalf("rounds = %v", list)
	}
	crit := list[0]["criteria"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "name", "weight"} {
		if _, ok := crit[k]; !ok {
			t.Fatalf("criterion lacks %q: %v", k, crit)
		}
	}

	var one roundJSON
	a.api("GET", "/api/rounds/1", "vera", nil).wantStatus(t, 200).decode(t, &one)
	if one.Rules != "Be **bold**." {
		t.Fatalf("round 1 = %+v", one)
	}
	a.api("GET", "/api/rounds/99", "vera", nil).wantError(t, 404, "not_found", "*")
	a.api("GET", "/api/rounds/abc", "vera", nil).wantError(t, 400, "bad_request", "number")

	// Edit the rubric while pitching.
	edit := map[string]any{"title": "Pipeline v2", "criteria": []map[string]any{
		{"key": "speedup", "name": "Speedup", "weight": 50}, {"key": "risk", "name": "Risk", "weight": 50}}}
	var edited roundJSON
	a.api("PUT", "/api/rounds/1", "admin", edit).wantStatus(t, 200).decode(t, &edited)
	if edited.Title != "Pipeline v2" || edited.Criteria[0].Weight != 50 {
		t.Fatalf("edited = %+v", edited)
	}
	a.api("PATCH", "/api/rounds/1", "oracle", edit).wantError(t, 403, "forbidden", "")

	// Status moves forward one step; afterwards the rubric is frozen.
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "closed"}).wantError(t, 409, "conflict", "status")
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "judging"}).wantStatus(t, 200)
	a.api("PUT", "/api/rounds/1", "admin", edit).wantError(t, 409, "conflict", "")
	a.api("POST", "/api/rounds/1/status", "oracle", map[string]string{"status": "closed"}).wantError(t, 403, "forbidden", "")
	a.api("POST", "/api/rounds/1/status", "admin", map[string]any{"status": 3}).wantError(t, 400, "bad_request", "status")
}

func TestAPIPitches(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	good := map[string]any{"round": 1, "title": "Three stages", "category": "pipelining", "body": "Raise **num_ab_stage** to 3.",
		"claim": map[string]float64{"lo": 1.5, "hi": 1.8}, "variant": "baseline?stages=3"}
	var p pitchJSON
	r := a.api("POST", "/api/pitches", "alice", good).wantStatus(t, 201)
	r.decode(t, &p)
	if p.ID == 0 || p.Title != "Three stages" || p.Claim.Lo != 1.5 || p.Contestant == "" || p.Status != "active" {
		t.Fatalf("filed = %+v", p)
	}
	if loc := r.header.Get("Location"); loc != fmt.Sprintf("/api/pitches/%d", p.ID) {
		t.Fatalf("Location = %q", loc)
	}

	bad := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		mut(m)
		return m
	}
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["title"] = "" })).wantError(t, 422, "invalid", "title")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["claim"] = map[string]float64{"lo": 2, "hi": 1} })).wantError(t, 422, "invalid", "claim.lo")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["claim"] = map[string]float64{"lo": 0, "hi": 1} })).wantError(t, 422, "invalid", "claim.lo")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["claim"] = map[string]float64{"lo": -1, "hi": -0.5} })).wantError(t, 422, "invalid", "claim.lo")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["claim"] = map[string]any{"lo": "fast", "hi": 2} })).wantError(t, 400, "bad_request", "claim.lo")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["colour"] = "red" })).wantError(t, 400, "bad_request", "colour")
	a.api("POST", "/api/pitches", "alice", bad(func(m map[string]any) { m["round"] = 7 })).wantError(t, 404, "not_found", "*")
	a.api("POST", "/api/pitches", "alice", `{"round": 1, "title": "x"`).wantError(t, 400, "bad_request", "")
	a.api("POST", "/api/pitches", "alice", `{"round": 1} {"round": 2}`).wantError(t, 400, "bad_request", "")
	a.api("POST", "/api/pitches", "alice", ``).wantError(t, 400, "bad_request", "")
	a.api("POST", "/api/pitches", "alice", `[1,2]`).wantError(t, 400, "bad_request", "")
	a.api("POST", "/api/pitches", "vera", good).wantError(t, 403, "forbidden", "")
	a.api("POST", "/api/pitches", "", good).wantError(t, 401, "unauthorized", "")
	huge := bad(func(m map[string]any) { m["body"] = strings.Repeat("a", 2<<20) })
	a.api("POST", "/api/pitches", "alice", huge).wantError(t, 413, "too_large", "")

	// Nothing but the first pitch was stored.
	var list []pitchJSON
	a.api("GET", "/api/rounds/1/pitches", "vera", nil).wantStatus(t, 200).decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("round 1 has %d pitches, want 1: %+v", len(list), list)
	}
	a.api("GET", "/api/rounds/2/pitches", "vera", nil).wantError(t, 404, "not_found", "*")

	var got pitchDetailJSON
	a.api("GET", fmt.Sprintf("/api/pitches/%d", p.ID), "vera", nil).wantStatus(t, 200).decode(t, &got)
	if got.Body != good["body"] || got.HiddenScorecards != 0 || got.Scorecards == nil {
		t.Fatalf("get pitch = %+v", got)
	}
	a.api("GET", "/api/pitches/999", "vera", nil).wantError(t, 404, "not_found", "*")

	// Edit: owner only.
	edit := bad(func(m map[string]any) { m["title"] = "Three stages, revised" })
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", p.ID), "bob", edit).wantError(t, 403, "forbidden", "")
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", p.ID), "alice", edit).wantStatus(t, 200).decode(t, &got)
	if got.Title != "Three stages, revised" {
		t.Fatalf("edited = %+v", got)
	}

	// Re-pitch (into a later round) links both ways.
	a.round(2)
	re := bad(func(m map[string]any) { m["round"] = 2; m["title"] = "Two stages"; m["repitch_of"] = p.ID })
	var rp pitchJSON
	a.api("POST", "/api/pitches", "alice", re).wantStatus(t, 201).decode(t, &rp)
	a.api("GET", fmt.Sprintf("/api/pitches/%d", p.ID), "vera", nil).wantStatus(t, 200).decode(t, &got)
	if rp.RepitchOf != p.ID || len(got.RepitchedBy) != 1 || got.RepitchedBy[0] != rp.ID {
		t.Fatalf("re-pitch links: new %+v old %+v", rp, got)
	}

	// Withdraw.
	a.api("POST", fmt.Sprintf("/api/pitches/%d/withdraw", p.ID), "bob", nil).wantError(t, 403, "forbidden", "")
	a.api("POST", fmt.Sprintf("/api/pitches/%d/withdraw", p.ID), "alice", nil).wantStatus(t, 200).decode(t, &got)
	if got.Status != "withdrawn" {
		t.Fatalf("withdrawn = %+v", got)
	}
	a.api("POST", fmt.Sprintf("/api/pitches/%d/withdraw", p.ID), "alice", nil).wantError(t, 409, "conflict", "")
}

// Withdrawing takes no body: nothing or {} only. A field (there is no
// reason to give) is refused naming it, as every JSON endpoint refuses an
// unknown field, and the pitch stays active.
func TestAPIWithdrawRefusesABody(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("alice", 1, "Three stages")
	path := fmt.Sprintf("/api/pitches/%d/withdraw", p.ID)
	a.api("POST", path, "alice", `{"reason": "x"}`).wantError(t, http.StatusBadRequest, "bad_request", "reason")
	a.api("POST", path, "alice", `[]`).wantError(t, http.StatusBadRequest, "bad_request", "")
	a.api("POST", path, "alice", `null`).wantError(t, http.StatusBadRequest, "bad_request", "")
	a.api("POST", path, "alice", `{} {}`).wantError(t, http.StatusBadRequest, "bad_request", "")
	var got pitchJSON
	a.api("GET", fmt.Sprintf("/api/pitches/%d", p.ID), "alice", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Status != "active" {
		t.Fatalf("a refused withdrawal withdrew the pitch: %+v", got)
	}
	a.api("POST", path, "alice", ` {} `).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Status != "withdrawn" {
		t.Fatalf("withdrawn = %+v", got)
	}
}

// PUT /api/rounds/{n}/weights answers with what GET answers: the weights
// and whether they are the shark's own.
func TestAPISetWeightsAnswersAsGet(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	put := a.api("PUT", "/api/rounds/1/weights", "pragmatist", map[string]int{"speedup": 55, "feasibility": 25, "risk": 20, "pitch_quality": 0}).
		wantStatus(t, http.StatusOK)
	get := a.api("GET", "/api/rounds/1/weights", "pragmatist", nil).wantStatus(t, http.StatusOK)
	var fromPut, fromGet map[string]any
	put.decode(t, &fromPut)
	get.decode(t, &fromGet)
	if fmt.Sprint(fromPut) != fmt.Sprint(fromGet) || fromPut["personal"] != true {
		t.Fatalf("PUT answered %v, GET %v", fromPut, fromGet)
	}
}

func scoreBody(scores map[string]any, lo, hi float64) map[string]any {
	return map[string]any{"scores": scores, "notes": map[string]string{"speedup": "plausible"},
		"estimate": map[string]float64{"lo": lo, "hi": hi}, "verdict": "FUND"}
}

func TestAPIScoringVotingStandings(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p1 := a.pitch("alice", 1, "Pipeline stages")
	p2 := a.pitch("bob", 1, "Tile shape")
	own := a.pitch("oracle", 1, "Oracle's own idea")
	path := func(id int64) string { return fmt.Sprintf("/api/pitches/%d/scorecard", id) }
	seedScores := map[string]any{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8}

	// Scoring needs the judging phase.
	a.api("PUT", path(p1.ID), "oracle", scoreBody(seedScores, 1.5, 1.8)).wantError(t, 409, "conflict", "")

	// Personal weights: must sum to 100 and name only the round's criteria.
	a.api("PUT", "/api/rounds/1/weights", "pragmatist", map[string]int{"speedup": 50, "feasibility": 20, "risk": 20, "pitch_quality": 20}).wantError(t, 422, "invalid", "weights")
	a.api("PUT", "/api/rounds/1/weights", "pragmatist", map[string]int{"speedup": 35, "feasibility": 25, "risk": 20, "pitch_quality": 0, "evidence": 20}).wantError(t, 422, "invalid", "weights.evidence")
	a.api("PUT", "/api/rounds/1/weights", "pragmatist", `{"speedup": 50.5}`).wantError(t, 400, "bad_request", "weights.speedup")
	a.api("PUT", "/api/rounds/1/weights", "alice", map[string]int{"speedup": 40, "feasibility": 25, "risk": 20, "pitch_quality": 15}).wantError(t, 403, "forbidden", "")
	var w struct {
		Weights  map[string]int `json:"weights"`
		Personal bool           `json:"personal"`
	}
	a.api("PUT", "/api/rounds/1/weights", "pragmatist", map[string]int{"speedup": 55, "feasibility": 25, "risk": 20, "pitch_quality": 0}).wantStatus(t, 200).decode(t, &w)
	if w.Weights["speedup"] != 55 {
		t.Fatalf("weights = %+v", w)
	}
	a.api("GET", "/api/rounds/1/weights", "pragmatist", nil).wantStatus(t, 200).decode(t, &w)
	if !w.Personal || w.Weights["pitch_quality"] != 0 {
		t.Fatalf("weights = %+v", w)
	}

	a.status(1, "judging")

	// The seeds' first scorecard: (7,9,8,8) under 40/25/20/15 is 7.85.
	var card scorecardJSON
	a.api("PUT", path(p1.ID), "oracle", scoreBody(seedScores, 1.5, 1.8)).wantStatus(t, 200).decode(t, &card)
	if math.Abs(card.WeightedTotal-7.85) > 1e-9 || card.Version != 1 || card.Weights["speedup"] != 40 {
		t.Fatalf("scorecard = %+v", card)
	}
	// Bad scorecards.
	a.api("PUT", path(p1.ID), "oracle", scoreBody(map[string]any{"speedup": 11, "feasibility": 9, "risk": 8, "pitch_quality": 8}, 1, 2)).wantError(t, 422, "invalid", "scores.speedup")
	a.api("PUT", path(p1.ID), "oracle", scoreBody(map[string]any{"speedup": -1, "feasibility": 9, "risk": 8, "pitch_quality": 8}, 1, 2)).wantError(t, 422, "invalid", "scores.speedup")
	a.api("PUT", path(p1.ID), "oracle", scoreBody(map[string]any{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8, "vibes": 3}, 1, 2)).wantError(t, 422, "invalid", "scores.vibes")
	a.api("PUT", path(p1.ID), "oracle", scoreBody(seedScores, 2, 1)).wantError(t, 422, "invalid", "estimate.lo")
	a.api("PUT", path(p1.ID), "oracle", scoreBody(seedScores, 0, 1)).wantError(t, 422, "invalid", "estimate.lo")
	a.api("PUT", path(p1.ID), "oracle", scoreBody(map[string]any{"speedup": "seven"}, 1, 2)).wantError(t, 400, "bad_request", "scores.speedup")
	a.api("PUT", path(p1.ID), "oracle", `{"scores": {"speedup": 7}, "weighted_total": 9.9}`).wantError(t, 400, "bad_request", "weighted_total")
	a.api("PUT", path(own.ID), "oracle", scoreBody(seedScores, 1, 2)).wantError(t, 409, "conflict", "")
	a.api("PUT", path(p1.ID), "alice", scoreBody(seedScores, 1, 2)).wantError(t, 403, "forbidden", "")
	a.api("PUT", path(p1.ID), "admin", scoreBody(seedScores, 1, 2)).wantError(t, 403, "forbidden", "")

	// Hidden until submitted: the pragmatist sees the oracle's card only after scoring.
	var list struct {
		Scorecards []scorecardJSON `json:"scorecards"`
		Hidden     int             `json:"hidden"`
	}
	a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards", p1.ID), "pragmatist", nil).wantStatus(t, 200).decode(t, &list)
	if len(list.Scorecards) != 0 || list.Hidden != 1 {
		t.Fatalf("before scoring, pragmatist sees %+v", list)
	}
	a.api("PUT", path(p1.ID), "pragmatist", scoreBody(seedScores, 1.1, 1.3)).wantStatus(t, 200).decode(t, &card)
	// Personal weights 55/25/20/0: (7*55 + 9*25 + 8*20)/100 = 7.7.
	if math.Abs(card.WeightedTotal-7.7) > 1e-9 {
		t.Fatalf("pragmatist total = %v, want 7.7", card.WeightedTotal)
	}
	a.api("GET", fmt.Sprintf("/api/pitches/%d/scorecards", p1.ID), "pragmatist", nil).wantStatus(t, 200).decode(t, &list)
	if len(list.Scorecards) != 2 || list.Hidden != 0 {
		t.Fatalf("after scoring, pragmatist sees %+v", list)
	}
	// Frozen weights after the first scorecard.
	a.api("PUT", "/api/rounds/1/weights", "pragmatist", map[string]int{"speedup": 40, "feasibility": 25, "risk": 20, "pitch_quality": 15}).wantError(t, 409, "conflict", "weights")

	a.api("PUT", path(p2.ID), "oracle", scoreBody(map[string]any{"speedup": 5, "feasibility": 6, "risk": 6, "pitch_quality": 7}, 1, 1.1)).wantStatus(t, 200)
	a.api("PUT", path(p2.ID), "pragmatist", scoreBody(map[string]any{"speedup": 5, "feasibility": 6, "risk": 6, "pitch_quality": 7}, 1, 1.1)).wantStatus(t, 200)

	// Votes.
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": p1.ID, "justification": "kernel-specific evidence"}).wantStatus(t, 200)
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": own.ID, "justification": "mine"}).wantError(t, 409, "conflict", "pitch")
	a.api("PUT", "/api/rounds/1/vote", "alice", map[string]any{"pitch": p2.ID, "justification": "x"}).wantError(t, 403, "forbidden", "")
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", map[string]any{"pitch": "p2"}).wantError(t, 400, "bad_request", "pitch")
	var v voteJSON
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", map[string]any{"pitch": p2.ID, "justification": "safer"}).wantStatus(t, 200)
	a.api("PUT", "/api/rounds/1/vote", "pragmatist", map[string]any{"pitch": p1.ID, "justification": "changed my mind"}).wantStatus(t, 200).decode(t, &v)
	if v.Version != 2 || v.Pitch != p1.ID {
		t.Fatalf("changed vote = %+v", v)
	}
	var votes []voteJSON
	a.api("GET", "/api/rounds/1/votes", "oracle", nil).wantStatus(t, 200).decode(t, &votes)
	if len(votes) == 0 {
		t.Fatalf("oracle sees no votes")
	}

	var st standingsJSON
	a.api("GET", "/api/rounds/1/standings", "oracle", nil).wantStatus(t, 200).decode(t, &st)
	if len(st.Pitches) != 3 || st.Pitches[0].ID != p1.ID || st.Pitches[0].Votes != 2 {
		t.Fatalf("standings = %+v", st)
	}

	// Close the round: the winner is announced with the rule that decided it.
	a.status(1, "closed")
	a.api("GET", "/api/rounds/1/standings", "vera", nil).wantStatus(t, 200).decode(t, &st)
	if st.Winner == nil || st.Winner.ID != p1.ID || st.Winner.DecidedBy != "most votes" {
		t.Fatalf("winner = %+v", st.Winner)
	}
	// A closed round takes no more scorecards or votes.
	a.api("PUT", path(p2.ID), "oracle", scoreBody(seedScores, 1, 2)).wantError(t, 409, "conflict", "")
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": p2.ID, "justification": "late"}).wantError(t, 409, "conflict", "")
}

// A vote's errors about its pitch name "pitch", the key the caller sent
// (not the store's pitch_id), and a refused vote stores nothing.
func TestAPIVoteErrorsNamePitch(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	a.round(2)
	p := a.pitch("alice", 1, "Pipeline stages")
	own := a.pitch("oracle", 1, "Oracle's own idea")
	elsewhere := a.pitch("bob", 2, "Tile shape")
	a.status(1, "judging")
	vote := func(pitch any) resp {
		return a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": pitch, "justification": "evidence"})
	}
	vote(99999).wantError(t, http.StatusUnprocessableEntity, "invalid", "pitch")
	vote(0).wantError(t, http.StatusUnprocessableEntity, "invalid", "pitch")
	vote(elsewhere.ID).wantError(t, http.StatusUnprocessableEntity, "invalid", "pitch")
	vote(own.ID).wantError(t, http.StatusConflict, "conflict", "pitch")
	var votes []voteJSON
	a.api("GET", "/api/rounds/1/votes", "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &votes)
	if len(votes) != 0 {
		t.Fatalf("refused votes stored: %+v", votes)
	}
	vote(p.ID).wantStatus(t, http.StatusOK)

	// The vote form names the same field: its summary shows the message
	// as it is, and the slot beside the button (the form's pitch input is
	// hidden) shows it too.
	b := a.browser().login("oracle")
	r := b.post("/rounds/1/vote", url.Values{"pitch": {fmt.Sprint(own.ID)}, "justification": {"mine"}}).wantStatus(t, http.StatusConflict)
	wantContains(t, r.body, `id="err-pitch"`, "you cannot vote for your own pitch")
	wantNotContains(t, r.body, "pitch id")
}

func TestAPIStandingsHideUnscored(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p1 := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, "judging")
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p1.ID), "oracle", scoreBody(map[string]any{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8}, 1, 2)).wantStatus(t, 200)
	var st standingsJSON
	a.api("GET", "/api/rounds/1/standings", "pragmatist", nil).wantStatus(t, 200).decode(t, &st)
	if len(st.Pitches) != 1 || !st.Pitches[0].Hidden || st.Pitches[0].MeanTotal != 0 || st.Winner != nil {
		t.Fatalf("pragmatist standings = %+v", st)
	}
}

func TestAPIMethodNotAllowed(t *testing.T) {
	a := newApp(t, Config{})
	r := a.api("DELETE", "/api/rounds", "admin", nil)
	if r.status != http.StatusMethodNotAllowed || !strings.Contains(r.body, `"error"`) {
		t.Fatalf("DELETE /api/rounds = %d %s", r.status, r.body)
	}
	// RFC 9110: a 405 says which methods the resource has.
	if got := r.header.Get("Allow"); got != "GET, POST" {
		t.Errorf("DELETE /api/rounds: Allow %q, want \"GET, POST\"", got)
	}
	if got := a.api("POST", "/api/rounds/1", "admin", nil).header.Get("Allow"); got != "GET, PUT, PATCH" {
		t.Errorf("POST /api/rounds/1: Allow %q, want \"GET, PUT, PATCH\"", got)
	}
}
