package httpserver

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
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

func TestLoginLimitPerLoginAcrossIPs(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := &server{ipLimit: newLimiter(3, time.Minute, clock), nameLimit: newLimiter(3, time.Minute, clock)}
	for i := 0; i < 3; i++ {
		r := httptest.NewRequest("POST", "/login", nil)
		r.RemoteAddr = "10.0.0." + string(rune('1'+i)) + ":5000"
		if err := s.allowLogin(r, "Oracle"); err != nil {
			t.Fatalf("try %d: %v", i, err)
		}
	}
	r := httptest.NewRequest("POST", "/login", nil)
	r.RemoteAddr = "10.0.0.9:5000"
	if err := s.allowLogin(r, " oracle "); pitches.ErrorCode(err) != pitches.ERATELIMITED {
		t.Fatalf("fourth try at the same login from a fresh address: %v", err)
	}
	// That address is not blocked for other logins.
	if err := s.allowLogin(r, "pragmatist"); err != nil {
		t.Fatalf("other login from the fresh address: %v", err)
	}
}
