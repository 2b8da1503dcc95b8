package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

func TestSecurityHeaders(t *testing.T) {
	a := newApp(t, Config{})
	for _, path := range []string{"/login", "/api/rounds", "/static/app.css"} {
		r := a.api("GET", path, "", nil)
		h := r.header
		if got := h.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'") {
			t.Errorf("%s: CSP = %q", path, got)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers = %v", path, h)
		}
	}
	// No inline scripts anywhere on a page: the CSP would block them.
	b := a.browser().login("admin")
	body := b.get("/").wantStatus(t, 200).body
	wantContains(t, body, `<script src="/static/app.js" defer>`)
	wantNotContains(t, body, "<script>", " onclick=", " onload=")
}

func TestLogin(t *testing.T) {
	a := newApp(t, Config{LoginBurst: 3})
	b := a.browser()
	// Anonymous visitors are sent to the login form, and back afterwards.
	r := b.get("/rounds")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?next=%2Frounds" {
		t.Fatalf("anonymous /rounds = %d %v", r.status, r.header)
	}
	r = b.post("/login", url.Values{"login": {"oracle"}, "password": {"wrong password"}})
	r.wantStatus(t, http.StatusUnauthorized)
	wantContains(t, r.body, "Wrong login or password.", `value="oracle"`)

	r = b.post("/login", url.Values{"login": {"oracle"}, "password": {testPassword}, "next": {"/rounds"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/rounds" {
		t.Fatalf("login = %d %v %s", r.status, r.header, r.body)
	}
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("session cookie = %+v", cookie)
	}
	wantContains(t, b.get("/rounds").wantStatus(t, 200).body, "Oracle", "Log out")

	// Open redirects are refused.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
		if got := safeNext(next); got != "/" {
			t.Errorf("safeNext(%q) = %q", next, got)
		}
	}

	// Logout ends the session server-side.
	b.post("/logout", nil).wantStatus(t, http.StatusSeeOther)
	if r := b.get("/rounds"); r.status != http.StatusSeeOther {
		t.Fatalf("after logout /rounds = %d", r.status)
	}
}

func TestLoginRateLimit(t *testing.T) {
	a := newApp(t, Config{LoginBurst: 3})
	b := a.browser()
	// Three failures from this address, at three logins (the per-login
	// backoff of one address is tested in ratelimit_test.go).
	for _, login := range []string{"oracle", "pragmatist", "bob"} {
		b.post("/login", url.Values{"login": {login}, "password": {"guess"}}).wantStatus(t, http.StatusUnauthorized)
	}
	r := b.post("/login", url.Values{"login": {"oracle"}, "password": {testPassword}})
	r.wantStatus(t, http.StatusTooManyRequests)
	wantContains(t, r.body, "too many failed login attempts")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After")
	}
	// The per-IP bucket is empty too: another login from here waits as well.
	b.post("/login", url.Values{"login": {"alice"}, "password": {testPassword}}).wantStatus(t, http.StatusTooManyRequests)
}

func TestSecureCookieFlag(t *testing.T) {
	a := newApp(t, Config{SecureCookies: true})
	r := a.browser().post("/login", url.Values{"login": {"oracle"}, "password": {testPassword}})
	if !strings.Contains(r.header.Get("Set-Cookie"), "Secure") {
		t.Fatalf("Set-Cookie = %q, want Secure", r.header.Get("Set-Cookie"))
	}
}

func TestStoredXSS(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	body := "# Plan\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))\n\n" +
		`<a href="javascript:alert(2)" onclick="alert(3)">y</a>` + "\n\n**bold** stays."
	var p pitchJSON
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": `<script>alert("t")</script>`, "body": body,
		"claim": map[string]float64{"lo": 1.1, "hi": 1.2}}).wantStatus(t, 201).decode(t, &p)

	page := a.browser().login("vera").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, 200).body
	wantNotContains(t, page, "<script>alert", "onerror", "javascript:", "onclick")
	wantContains(t, page, "<strong>bold</strong>", "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;")
}

