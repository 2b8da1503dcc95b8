package httpserver

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

func demoServer(t *testing.T, cfg Config) *app {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { _ = db.Close() })
	if _, err := demo.Load(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	return &app{t: t, srv: newTestServer(t, h), db: db}
}

// An anonymous visitor's home page says what the app is and, where the
// demo is loaded, that its logins exist; Rounds is not in the nav unless
// closed rounds are public.
func TestLandingPage(t *testing.T) {
	a := demoServer(t, Config{DemoLogins: true})
	body := a.browser().get("/").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "judging tool for GPU-kernel optimisation rounds", "data-demo-logins", "demo-oracle", `href="/login"`)
	wantNotContains(t, body, `href="/rounds"`)
	// No demo: no demo logins mentioned.
	b := demoServer(t, Config{}).browser().get("/").body
	wantNotContains(t, b, "data-demo-logins")
	// Rounds and pitches still need a login without --public-closed-rounds.
	for _, path := range []string{"/rounds", "/rounds/1", "/pitches/1"} {
		if r := a.browser().get(path); r.status != http.StatusSeeOther {
			t.Fatalf("anonymous %s without public rounds: %d, want 303 to login", path, r.status)
		}
	}
}

// --public-closed-rounds: anonymous visitors read closed rounds and their
// pitches; open rounds and their pitches still need a login.
func TestPublicClosedRounds(t *testing.T) {
	a := demoServer(t, Config{PublicClosedRounds: true})
	anon := a.browser()
	home := anon.get("/").body
	wantContains(t, home, "Closed rounds", `href="/rounds/1"`, `href="/rounds"`)
	wantNotContains(t, home, `href="/rounds/5"`)
	list := anon.get("/rounds").wantStatus(t, http.StatusOK).body
	wantContains(t, list, `href="/rounds/1"`)
	wantNotContains(t, list, `href="/rounds/5"`)
	r1 := anon.get("/rounds/1").wantStatus(t, http.StatusOK).body
	wantContains(t, r1, "Standings", "badge-winner")
	anon.get("/pitches/1").wantStatus(t, http.StatusOK)
	ps, err := a.db.Pitches(context.Background(), 5)
	if err != nil || len(ps) == 0 {
		t.Fatal(err)
	}
	for _, path := range []string{"/rounds/5", "/pitches/" + itoa64(ps[0].ID), "/runs", "/calibration"} {
		if r := anon.get(path); r.status != http.StatusSeeOther {
			t.Fatalf("anonymous %s (open round or logged-in page): %d, want 303 to login", path, r.status)
		}
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
