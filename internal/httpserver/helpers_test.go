package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// app is a running server on a fresh SQLite file, with a cast of users
// and an API token for each.
type app struct {
	t      *testing.T
	srv    *httptest.Server
	db     *sqlite.DB
	users  map[string]*pitches.User
	tokens map[string]string
	filed  map[string]int // pitches filed by a.pitch per login and round
}

var rubric = []pitches.Criterion{
	{Key: "speedup", Name: "Expected speedup", Description: "How much faster", Weight: 40},
	{Key: "feasibility", Name: "Feasibility", Weight: 25},
	{Key: "risk", Name: "Risk (10 = low)", Weight: 20},
	{Key: "pitch_quality", Name: "Pitch quality", Weight: 15},
}

const testPassword = "correct horse battery"

// newApp starts the real handler over a real database. cfg may be tuned.
func newApp(t *testing.T, cfg Config) *app {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { _ = db.Close() })
	h, err := New(cfg, db)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := &app{t: t, srv: srv, db: db, users: map[string]*pitches.User{}, tokens: map[string]string{}}
	for _, u := range []struct {
		login string
		role  pitches.Role
	}{
		{"admin", pitches.RoleAdmin}, {"oracle", pitches.RoleShark}, {"pragmatist", pitches.RoleShark},
		{"alice", pitches.RoleContestant}, {"bob", pitches.RoleContestant}, {"vera", pitches.RoleViewer},
	} {
		a.user(u.login, u.role)
	}
	return a
}

func (a *app) user(login string, role pitches.Role) *pitches.User {
	a.t.Helper()
	ctx := context.Background()
	u, err := a.db.CreateUser(ctx, login, strings.ToUpper(login[:1])+login[1:], role, testPassword)
	if err != nil {
		a.t.Fatalf("create user %s: %v", login, err)
	}
	secret, _, err := a.db.CreateToken(ctx, u.ID, "test")
	if err != nil {
		a.t.Fatalf("create token %s: %v", login, err)
	}
	a.users[login], a.tokens[login] = u, secret
	return u
}

// round creates round n with the test rubric.
func (a *app) round(n int) *pitches.Round {
	a.t.Helper()
	r, err := a.db.CreateRound(context.Background(), a.users["admin"], pitches.RoundInput{Number: n, Title: "Round title", Criteria: rubric})
	if err != nil {
		a.t.Fatalf("create round %d: %v", n, err)
	}
	return r
}

func (a *app) pitch(login string, round int, title string) *pitches.Pitch {
	a.t.Helper()
	// A contestant pitches a variant once per round (pitches.CheckVariantFree):
	// the first pitch is the baseline, later ones knob variants of it.
	if a.filed == nil {
		a.filed = map[string]int{}
	}
	key := fmt.Sprintf("%s/%d", login, round)
	variant := "baseline"
	if n := a.filed[key]; n > 0 {
		variant = fmt.Sprintf("baseline?stages=%d", n+1)
	}
	a.filed[key]++
	p, err := a.db.FilePitch(context.Background(), a.users[login], pitches.PitchInput{RoundNumber: round, Title: title,
		Body: "We raise **num_ab_stage**.", Claim: pitches.Range{Lo: 1.2, Hi: 1.5}, Variant: variant})
	if err != nil {
		a.t.Fatalf("file pitch %q: %v", title, err)
	}
	return p
}

func (a *app) status(round int, s pitches.RoundStatus) {
	a.t.Helper()
	if _, err := a.db.SetRoundStatus(context.Background(), a.users["admin"], round, s); err != nil {
		a.t.Fatalf("round %d -> %s: %v", round, s, err)
	}
}

// resp is a finished HTTP exchange.
type resp struct {
	status int
	header http.Header
	body   string
}

// api calls the JSON API as login ("" for no token) with body marshalled
// from v (a string is sent verbatim).
func (a *app) api(method, path, login string, v any) resp {
	a.t.Helper()
	var body io.Reader
	switch b := v.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(v)
		if err != nil {
			a.t.Fatalf("marshal: %v", err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, body)
	if err != nil {
		a.t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if login != "" {
		tok := a.tokens[login]
		if tok == "" {
			tok = login // lets a test send a made-up token
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return a.do(http.DefaultClient, req)
}

func (a *app) do(c *http.Client, req *http.Request) resp {
	a.t.Helper()
	res, err := c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatalf("read body: %v", err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: string(b)}
}

// wantStatus fails unless r has the status.
func (r resp) wantStatus(t *testing.T, status int) resp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
	return r
}

// wantError checks a JSON error response: status, code and field.
func (r resp) wantError(t *testing.T, status int, code, field string) {
	t.Helper()
	r.wantStatus(t, status)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error content type %q, want JSON; body %s", ct, r.body)
	}
	var e errorBody
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, r.body)
	}
	if e.Error.Code != code {
		t.Fatalf("error code %q, want %q; body %s", e.Error.Code, code, r.body)
	}
	if field != "*" && e.Error.Field != field {
		t.Fatalf("error field %q, want %q; body %s", e.Error.Field, field, r.body)
	}
	if e.Error.Message == "" {
		t.Fatalf("error without message: %s", r.body)
	}
}

func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r.body)
	}
}

// browser is a cookie-carrying client that does not follow redirects, so
// tests see the PRG 303s. It sends Sec-Fetch-Site like a real browser.
type browser struct {
	a    *app
	c    *http.Client
	site string // Sec-Fetch-Site value for non-GET requests
}

func (a *app) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		a.t.Fatalf("cookie jar: %v", err)
	}
	return &browser{a: a, site: "same-origin", c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) resp {
	b.a.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.a.srv.URL+path, nil)
	if err != nil {
		b.a.t.Fatalf("new request: %v", err)
	}
	return b.a.do(b.c, req)
}

func (b *browser) post(path string, form url.Values) resp {
	b.a.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.a.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.a.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if b.site != "" {
		req.Header.Set("Sec-Fetch-Site", b.site)
	}
	return b.a.do(b.c, req)
}

// login logs the browser in and fails the test if that does not work.
func (b *browser) login(login string) *browser {
	b.a.t.Helper()
	r := b.post("/login", url.Values{"login": {login}, "password": {testPassword}})
	if r.status != http.StatusSeeOther {
		b.a.t.Fatalf("login %s: status %d: %s", login, r.status, r.body)
	}
	return b
}

func wantContains(t *testing.T, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Fatalf("body does not contain %q:\n%s", s, body)
		}
	}
}

func wantNotContains(t *testing.T, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(body, s) {
			t.Fatalf("body contains %q", s)
		}
	}
}

// jsonNumber finds, in a JSON body, a value whose number matches pattern
// (a regular expression over the number's text). A plain substring check
// fails at random: timestamps carry fractional seconds, so "3.24" or "100"
// turn up in one run in a hundred.
func jsonNumber(body, pattern string) string {
	return regexp.MustCompile(`:\s*(` + pattern + `)\s*[,}\]]`).FindString(body)
}

// wantNoJSONNumber fails when a JSON body holds a value that matches one of
// the patterns (see jsonNumber).
func wantNoJSONNumber(t *testing.T, body string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if m := jsonNumber(body, p); m != "" {
			t.Fatalf("body holds the value %q (pattern %s)", m, p)
		}
	}
}