func TestCrossOriginRefused(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	b := a.browser().login("alice")
	form := url.Values{"round": {"1"}, "title": {"Forged"}, "lo": {"1.1"}, "hi": {"1.2"}}

	b.site = "cross-site"
	b.post("/pitches", form).wantStatus(t, http.StatusForbidden)

	// A foreign Origin without Sec-Fetch-Site (older browsers) is refused too.
	b.site = ""
	req, _ := http.NewRequest("POST", a.srv.URL+"/pitches", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	a.do(b.c, req).wantStatus(t, http.StatusForbidden)

	// Cross-site logout and API calls are refused as well.
	b.site = "cross-site"
	b.post("/logout", nil).wantStatus(t, http.StatusForbidden)

	ps, err := a.db.Pitches(context.Background(), 1)
	if err != nil || len(ps) != 0 {
		t.Fatalf("after refused posts round 1 has %d pitches (%v)", len(ps), err)
	}

	// The same form from our own origin works.
	b.site = "same-origin"
	r := b.post("/pitches", form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("same-origin post = %d %s", r.status, r.body)
	}
	if ps, _ := a.db.Pitches(context.Background(), 1); len(ps) != 1 || ps[0].Title != "Forged" {
		t.Fatalf("same-origin post stored %+v", ps)
	}
}

func TestPitchForms(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	b := a.browser().login("alice")
	wantContains(t, b.get("/rounds/1").wantStatus(t, 200).body, "File a pitch")
	wantContains(t, b.get("/pitches/new?round=1").wantStatus(t, 200).body, "80% interval", `name="title"`)

	// Validation error: 422, the message next to the field, the input kept.
	r := b.post("/pitches", url.Values{"round": {"1"}, "title": {""}, "body": {"my careful body"}, "lo": {"1.1"}, "hi": {"1.3"}, "variant": {"baseline"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `id="err-title"`, "my careful body", `value="1.3"`)
	r = b.post("/pitches", url.Values{"round": {"1"}, "title": {"Claim"}, "lo": {"2"}, "hi": {"1"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `id="err-claim"`)
	r = b.post("/pitches", url.Values{"round": {"1"}, "title": {"Claim"}, "lo": {"fast"}, "hi": {"1"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, "must be a number", `value="fast"`)

	r = b.post("/pitches", url.Values{"round": {"1"}, "title": {"Three stages"}, "body": {"raise *stages*"}, "lo": {"1.5"}, "hi": {"1.8"}, "variant": {"baseline?stages=3"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("file pitch = %d %s", r.status, r.body)
	}
	loc := r.header.Get("Location")
	page := b.get(loc).wantStatus(t, 200).body
	wantContains(t, page, "Pitch filed.", "Three stages", "1.5x – 1.8x", "baseline?stages=3", "<em>stages</em>", "Edit pitch")

	id := strings.TrimPrefix(strings.Split(loc, "?")[0], "/pitches/")
	r = b.post("/pitches/"+id+"/edit", url.Values{"round": {"1"}, "title": {"Three stages (v2)"}, "lo": {"1.4"}, "hi": {"1.6"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit pitch = %d %s", r.status, r.body)
	}
	wantContains(t, b.get("/pitches/"+id).body, "Three stages (v2)", "1.4x – 1.6x")

	// Someone else may not edit it.
	bob := a.browser().login("bob")
	bob.post("/pitches/"+id+"/edit", url.Values{"round": {"1"}, "title": {"Mine now"}, "lo": {"1"}, "hi": {"2"}}).wantStatus(t, http.StatusForbidden)

	// Withdraw with confirmation.
	wantContains(t, b.get("/pitches/"+id+"/withdraw").wantStatus(t, 200).body, "Withdraw pitch")
	b.post("/pitches/"+id+"/withdraw", nil).wantStatus(t, http.StatusSeeOther)
	wantContains(t, b.get("/rounds/1").body, "withdrawn")

	// An oversized form is a 413 and stores nothing.
	r = b.post("/pitches", url.Values{"round": {"1"}, "title": {"Big"}, "body": {strings.Repeat("x", 2<<20)}, "lo": {"1"}, "hi": {"2"}})
	r.wantStatus(t, http.StatusRequestEntityTooLarge)
	if ps, _ := a.db.Pitches(context.Background(), 1); len(ps) != 1 {
		t.Fatalf("round 1 has %d pitches", len(ps))
	}
}

func TestScorecardAndVoteForms(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p1 := a.pitch("alice", 1, "Pipeline stages")
	p2 := a.pitch("bob", 1, "Tile shape")
	a.status(1, "judging")

	// A document's typed total is shown next to the computed one.
	_, err := a.db.ImportScorecard(context.Background(), a.users["pragmatist"], p1.ID, pitches.ScorecardInput{
		Scores:   map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8},
		Estimate: pitches.Range{Lo: 1.5, Hi: 1.8}, Verdict: "FUND"}, 8.05)
	if err != nil {
		t.Fatalf("import scorecard: %v", err)
	}

	o := a.browser().login("oracle")
	page := o.get(fmt.Sprintf("/pitches/%d", p1.ID)).wantStatus(t, 200).body
	wantContains(t, page, "80% interval", `data-weight="40"`, "1 more scorecard(s) hidden", "Vote for this pitch")
	wantNotContains(t, page, "document said")

	// Out-of-range score: 422, message at the field, input kept.
	form := url.Values{"score_speedup": {"7"}, "score_feasibility": {"9"}, "score_risk": {"8"}, "score_pitch_quality": {"12"},
		"note_speedup": {"solid evidence"}, "lo": {"1.2"}, "hi": {"1.6"}, "verdict": {"FUND"}}
	r := o.post(fmt.Sprintf("/pitches/%d/scorecard", p1.ID), form)
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `id="err-scores.pitch_quality"`, "solid evidence", `value="1.6"`)
	// lo > hi.
	form.Set("score_pitch_quality", "8")
	form.Set("lo", "2")
	r = o.post(fmt.Sprintf("/pitches/%d/scorecard", p1.ID), form)
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `id="err-estimate"`)

	form.Set("lo", "1.2")
	r = o.post(fmt.Sprintf("/pitches/%d/scorecard", p1.ID), form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("scorecard = %d %s", r.status, r.body)
	}
	page = o.get(r.header.Get("Location")).wantStatus(t, 200).body
	wantContains(t, page, "Scorecard saved.", "total 7.85", "total 7.85 (document said 8.05)", "solid evidence", "Update your scorecard")

	// Vote, then the round page shows it with the justification.
	r = o.post("/rounds/1/vote", url.Values{"pitch": {fmt.Sprint(p1.ID)}, "justification": {"kernel-specific evidence"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("vote = %d %s", r.status, r.body)
	}
	if loc := r.header.Get("Location"); loc != "/rounds/1?ok=voted#standings" {
		t.Fatalf("vote redirect = %q", loc)
	}
	round := o.get("/rounds/1?ok=voted").wantStatus(t, 200).body
	wantContains(t, round, "Vote recorded.", "kernel-specific evidence")

	// A viewer sees no forms; a contestant cannot vote.
	v := a.browser().login("vera")
	wantNotContains(t, v.get(fmt.Sprintf("/pitches/%d", p2.ID)).body, "Submit scorecard", "Vote for this pitch")
	c := a.browser().login("alice")
	c.post("/rounds/1/vote", url.Values{"pitch": {fmt.Sprint(p2.ID)}, "justification": {"me"}}).wantStatus(t, http.StatusForbidden)
}

func TestWeightsForm(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	o := a.browser().login("oracle")
	page := o.get("/rounds/1").wantStatus(t, 200).body
	wantContains(t, page, "Your weights for this round", `name="w_speedup"`)
	r := o.post("/rounds/1/weights", url.Values{"w_speedup": {"50"}, "w_feasibility": {"25"}, "w_risk": {"20"}, "w_pitch_quality": {"15"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, "must sum to 100", `value="50"`)
	r = o.post("/rounds/1/weights", url.Values{"w_speedup": {"35"}, "w_feasibility": {"25"}, "w_risk": {"40"}, "w_pitch_quality": {"0"}})
	r.wantStatus(t, http.StatusSeeOther)
	wantContains(t, o.get("/rounds/1").body, "You set personal weights", "Risk (10 = low) 40")
}

func TestAdminPages(t *testing.T) {
	a := newApp(t, Config{})
	v := a.browser().login("vera")
	v.get("/admin/rounds").wantStatus(t, http.StatusForbidden)
	v.post("/admin/users", url.Values{"login": {"mallory"}, "role": {"admin"}, "password": {"long enough password"}}).wantStatus(t, http.StatusForbidden)

	ad := a.browser().login("admin")
	wantContains(t, ad.get("/admin/rounds").wantStatus(t, 200).body, "Open a new round", `value="1"`)
	form := url.Values{"number": {"1"}, "title": {"Pipeline"}, "rules": {"Be *kind*."},
		"key": {"speedup", "risk", ""}, "name": {"Speedup", "Risk", ""}, "description": {"", "", ""}, "weight": {"60", "30", ""}}
	r := ad.post("/admin/rounds", form)
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, "must sum to 100", `value="Pipeline"`)
	form["weight"] = []string{"60", "40", ""}
	ad.post("/admin/rounds", form).wantStatus(t, http.StatusSeeOther)
	wantContains(t, ad.get("/rounds/1").body, "Pipeline", "<em>kind</em>")

	// Edit the rubric while pitching.
	ad.post("/admin/rounds/1/edit", url.Values{"title": {"Pipeline 2"}, "key": {"speedup", "risk"}, "name": {"Speedup", "Risk"}, "description": {"", ""}, "weight": {"50", "50"}}).wantStatus(t, http.StatusSeeOther)
	rd, _ := a.db.Round(context.Background(), 1)
	if rd.Title != "Pipeline 2" || rd.Criteria[0].Weight != 50 {
		t.Fatalf("edited round = %+v", rd)
	}
	// Advance with confirmation.
	wantContains(t, ad.get("/admin/rounds/1/status?to=judging").wantStatus(t, 200).body, "Move round 1 to judging?")
	ad.get("/admin/rounds/1/status?to=closed").wantStatus(t, http.StatusConflict)
	// A bad status is refused on an error page that names the field (the
	// page has no input to show it beside), and changes nothing.
	bad := ad.post("/admin/rounds/1/status", url.Values{"status": {"bogus"}}).wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, bad.body, "status: must be pitching, judging or closed")
	if rd, _ := a.db.Round(context.Background(), 1); rd.Status != pitches.RoundPitching {
		t.Fatalf("status after a bad one = %s", rd.Status)
	}
	ad.post("/admin/rounds/1/status", url.Values{"status": {"judging"}}).wantStatus(t, http.StatusSeeOther)
	if rd, _ := a.db.Round(context.Background(), 1); rd.Status != pitches.RoundJudging {
		t.Fatalf("status = %s", rd.Status)
	}
	ad.post("/admin/rounds/1/edit", url.Values{"title": {"x"}, "key": {"speedup"}, "name": {"S"}, "description": {""}, "weight": {"100"}}).wantStatus(t, http.StatusConflict)

	// Users: add and change role.
	r = ad.post("/admin/users", url.Values{"login": {"Bad Login!"}, "role": {"shark"}, "password": {"long enough password"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, `id="err-login"`, `value="Bad Login!"`)
	ad.post("/admin/users", url.Values{"login": {"wildcard"}, "display_name": {"The Wildcard"}, "role": {"shark"}, "password": {"long enough password"}}).wantStatus(t, http.StatusSeeOther)
	wantContains(t, ad.get("/admin/users").body, "The Wildcard")
	ad.post(fmt.Sprintf("/admin/users/%d/role", a.users["vera"].ID), url.Values{"role": {"contestant"}}).wantStatus(t, http.StatusSeeOther)
	if u, _ := a.db.UserByID(context.Background(), a.users["vera"].ID); u.Role != pitches.RoleContestant {
		t.Fatalf("vera's role = %s", u.Role)
	}
}

func TestTokensPage(t *testing.T) {
	a := newApp(t, Config{})
	b := a.browser().login("alice")
	r := b.post("/tokens", url.Values{"label": {"laptop"}})
	r.wantStatus(t, http.StatusCreated)
	wantContains(t, r.body, "shown only once", "laptop")
	// The secret is not on the page afterwards.
	i := strings.Index(r.body, `class="secret-value">`)
	if i < 0 {
		t.Fatalf("no secret on page")
	}
	secret := r.body[i+len(`class="secret-value">`):]
	secret = secret[:strings.Index(secret, "<")]
	wantNotContains(t, b.get("/tokens").body, secret)
	a.tokens["laptop"] = secret
	a.api("GET", "/api/me", "laptop", nil).wantStatus(t, 200)

	toks, _ := a.db.Tokens(context.Background(), a.users["alice"].ID)
	for _, tok := range toks {
		b.post(fmt.Sprintf("/tokens/%d/revoke", tok.ID), nil).wantStatus(t, http.StatusSeeOther)
	}
	a.api("GET", "/api/me", "laptop", nil).wantStatus(t, http.StatusUnauthorized)
}

func TestHomeAndNotFound(t *testing.T) {
	a := newApp(t, Config{})
	b := a.browser().login("vera")
	wantContains(t, b.get("/").wantStatus(t, 200).body, "No rounds yet")
	a.round(1)
	a.pitch("alice", 1, "Pipeline stages")
	wantContains(t, b.get("/").wantStatus(t, 200).body, "Round 1", "Standings", "Pipeline stages")
	b.get("/rounds/9").wantStatus(t, http.StatusNotFound)
	b.get("/pitches/abc").wantStatus(t, http.StatusNotFound)
	b.get("/nowhere").wantStatus(t, http.StatusNotFound)
	b.get("/static/").wantStatus(t, http.StatusNotFound)
	wantContains(t, b.get("/static/app.js").wantStatus(t, 200).body, "data-live-total")
}

func TestSecureCookieOverTLS(t *testing.T) {
	a := newApp(t, Config{})
	tlsSrv := httptest.NewTLSServer(a.srv.Config.Handler)
	defer tlsSrv.Close()
	c := tlsSrv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.PostForm(tlsSrv.URL+"/login", url.Values{"login": {"oracle"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var found bool
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			found = true
			if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
				t.Fatalf("cookie over TLS = %+v", ck)
			}
		}
	}
	if !found {
		t.Fatalf("no session cookie over TLS (status %d)", res.StatusCode)
	}
}

func TestWeightsFrozenAfterScoring(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, "judging")
	o := a.browser().login("oracle")
	r := o.post(fmt.Sprintf("/pitches/%d/scorecard", p.ID), url.Values{"score_speedup": {"5"}, "score_feasibility": {"5"},
		"score_risk": {"5"}, "score_pitch_quality": {"5"}, "lo": {"1"}, "hi": {"1.1"}})
	r.wantStatus(t, http.StatusSeeOther)
	page := o.get("/rounds/1").wantStatus(t, 200).body
	wantContains(t, page, "your weights for it are frozen")
	wantNotContains(t, page, `name="w_speedup"`)
	// Posting anyway is refused by the service, with the form re-rendered.
	r = o.post("/rounds/1/weights", url.Values{"w_speedup": {"40"}, "w_feasibility": {"25"}, "w_risk": {"20"}, "w_pitch_quality": {"15"}})
	r.wantStatus(t, http.StatusConflict)
	wantContains(t, r.body, `class="form-error"`, "already submitted a scorecard")
}

func TestOwnPitchHasNoScoreOrVoteForm(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("oracle", 1, "The Oracle's own idea")
	a.status(1, "judging")
	page := a.browser().login("oracle").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, 200).body
	wantNotContains(t, page, "Submit scorecard", "Vote for this pitch")
}

func TestTrustedOrigin(t *testing.T) {
	if _, err := New(Config{TrustedOrigins: []string{"not an origin"}}, nil); err == nil {
		t.Fatalf("New accepted a malformed trusted origin")
	}
	a := newApp(t, Config{TrustedOrigins: []string{"https://tank.example"}})
	a.round(1)
	b := a.browser().login("alice")
	form := url.Values{"round": {"1"}, "title": {"Via the proxy"}, "lo": {"1.1"}, "hi": {"1.2"}}
	for origin, want := range map[string]int{"https://tank.example": http.StatusSeeOther, "https://evil.example": http.StatusForbidden} {
		req, _ := http.NewRequest("POST", a.srv.URL+"/pitches", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", origin)
		a.do(b.c, req).wantStatus(t, want)
	}
}

// The re-pitch link follows pitches.Can(ActRepitch): the pitch's contestant
// and admins get it while some round is pitching; other contestants,
// sharks and viewers never do, and nobody does once no round is pitching.
func TestRepitchLinkFollowsTheRule(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, pitches.RoundJudging)
	a.round(2) // pitching: a re-pitch has somewhere to go
	const link = "Re-pitch this idea"
	path := "/pitches/" + strconv.FormatInt(p.ID, 10)
	for login, want := range map[string]bool{"alice": true, "admin": true, "bob": false, "oracle": false, "vera": false} {
		body := a.browser().login(login).get(path).wantStatus(t, http.StatusOK).body
		if got := strings.Contains(body, link); got != want {
			t.Errorf("%s sees the re-pitch link: %v, want %v", login, got, want)
		}
	}
	a.status(2, pitches.RoundJudging)
	if body := a.browser().login("alice").get(path).body; strings.Contains(body, link) {
		t.Error("the re-pitch link shows while no round is pitching")
	}
}
