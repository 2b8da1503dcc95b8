package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// TestGeneration: every write a page may show bumps the generation, a
// refused write and the writes of logging in and using tokens do not.
func TestGeneration(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)

	g := db.Generation()
	mustRound(t, db, c.admin, 1, round1Rubric)
	if db.Generation() <= g {
		t.Fatalf("creating a round left the generation at %d", g)
	}
	g = db.Generation()
	if _, err := db.CreateRound(ctx, c.viewer, pitches.RoundInput{Number: 2, Title: "x"}); err == nil {
		t.Fatal("a viewer created a round")
	}
	if db.Generation() != g {
		t.Fatalf("a refused write moved the generation from %d to %d", g, db.Generation())
	}
	secret, err := db.CreateSession(ctx, c.viewer.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := db.CreateToken(ctx, c.viewer.ID, "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSession(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if db.Generation() != g {
		t.Fatalf("sessions and tokens moved the generation from %d to %d", g, db.Generation())
	}
	mustPitch(t, db, c.c[1], 1, "p", 1.1, 1.2)
	if db.Generation() <= g {
		t.Fatal("filing a pitch left the generation alone")
	}
}
