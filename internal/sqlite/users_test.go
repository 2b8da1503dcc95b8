package sqlite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

func TestUsersSessionsTokens(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)

	u, err := db.Authenticate(ctx, "oracle", "password-oracle")
	if err != nil || u.ID != c.oracle.ID || u.Role != pitches.RoleShark {
		t.Fatalf("authenticate: %+v, %v", u, err)
	}
	for _, tc := range [][2]string{{"oracle", "wrong-password"}, {"nobody", "password-oracle"}} {
		if _, err := db.Authenticate(ctx, tc[0], tc[1]); !errors.Is(err, pitches.ErrUnauthorized) {
			t.Errorf("authenticate %s/%s: %v, want ErrUnauthorized", tc[0], tc[1], err)
		}
	}
	var hash string
	if err := db.r.QueryRow(`SELECT password_hash FROM users WHERE login = 'oracle'`).Scan(&hash); err != nil || !strings.HasPrefix(hash, "$2") {
		t.Fatalf("password stored as %q, want a bcrypt hash", hash)
	}

	// Sessions: stored hashed, expire, can be deleted.
	secret, err := db.CreateSession(ctx, c.oracle.ID, time.Hour)
	if err != nil || !strings.HasPrefix(secret, "pts_") {
		t.Fatalf("create session: %q, %v", secret, err)
	}
	if n := count(t, db.r, `SELECT count(*) FROM sessions WHERE instr(secret_hash, '`+secret+`') > 0`); n != 0 {
		t.Fatal("session secret stored in clear")
	}
	if u, err := db.UserBySession(ctx, secret); err != nil || u.ID != c.oracle.ID {
		t.Fatalf("user by session: %+v, %v", u, err)
	}
	if _, err := db.UserBySession(ctx, secret+"x"); !errors.Is(err, pitches.ErrUnauthorized) {
		t.Errorf("tampered session: %v", err)
	}
	short, _ := db.CreateSession(ctx, c.viewer.ID, 2*time.Millisecond)
	db.Now() // the test clock ticks 1ms per call
	db.Now()
	if _, err := db.UserBySession(ctx, short); !errors.Is(err, pitches.ErrUnauthorized) {
		t.Errorf("expired session still valid: %v", err)
	}
	if err := db.DeleteSession(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserBySession(ctx, secret); !errors.Is(err, pitches.ErrUnauthorized) {
		t.Errorf("deleted session still valid: %v", err)
	}

	// Tokens: shown once, last use recorded, revocable by owner or admin only.
	tokSecret, tok, err := db.CreateToken(ctx, c.pragmatist.ID, "ci")
	if err != nil || !strings.HasPrefix(tokSecret, "ptt_") {
		t.Fatalf("create token: %v", err)
	}
	if u, err := db.UserByToken(ctx, tokSecret); err != nil || u.ID != c.pragmatist.ID {
		t.Fatalf("user by token: %+v, %v", u, err)
	}
	toks, _ := db.Tokens(ctx, c.pragmatist.ID)
	if len(toks) != 1 || toks[0].LastUsed == nil || toks[0].Label != "ci" {
		t.Fatalf("tokens %+v, want one with last use recorded", toks)
	}
	wantErr(t, db.RevokeToken(ctx, c.oracle, tok.ID), pitches.EFORBIDDEN, "")
	if err := db.RevokeToken(ctx, c.pragmatist, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByToken(ctx, tokSecret); !errors.Is(err, pitches.ErrUnauthorized) {
		t.Errorf("revoked token still valid: %v", err)
	}
	if _, err := db.UserBySession(ctx, tokSecret); !errors.Is(err, pitches.ErrUnauthorized) {
		t.Errorf("token accepted as a session: %v", err)
	}

	// Roles: an admin may change them, and a second admin may demote the first.
	if err := db.SetUserRole(ctx, c.admin, c.viewer.ID, pitches.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	newAdmin, _ := db.UserByID(ctx, c.viewer.ID)
	if err := db.SetUserRole(ctx, newAdmin, c.admin.ID, pitches.RoleContestant); err != nil {
		t.Fatalf("second admin demoting the first: %v", err)
	}
	u, _ = db.UserByID(ctx, c.admin.ID)
	if u.Role != pitches.RoleContestant {
		t.Errorf("role %s, want contestant", u.Role)
	}
	if _, err := db.UserByID(ctx, 999); pitches.ErrorCode(err) != pitches.ENOTFOUND {
		t.Errorf("missing user: %v", err)
	}
}

func TestCurrentRoundAndRepitchLinks(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	if _, err := db.CurrentRound(ctx); !errors.Is(err, pitches.ErrNotFound) {
		t.Fatalf("no rounds: %v, want ErrNotFound", err)
	}
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	orig := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	if r, _ := db.CurrentRound(ctx); r.Number != 1 {
		t.Errorf("current round %d, want the latest (closed) 1", r.Number)
	}
	mustRound(t, db, c.admin, 2, round1Rubric)
	mustRound(t, db, c.admin, 5, round1Rubric)
	mustStatus(t, db, c.admin, 5, pitches.RoundJudging)
	mustStatus(t, db, c.admin, 5, pitches.RoundClosed)
	if r, _ := db.CurrentRound(ctx); r.Number != 2 || len(r.Criteria) != 4 {
		t.Errorf("current round %d, want the open round 2", r.Number)
	}
	_, err := db.FilePitch(ctx, c.c[2], pitches.PitchInput{RoundNumber: 2, Title: "steal", Claim: pitches.Range{Lo: 1, Hi: 1}, RepitchOf: orig.ID})
	wantErr(t, err, pitches.EFORBIDDEN, "repitch_of")
	re, err := db.FilePitch(ctx, c.c[1], pitches.PitchInput{RoundNumber: 2, Title: "Pipeline Stages, 2 stages", Claim: pitches.Range{Lo: 0.8, Hi: 1.05}, RepitchOf: orig.ID, Variant: "baseline?stages=2"})
	if err != nil {
		t.Fatal(err)
	}
	if re.RepitchOf != orig.ID {
		t.Errorf("re-pitch links to %d, want %d", re.RepitchOf, orig.ID)
	}
	o, _ := db.Pitch(ctx, orig.ID)
	if len(o.RepitchedBy) != 1 || o.RepitchedBy[0] != re.ID {
		t.Errorf("original's RepitchedBy %v, want [%d]", o.RepitchedBy, re.ID)
	}
	ps, _ := db.Pitches(ctx, 2)
	if len(ps) != 1 || ps[0].Contestant != "Contestant 1" || ps[0].Variant != "baseline?stages=2" {
		t.Errorf("round 2 pitches %+v", ps)
	}
	w, err := db.WithdrawPitch(ctx, c.c[1], re.ID)
	if err != nil || w.Status != pitches.PitchWithdrawn {
		t.Fatalf("withdraw: %+v, %v", w, err)
	}
	_, err = db.WithdrawPitch(ctx, c.c[1], re.ID)
	wantErr(t, err, pitches.ECONFLICT, "")
}
