package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Migration 155 keys the runs stored before it (its Go step), so a lookup
// by variant finds a kernel's old rows whatever order their knobs were
// typed in, through the runs_variant_key index; runs stored after it are
// keyed as they are written, a re-queue's copy included.
func TestMigration155KeysOldRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawDBAt(t, path, 154)
	const at = `'2026-01-01T00:00:00.000000000Z'`
	if _, err := raw.ExecContext(ctx, `INSERT INTO runs (id, problem, suite, variant, device, status, created_at) VALUES
		(1, 'p', 'tests', 'wgmma?tile_n=128&stages=2', 'cpu', 'failed', `+at+`),
		(2, 'p', 'tests', 'wgmma?stages=2&tile_n=128', 'cpu', 'failed', `+at+`),
		(3, 'p', 'tests', 'wgmma?stages=3&tile_n=128', 'cpu', 'failed', `+at+`),
		(4, 'q', 'tests', 'wgmma?stages=2&tile_n=128', 'cpu', 'failed', `+at+`)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := func(f runner.Filter) []int64 {
		t.Helper()
		rs, err := db.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(runner.Filter{Problem: "p", Variant: "wgmma?tile_n=128&stages=2"}); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("old runs of one kernel, knobs in either order: %v, want [2 1]", got)
	}
	again, err := db.Requeue(ctx, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(runner.Filter{Problem: "p", Variant: "wgmma?stages=2&tile_n=128"}); len(got) != 3 || got[0] != again.ID {
		t.Errorf("after a re-queue of run 2: %v, want the re-queue then 2 and 1", got)
	}
	var plan, detail string
	var a, b int
	if err := db.w.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM runs WHERE problem = ? AND variant_key IN (?, ?) ORDER BY id DESC LIMIT 100`,
		"p", "x", "y").Scan(&a, &b, &plan, &detail); err != nil {
		t.Fatal(err)
	}
	if want := "runs_variant_key"; !strings.Contains(detail, want) {
		t.Errorf("a lookup by variant does not use %s: %s", want, detail)
	}
}

// FirstResultAt dates a pitch's predictions by the first result of what it
// predicts: its own runs, and its variant's (same problem) under no pitch
// or under another pitch of its round; not a run of another round's pitch
// (another round is another measurement: a re-pitch's predictions are its
// own).
func TestFirstResultAtCoversTheVariantInTheRound(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	for n := 1; n <= 2; n++ {
		mustRound(t, db, c.admin, n, round1Rubric)
		if _, err := db.SetRoundMeasurement(ctx, c.admin, n, pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", AllowImports: true}, "baseline"); err != nil {
			t.Fatal(err)
		}
	}
	file := func(by *pitches.User, round int, variant string) *pitches.Pitch {
		t.Helper()
		p, err := db.FilePitch(ctx, by, pitches.PitchInput{RoundNumber: round, Title: "p " + variant, Claim: pitches.Range{Lo: 1, Hi: 2}, Variant: variant})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const v = "baseline?stages=3"
	earlier := file(c.c[1], 1, v)
	importResult(t, db, c.admin, earlier.ID, v, runner.StatusSucceeded)
	mine, other := file(c.c[1], 2, v), file(c.c[2], 2, v)
	first := func(p *pitches.Pitch) time.Time {
		t.Helper()
		at, err := db.FirstResultAt(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	if at := first(mine); !at.IsZero() {
		t.Errorf("an earlier round's result of the variant dates round 2's predictions: %v", at)
	}
	importResult(t, db, c.admin, other.ID, "baseline?stages=3", runner.StatusIncorrect)
	if first(mine).IsZero() {
		t.Error("another round-2 pitch's result of the variant does not date this pitch's predictions")
	}
	if !first(mine).Equal(first(other)) {
		t.Errorf("the two pitches of one variant in one round are dated %v and %v", first(mine), first(other))
	}
	// Under no pitch, before the pitch was filed (after, CheckBlindRun
	// refuses it): counts for the pitch of the variant.
	importResult(t, db, c.admin, 0, "baseline?stages=4", runner.StatusSucceeded)
	solo := file(c.c[3], 2, "baseline?stages=4")
	if first(solo).IsZero() {
		t.Error("a result of the variant under no pitch does not date the pitch's predictions")
	}
}
