package main

import (
	"context"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// web user deactivate: the user cannot log in and their token stops
// working; reactivate undoes it; an unknown login is an error.
func TestUserDeactivate(t *testing.T) {
	db := emptyDB(t)
	if code, _, stderr := cli(t, "a long enough password\n", "user", "add", "--db", db, "--name", "ada", "--role", "shark"); code != 0 {
		t.Fatalf("user add: %d %q", code, stderr)
	}
	code, out, _ := cli(t, "", "token", "create", "--db", db, "--user", "ada")
	if code != 0 {
		t.Fatal("token create failed")
	}
	tok := strings.TrimSpace(out)
	if code, out, stderr := cli(t, "", "user", "deactivate", "--db", db, "--name", "ada"); code != 0 || !strings.Contains(out, "deactivated user ada") {
		t.Fatalf("deactivate: %d %q %q", code, out, stderr)
	}
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Authenticate(ctx, "ada", "a long enough password"); err == nil {
		t.Fatal("a deactivated user logs in")
	}
	if _, err := s.UserByToken(ctx, tok); err == nil {
		t.Fatal("a deactivated user's token works")
	}
	s.Close()
	if code, _, _ := cli(t, "", "user", "reactivate", "--db", db, "--name", "ada"); code != 0 {
		t.Fatal("reactivate failed")
	}
	// Again: nothing changes, and nothing is recorded (below).
	if code, _, _ := cli(t, "", "user", "reactivate", "--db", db, "--name", "ada"); code != 0 {
		t.Fatal("reactivating an active user failed")
	}
	if s, err = sqlite.Open(db); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Authenticate(ctx, "ada", "a long enough password"); err != nil {
		t.Fatalf("reactivated user cannot log in: %v", err)
	}
	// Every change made here is in the audit log the admins read, by the
	// command line, newest first.
	entries, err := s.AuditLog(ctx, pitches.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Actor != "(command line)" || e.ActorID != 0 {
			t.Errorf("audit entry %s by %q (id %d), want the command line", e.Action, e.Actor, e.ActorID)
		}
		got = append(got, e.Action+" "+e.Target+" "+string(e.After))
	}
	want := []string{"user.active", "user.active", "token.create", "user.create"}
	if len(got) != len(want) {
		t.Fatalf("audit log %q, want actions %q", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+" user ") {
			t.Errorf("audit entry %d: %q, want %s", i, got[i], w)
		}
	}
	if !strings.Contains(got[0], `"active":true`) || !strings.Contains(got[1], `"active":false`) || strings.Contains(strings.Join(got, " "), tok) {
		t.Errorf("audit log %q: reactivated last, deactivated before, and never the token's secret", got)
	}
	if code, _, stderr := cli(t, "", "user", "deactivate", "--db", db, "--name", "nobody"); code != 1 || !strings.Contains(stderr, "nobody") {
		t.Fatalf("unknown login: %d %q", code, stderr)
	}
	if code, _, _ := cli(t, "", "user", "deactivate", "--db", db); code != 2 {
		t.Fatalf("missing --name: exit %d, want 2", code)
	}
}
