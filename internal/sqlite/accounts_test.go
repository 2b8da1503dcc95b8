package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// An unknown login costs as much as a wrong password: the dummy hash has
// the cost of real ones. bcrypt at cost 10 takes tens of milliseconds; at
// MinCost (the old dummy) about one, so a 3x band tells them apart.
func TestAuthenticateTakesAsLongForUnknownLogins(t *testing.T) {
	if testing.Short() {
		t.Skip("times bcrypt at cost 10 (about a second); skipped in -short")
	}
	db := MustOpenDB(t)
	db.BcryptCost = 10
	ctx := context.Background()
	if _, err := db.CreateUser(ctx, "ada", "Ada", pitches.RoleShark, "password-ada"); err != nil {
		t.Fatal(err)
	}
	median := func(login string) time.Duration {
		var ds []time.Duration
		for i := 0; i < 5; i++ {
			start := time.Now()
			if _, err := db.Authenticate(ctx, login, "wrong password"); pitches.ErrorCode(err) != pitches.EUNAUTHORIZED {
				t.Fatalf("authenticate %s with a wrong password: %v", login, err)
			}
			ds = append(ds, time.Since(start))
		}
		for i := range ds { // insertion sort, five values
			for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
				ds[j], ds[j-1] = ds[j-1], ds[j]
			}
		}
		return ds[len(ds)/2]
	}
	median("nobody") // builds the dummy hash at this cost once
	known, unknown := median("ada"), median("nobody")
	if ratio := float64(known) / float64(unknown); ratio > 3 || ratio < 1.0/3 {
		t.Fatalf("wrong password for a known login took %v, for an unknown one %v (ratio %.1f): timing reveals which logins exist", known, unknown, ratio)
	}
}

func TestChangePassword(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	u := mustUser(t, db, "ada", "Ada", pitches.RoleShark)
	for _, c := range []struct {
		old, new, field string
	}{
		{"wrong-old-password", "a new password", "old_password"},
		{"password-ada", "short", "new_password"},
		{"password-ada", "password-ada", "new_password"},
	} {
		err := db.ChangePassword(ctx, u, c.old, c.new)
		if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != c.field {
			t.Fatalf("change %q -> %q: %v (field %q), want invalid %s", c.old, c.new, err, pitches.ErrorField(err), c.field)
		}
		if _, err := db.Authenticate(ctx, "ada", "password-ada"); err != nil {
			t.Fatalf("a refused change changed the password: %v", err)
		}
	}
	if err := db.ChangePassword(ctx, u, "password-ada", "a new password"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, "ada", "password-ada"); err == nil {
		t.Fatal("the old password still works")
	}
	if _, err := db.Authenticate(ctx, "ada", "a new password"); err != nil {
		t.Fatalf("the new password does not work: %v", err)
	}
}

func TestDeactivateUser(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	admin := mustUser(t, db, "admin", "Admin", pitches.RoleAdmin)
	ada := mustUser(t, db, "ada", "Ada", pitches.RoleShark)
	sess, err := db.CreateSession(ctx, ada.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := db.CreateToken(ctx, ada.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetUserActive(ctx, ada, admin.ID, false); pitches.ErrorCode(err) != pitches.EFORBIDDEN {
		t.Fatalf("a shark deactivates an admin: %v, want forbidden", err)
	}
	if err := db.SetUserActive(ctx, admin, admin.ID, false); pitches.ErrorCode(err) != pitches.ECONFLICT {
		t.Fatalf("an admin deactivates themselves: %v, want conflict", err)
	}
	if err := db.SetUserActive(ctx, admin, ada.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, "ada", "password-ada"); pitches.ErrorCode(err) != pitches.EUNAUTHORIZED {
		t.Fatalf("a deactivated user logs in: %v", err)
	}
	if _, err := db.UserBySession(ctx, sess); err == nil {
		t.Fatal("a deactivated user's session still works")
	}
	if _, err := db.UserByToken(ctx, tok); err == nil {
		t.Fatal("a deactivated user's token still works")
	}
	got, err := db.UserByID(ctx, ada.ID)
	if err != nil || got.DeactivatedAt == nil {
		t.Fatalf("UserByID after deactivation: %+v, %v; want DeactivatedAt set", got, err)
	}
	if err := db.SetUserActive(ctx, admin, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, "ada", "password-ada"); err != nil {
		t.Fatalf("a reactivated user cannot log in: %v", err)
	}
	if _, err := db.UserByToken(ctx, tok); err != nil {
		t.Fatalf("a reactivated user's token (never revoked) does not work: %v", err)
	}
}
