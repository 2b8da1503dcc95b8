package audit_test

import (
	"context"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// openDB is a fresh store with an audit log, wrapped as the server wraps
// it, with an admin and a shark.
func openDB(t *testing.T) (*sqlite.DB, pitches.Service, *pitches.User, *pitches.User) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.BcryptCost = bcrypt.MinCost
	ctx := context.Background()
	admin, err := db.CreateUser(ctx, "admin", "Admin", pitches.RoleAdmin, "password-admin")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := db.CreateUser(ctx, "bob", "Bob", pitches.RoleShark, "password-bob")
	if err != nil {
		t.Fatal(err)
	}
	return db, audit.Wrap(db, nil, nil, nil), admin, bob
}

func entries(t *testing.T, db *sqlite.DB, action string) []pitches.AuditEntry {
	t.Helper()
	es, err := db.AuditLog(context.Background(), pitches.AuditFilter{Action: action})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// Revoking a token twice succeeds twice (the API's 204 both times) but
// changes the database once, so the log has one token.revoke, not a second
// one claiming the token went from unrevoked to revoked again. An admin
// revoking the already revoked token records nothing either.
func TestRevokeTwiceRecordsOnce(t *testing.T) {
	ctx := context.Background()
	db, svc, admin, bob := openDB(t)
	_, tok, err := svc.CreateToken(ctx, bob.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	for i, by := range []*pitches.User{bob, bob, admin} {
		if err := svc.RevokeToken(ctx, by, tok.ID); err != nil {
			t.Fatalf("revoke %d by %s: %v", i+1, by.Login, err)
		}
	}
	es := entries(t, db, "token.revoke")
	if len(es) != 1 {
		t.Fatalf("%d token.revoke entries, want 1: %+v", len(es), es)
	}
	if es[0].Actor != "bob" || string(es[0].Before) != `{"id":1,"revoked":false}` || string(es[0].After) != `{"id":1,"revoked":true}` {
		t.Errorf("entry %+v (before %s, after %s)", es[0], es[0].Before, es[0].After)
	}
	// A refused revocation (someone else's token) records nothing.
	_, other, err := svc.CreateToken(ctx, admin.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeToken(ctx, bob, other.ID); pitches.ErrorCode(err) != pitches.EFORBIDDEN {
		t.Fatalf("bob revokes the admin's token: %v, want forbidden", err)
	}
	if n := len(entries(t, db, "token.revoke")); n != 1 {
		t.Fatalf("%d token.revoke entries after a refused revocation, want 1", n)
	}
}

// Deactivating a deactivated user, reactivating an active one or setting
// the role a user has changes nothing and records nothing; the real
// changes are recorded once each.
func TestNoOpUserChangesRecordNothing(t *testing.T) {
	ctx := context.Background()
	db, svc, admin, bob := openDB(t)
	steps := []struct {
		do   func() error
		what string
	}{
		{func() error { return svc.SetUserActive(ctx, admin, bob.ID, true) }, "reactivate an active user"},
		{func() error { return svc.SetUserActive(ctx, admin, bob.ID, false) }, "deactivate"},
		{func() error { return svc.SetUserActive(ctx, admin, bob.ID, false) }, "deactivate again"},
		{func() error { return svc.SetUserActive(ctx, admin, bob.ID, true) }, "reactivate"},
		{func() error { return svc.SetUserRole(ctx, admin, bob.ID, pitches.RoleShark) }, "the same role"},
		{func() error { return svc.SetUserRole(ctx, admin, bob.ID, pitches.RoleViewer) }, "a new role"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
	}
	active := entries(t, db, "user.active")
	if len(active) != 2 {
		t.Fatalf("%d user.active entries, want 2 (deactivate, reactivate): %+v", len(active), active)
	}
	for _, e := range active {
		if string(e.Before) == string(e.After) {
			t.Errorf("entry %d records no change: %s", e.ID, e.Before)
		}
	}
	if role := entries(t, db, "user.role"); len(role) != 1 {
		t.Fatalf("%d user.role entries, want 1 (shark -> viewer): %+v", len(role), role)
	}
}

// Changed compares the documents an entry would hold.
func TestChanged(t *testing.T) {
	for _, c := range []struct {
		before, after any
		want          bool
	}{
		{nil, nil, false},
		{nil, map[string]any{"a": 1}, true},
		{map[string]any{"a": 1}, nil, true},
		{map[string]any{"a": 1, "b": 2}, map[string]any{"b": 2, "a": 1}, false},
		{map[string]any{"a": 1}, map[string]any{"a": 2}, true},
	} {
		if got := audit.Changed(c.before, c.after); got != c.want {
			t.Errorf("Changed(%v, %v) = %v, want %v", c.before, c.after, got, c.want)
		}
	}
}
