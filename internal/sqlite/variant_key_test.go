package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
