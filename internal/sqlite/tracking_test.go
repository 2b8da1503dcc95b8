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

// Migration 156 adds the alerts' dismissal: alerts stored before it are
// active, keep their figures, and can then be dismissed and restored.
func TestMigration156KeepsAlertsActive(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	// 155 has a Go step (rawDBAt applies SQL only): Open applies 155 and 156.
	raw := rawDBAt(t, path, 154)
	const at = `'2026-01-01T00:00:00.000000000Z'`
	for _, q := range []string{
		`INSERT INTO users (id, login, display_name, role, password_hash, created_at) VALUES (1, 'admin', 'Admin', 'admin', 'x', ` + at + `)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at) VALUES
			(1, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `), (2, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `)`,
		`INSERT INTO regression_alerts (id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at) VALUES
			(1, 2, NULL, 1, 5, '{"scope": "round 1", "shapes": []}', 'run #2 is slower', ` + at + `)`,
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
	a, err := db.Alert(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Dismissed != nil || a.Summary != "run #2 is slower" || a.Scope != "round 1" {
		t.Fatalf("alert 1 after migration 156: %+v", a)
	}
	if as, err := db.Alerts(ctx, tracking.AlertFilter{State: tracking.StateActive}); err != nil || len(as) != 1 {
		t.Fatalf("active alerts after migration 156: %v, %v", as, err)
	}
	if _, after, err := db.DismissAlert(ctx, 1, 1, "old noise"); err != nil || after.Dismissed == nil || after.Dismissed.ByLogin != "admin" {
		t.Fatalf("dismiss a migrated alert: %+v, %v", after, err)
	}
}

// An alert's dismissal is stored with who, when and why; the state filter
// sees it; a second dismissal and restoring an active alert are refused
// without a change; an unknown alert is ENOTFOUND; restoring clears it all.
func TestDismissAlert(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	base := importResult(t, db, c.admin, 0, "baseline", runner.StatusSucceeded)
	var ids []int64
	for range 3 {
		run := importResult(t, db, c.admin, 0, "baseline", runner.StatusSucceeded)
		a, err := db.AddAlert(ctx, tracking.Alert{RunID: run.ID, BaselineRun: base.ID, Percent: 5, Scope: "round 1",
			Shapes: []tracking.ShapeRegression{}, Summary: fmt.Sprintf("run #%d is slower", run.ID), CreatedAt: db.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	before, after, err := db.DismissAlert(ctx, ids[1], c.admin.ID, "the card was hot")
	if err != nil {
		t.Fatal(err)
	}
	if before.Dismissed != nil || after.Dismissed == nil || after.Dismissed.By != c.admin.ID || after.Dismissed.ByLogin != "admin" ||
		after.Dismissed.Reason != "the card was hot" || after.Dismissed.At.IsZero() {
		t.Fatalf("dismissal: before %+v after %+v", before.Dismissed, after.Dismissed)
	}
	list := func(f tracking.AlertFilter) string {
		t.Helper()
		as, err := db.Alerts(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, a := range as {
			got = append(got, a.ID)
		}
		return fmt.Sprint(got)
	}
	for _, tc := range []struct {
		f    tracking.AlertFilter
		want []int64
	}{
		{tracking.AlertFilter{}, []int64{ids[2], ids[1], ids[0]}},
		{tracking.AlertFilter{State: tracking.StateAll}, []int64{ids[2], ids[1], ids[0]}},
		{tracking.AlertFilter{State: tracking.StateActive}, []int64{ids[2], ids[0]}},
		{tracking.AlertFilter{State: tracking.StateDismissed}, []int64{ids[1]}},
		{tracking.AlertFilter{State: tracking.StateActive, Before: ids[2], Limit: 1}, []int64{ids[0]}},
		{tracking.AlertFilter{RunID: after.RunID, State: tracking.StateActive}, nil},
	} {
		if got := list(tc.f); got != fmt.Sprint(tc.want) {
			t.Errorf("alerts %+v: %s, want %v", tc.f, got, tc.want)
		}
	}

	_, _, err = db.DismissAlert(ctx, ids[1], c.oracle.ID, "again")
	wantErr(t, err, pitches.ECONFLICT, "")
	if a, _ := db.Alert(ctx, ids[1]); a.Dismissed.Reason != "the card was hot" {
		t.Errorf("a refused second dismissal changed the reason to %q", a.Dismissed.Reason)
	}
	_, _, err = db.UndismissAlert(ctx, ids[0])
	wantErr(t, err, pitches.ECONFLICT, "")
	_, _, err = db.DismissAlert(ctx, 999, c.admin.ID, "x")
	wantErr(t, err, pitches.ENOTFOUND, "")
	_, _, err = db.UndismissAlert(ctx, 999)
	wantErr(t, err, pitches.ENOTFOUND, "")
	_, err = db.Alert(ctx, 999)
	wantErr(t, err, pitches.ENOTFOUND, "")

	before, after, err = db.UndismissAlert(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if before.Dismissed == nil || after.Dismissed != nil {
		t.Fatalf("restore: before %+v after %+v", before.Dismissed, after.Dismissed)
	}
	if n := count(t, db.w, fmt.Sprintf(`SELECT count(*) FROM regression_alerts WHERE id = %d AND dismissed_by IS NULL AND dismiss_reason = ''`, ids[1])); n != 1 {
		t.Errorf("restored alert keeps its dismissal's columns")
	}
	if got := list(tracking.AlertFilter{State: tracking.StateActive}); got != fmt.Sprint([]int64{ids[2], ids[1], ids[0]}) {
		t.Errorf("active after restoring: %s", got)
	}
}

// Migration 157 rebuilds thresholds and alerts for the zscore kind:
// thresholds stored before it read back as percent ones with their
// baseline run, alerts keep their threshold (the rebuild does not set it
// to NULL) and read back as percent alerts; a zscore threshold is then
// stored with its window and z, once (kind, window and z make the bound).
func TestMigration157ThresholdsArePercent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawDBAt(t, path, 154) // 155 has a Go step: Open applies 155 to 157
	const at = `'2026-01-01T00:00:00.000000000Z'`
	for _, q := range []string{
		`INSERT INTO rounds (number, title, rules, status, created_at, updated_at) VALUES (1, 'r', '', 'pitching', ` + at + `, ` + at + `)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at) VALUES
			(1, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `), (2, 'p', 'tests', 'v', 'cpu', 'failed', ` + at + `)`,
		`INSERT INTO regression_thresholds (id, round_number, problem, variant, baseline_run, percent, created_at) VALUES
			(1, 1, '', '', 1, 5, ` + at + `), (2, NULL, 'p', 'v', 1, 7.5, ` + at + `)`,
		`INSERT INTO regression_alerts (id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at) VALUES
			(1, 2, 1, 1, 5, '{"scope": "round 1", "shapes": []}', 'run #2 is slower', ` + at + `)`,
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
	if len(ths) != 2 || ths[0].Kind != tracking.KindPercent || ths[0].BaselineRun != 1 || ths[0].Percent != 5 || ths[0].Round != 1 ||
		ths[1].Kind != tracking.KindPercent || ths[1].Percent != 7.5 || ths[1].Window != 0 || ths[1].Z != 0 {
		t.Fatalf("thresholds after migration 157: %+v", ths)
	}
	a, err := db.Alert(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.ThresholdID != 1 || a.Kind != tracking.KindPercent || a.Scope != "round 1" || a.Dismissed != nil {
		t.Fatalf("alert 1 after migration 157: %+v", a)
	}
	// The old bound is still unique; a zscore one on the same scope is another.
	_, err = db.AddThreshold(ctx, tracking.Threshold{Round: 1, BaselineRun: 1, Percent: 5})
	wantErr(t, err, pitches.ECONFLICT, "round")
	z := tracking.Threshold{Round: 1, Kind: tracking.KindZScore, Window: 20, Z: 3}
	got, err := db.AddThreshold(ctx, z)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != tracking.KindZScore || got.Window != 20 || got.Z != 3 || got.BaselineRun != 0 || got.Percent != 0 {
		t.Fatalf("zscore threshold: %+v", got)
	}
	_, err = db.AddThreshold(ctx, z)
	wantErr(t, err, pitches.ECONFLICT, "round")
	if _, err := db.AddThreshold(ctx, tracking.Threshold{Round: 1, Kind: tracking.KindZScore, Window: 20, Z: 4}); err != nil {
		t.Fatalf("another z: %v", err)
	}
	// A zscore alert keeps its kind, window, z and history.
	za, err := db.AddAlert(ctx, tracking.Alert{RunID: 2, ThresholdID: got.ID, Kind: tracking.KindZScore, Window: 20, Z: 3, History: 8,
		Scope: "round 1", Shapes: []tracking.ShapeRegression{{Label: "a", RunUs: 120, MeanUs: 100, SD: 0.01, BoundaryUs: 103, ZScore: 18}},
		Summary: "s", CreatedAt: db.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if za.Kind != tracking.KindZScore || za.Window != 20 || za.Z != 3 || za.History != 8 || za.Shapes[0].MeanUs != 100 || za.Shapes[0].ZScore != 18 {
		t.Fatalf("zscore alert: %+v", za)
	}
}
