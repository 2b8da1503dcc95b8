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
// predicts: its own runs, and any run of its variant that its round's
// measurement would take as the pitch's, under no pitch or another pitch,
// in its round or another (a closed round's result of the variant is
// public); not a run on another device class than the round measures on.
func TestFirstResultAtCoversTheVariantsMeasurement(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	measure := func(n int, class string) {
		t.Helper()
		mustRound(t, db, c.admin, n, round1Rubric)
		if _, err := db.SetRoundMeasurement(ctx, c.admin, n, pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", DeviceClass: class, AllowImports: true}, "baseline"); err != nil {
			t.Fatal(err)
		}
	}
	measure(1, "")
	measure(2, "")
	measure(3, "H100") // importResult's runs are B200s
	file := func(by *pitches.User, round int, variant string) *pitches.Pitch {
		t.Helper()
		p, err := db.FilePitch(ctx, by, pitches.PitchInput{RoundNumber: round, Title: "p " + variant, Claim: pitches.Range{Lo: 1, Hi: 2}, Variant: variant})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := func(p *pitches.Pitch) time.Time {
		t.Helper()
		at, err := db.FirstResultAt(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	const v = "baseline?stages=3"
	mine, other := file(c.c[1], 2, v), file(c.c[2], 2, v)
	onH100 := file(c.c[1], 3, v)
	if !first(mine).IsZero() {
		t.Fatal("a result before any run")
	}
	importResult(t, db, c.admin, other.ID, v, runner.StatusIncorrect)
	if first(mine).IsZero() || !first(mine).Equal(first(other)) {
		t.Errorf("another pitch's result of the variant does not date this pitch's predictions: %v and %v", first(mine), first(other))
	}
	if !first(onH100).IsZero() {
		t.Errorf("a B200 result dates the predictions of a round measured on H100s: %v", first(onH100))
	}
	// Under no pitch, before the pitch was filed (after, CheckBlindRun
	// refuses it), and an earlier round's pitch: both count.
	importResult(t, db, c.admin, 0, "baseline?stages=4", runner.StatusSucceeded)
	if first(file(c.c[3], 2, "baseline?stages=4")).IsZero() {
		t.Error("a result of the variant under no pitch does not date the pitch's predictions")
	}
	earlier := file(c.c[3], 1, "baseline?tile_m=64")
	importResult(t, db, c.admin, earlier.ID, "baseline?tile_m=64", runner.StatusSucceeded)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	if first(file(c.c[1], 2, "baseline?tile_m=64")).IsZero() {
		t.Error("a closed round's result of the variant does not date a later round's predictions")
	}
}
