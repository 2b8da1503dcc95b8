package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// Concurrent creates of one threshold, which all pass the web layer's
// duplicate check before any of them is stored, end with one row: the
// others get the check's own 409, naming the stored threshold, never a 500.
// The rule is the check's exactly: another percent, baseline run, round or
// a variant differing only in case is another threshold.
func TestAddThresholdRaceStoresOne(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	mustRound(t, db, c.admin, 2, round1Rubric)
	base := importResult(t, db, c.admin, 0, "baseline", runner.StatusSucceeded)
	other := importResult(t, db, c.admin, 0, "baseline", runner.StatusSucceeded)

	for _, tc := range []struct {
		th    tracking.Threshold
		field string
	}{
		{tracking.Threshold{Round: 1, BaselineRun: base.ID, Percent: 5}, "round"},
		{tracking.Threshold{Problem: "nvfp4_group_gemm", Variant: "baseline?stages=3", BaselineRun: base.ID, Percent: 7.5}, "variant"},
	} {
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		ids := make([]int64, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				th, err := db.AddThreshold(ctx, tc.th)
				errs[i] = err
				if err == nil {
					ids[i] = th.ID
				}
			}()
		}
		close(start)
		wg.Wait()
		var kept int64
		for i, err := range errs {
			if err == nil {
				if kept != 0 {
					t.Fatalf("%s: thresholds %d and %d both stored", tc.th.Scope(), kept, ids[i])
				}
				kept = ids[i]
			}
		}
		if kept == 0 {
			t.Fatalf("%s: no create succeeded: %v", tc.th.Scope(), errs)
		}
		for _, err := range errs {
			if err == nil {
				continue
			}
			wantErr(t, err, pitches.ECONFLICT, tc.field)
			if msg := pitches.ErrorMessage(err); !strings.HasPrefix(msg, fmt.Sprintf("threshold %d already checks %s against run %d at ", kept, tc.th.Scope(), base.ID)) {
				t.Fatalf("%s: message %q", tc.th.Scope(), msg)
			}
		}
		if n := count(t, db.w, fmt.Sprintf(`SELECT count(*) FROM regression_thresholds WHERE baseline_run = %d AND percent = %g`, base.ID, tc.th.Percent)); n != 1 {
			t.Fatalf("%s: %d rows stored, want 1", tc.th.Scope(), n)
		}
	}

	for _, th := range []tracking.Threshold{
		{Round: 1, BaselineRun: base.ID, Percent: 10},
		{Round: 1, BaselineRun: other.ID, Percent: 5},
		{Round: 2, BaselineRun: base.ID, Percent: 5},
		{Problem: "nvfp4_group_gemm", Variant: "Baseline?stages=3", BaselineRun: base.ID, Percent: 7.5},
		{Problem: "nvfp4_group_gemm", Variant: "baseline?stages=4", BaselineRun: base.ID, Percent: 7.5},
	} {
		if _, err := db.AddThreshold(ctx, th); err != nil {
			t.Fatalf("%s against run %d at %g%%: %v", th.Scope(), th.BaselineRun, th.Percent, err)
		}
	}
}

// Migration 154 removes duplicate thresholds stored before it, keeping the
// oldest of each; the removed ones' alerts move to it, or keep no
// threshold where it already has an alert on that run.
func TestMigration154KeepsOldestThreshold(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawDBAt(t, path, 153)
	const at = `'2026-01-01T00:00:00.000000000Z'`
	for _, q := range []string{
		`INSERT INTO rounds (number, title, rules, status, created_at, updated_at) VALUES (1, 'r', '', 'pitching', ` + at + `, ` + at + `)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at) VALUES
			(1, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `), (2, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `),
			(3, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `)`,
		// 1, 2 and 4 are one bound (round 1, run 1, 5%); 3 is another percent;
		// 5 and 6 are one variant's bound, 7 another variant (case counts).
		`INSERT INTO regression_thresholds (id, round_number, problem, variant, baseline_run, percent, created_at) VALUES
			(1, 1, '', '', 1, 5, ` + at + `), (2, 1, '', '', 1, 5.0, ` + at + `), (3, 1, '', '', 1, 10, ` + at + `),
			(4, 1, '', '', 1, 5, ` + at + `), (5, NULL, 'p', 'v', 1, 5, ` + at + `), (6, NULL, 'p', 'v', 1, 5, ` + at + `),
			(7, NULL, 'p', 'V', 1, 5, ` + at + `)`,
		// Run 2 has alerts from 1 and 2 (the same alert twice), run 3 from 4
		// only, and from 6.
		`INSERT INTO regression_alerts (id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at) VALUES
			(1, 2, 1, 1, 5, '[]', 's', ` + at + `), (2, 2, 2, 1, 5, '[]', 's', ` + at + `),
			(3, 3, 4, 1, 5, '[]', 's', ` + at + `), (4, 3, 6, 1, 5, '[]', 's', ` + at + `)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ths, err := db.Thresholds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, th := range ths {
		got = append(got, th.ID)
	}
	if fmt.Sprint(got) != "[1 3 5 7]" {
		t.Fatalf("thresholds after migration 154: %v, want [1 3 5 7]", got)
	}
	for alert, want := range map[int64]sql.NullInt64{1: {Int64: 1, Valid: true}, 2: {}, 3: {Int64: 1, Valid: true}, 4: {Int64: 5, Valid: true}} {
		var th sql.NullInt64
		if err := db.w.QueryRowContext(ctx, `SELECT threshold_id FROM regression_alerts WHERE id = ?`, alert).Scan(&th); err != nil {
			t.Fatalf("alert %d: %v", alert, err)
		}
		if th != want {
			t.Errorf("alert %d: threshold %v, want %v", alert, th, want)
		}
	}
	_, err = db.AddThreshold(ctx, tracking.Threshold{Round: 1, BaselineRun: 1, Percent: 5})
	wantErr(t, err, pitches.ECONFLICT, "round")
}
