package httpserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestLimiterRefills(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(2, time.Second, func() time.Time { return now })
	if !l.allow("a") || !l.allow("a") {
		t.Fatal("burst of 2 refused")
	}
	if l.allow("a") {
		t.Fatal("third try allowed")
	}
	if !l.allow("b") {
		t.Fatal("another key shares a's bucket")
	}
	now = now.Add(999 * time.Millisecond)
	if l.allow("a") {
		t.Fatal("allowed before a token came back")
	}
	now = now.Add(time.Millisecond)
	if !l.allow("a") || l.allow("a") {
		t.Fatal("one token should have come back after a second")
	}
	now = now.Add(time.Hour)
	if !l.allow("a") || !l.allow("a") || l.allow("a") {
		t.Fatal("a long pause refills only up to the burst")
	}
}

// loginFrom posts the login form from addr straight into the handler, so
// each try can come from its own address.
func loginFrom(t *testing.T, h http.Handler, addr, login, password string) int {
	t.Helper()
	form := url.Values{"login": {login}, "password": {password}}
	r := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = addr + ":5000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// Wrong tries from elsewhere never lock the real user out: the limits count
// failures per address and per (login, address), not per login.
func TestLoginLimitDoesNotLockOutTheRealUser(t *testing.T) {
	a := newApp(t, Config{LoginBurst: 4, LoginRefill: time.Hour})
	h := a.srv.Config.Handler
	// A guesser at one address: two wrong tries at oracle (half the burst),
	// then refused even with the right password from that address.
	for i := 0; i < 2; i++ {
		if code := loginFrom(t, h, "10.0.0.66", "oracle", "wrong password!"); code != http.StatusUnauthorized {
			t.Fatalf("wrong try %d: status %d, want 401", i, code)
		}
	}
	if code := loginFrom(t, h, "10.0.0.66", "oracle", testPassword); code != http.StatusTooManyRequests {
		t.Fatalf("third try from the guesser: status %d, want 429", code)
	}
	// Guessers at many addresses, each a couple of tries.
	for i := 0; i < 20; i++ {
		loginFrom(t, h, fmt.Sprintf("10.0.1.%d", i), "oracle", "wrong password!")
	}
	// The real user, from their own address: logged in.
	if code := loginFrom(t, h, "10.0.0.7", "oracle", testPassword); code != http.StatusSeeOther {
		t.Fatalf("right password from a fresh address after wrong tries elsewhere: status %d, want 303", code)
	}
}

// Successful logins use up no allowance; a success resets the backoff of the
// (login, address) pair, not the address's own failure count.
func TestLoginLimitCountsFailuresOnly(t *testing.T) {
	a := newApp(t, Config{LoginBurst: 4, LoginRefill: time.Hour})
	h := a.srv.Config.Handler
	for i := 0; i < 12; i++ {
		if code := loginFrom(t, h, "10.0.0.8", "alice", testPassword); code != http.StatusSeeOther {
			t.Fatalf("successful login %d from one address: status %d, want 303", i, code)
		}
	}
	// Pair backoff: (bob, addr) has 2 tries (half the burst); a success
	// from that address resets it.
	for i := 0; i < 2; i++ {
		if code := loginFrom(t, h, "10.0.0.9", "bob", "typo typo typo"); code != http.StatusUnauthorized {
			t.Fatalf("typo %d: status %d, want 401", i, code)
		}
	}
	if code := loginFrom(t, h, "10.0.0.9", "bob", testPassword); code != http.StatusTooManyRequests {
		t.Fatalf("third try at bob from the same address: status %d, want 429 (pair backoff)", code)
	}
	if code := loginFrom(t, h, "10.0.0.9", "alice", testPassword); code != http.StatusSeeOther {
		t.Fatalf("another login from that address (address still has tries): status %d, want 303", code)
	}
	// The address has two failures left of four; wrong tries at other
	// logins drain it, whatever the login.
	loginFrom(t, h, "10.0.0.9", "vera", "nope nope nope")
	loginFrom(t, h, "10.0.0.9", "admin", "nope nope nope")
	if code := loginFrom(t, h, "10.0.0.9", "alice", testPassword); code != http.StatusTooManyRequests {
		t.Fatalf("address out of failures: status %d, want 429", code)
	}
}

func TestLimiterResetAndPeek(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(2, time.Minute, func() time.Time { return now })
	if !l.has("a") || !l.has("a") || !l.has("a") {
		t.Fatal("has must not take tokens")
	}
	l.take("a")
	l.take("a")
	if l.has("a") {
		t.Fatal("two takes of a burst of 2 left a token")
	}
	l.reset("a")
	if !l.has("a") {
		t.Fatal("reset did not refill")
	}
}
