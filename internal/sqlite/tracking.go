package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// Regression thresholds, their alerts and run provenance (migrations 152
// to 154; 156 the alerts' dismissal; 157 the thresholds' kinds): the
// tracking.Store.
var _ tracking.Store = (*DB)(nil)

const thresholdCols = `id, round_number, problem, variant, kind, baseline_run, percent, window_runs, z_bound, created_by, created_at`

func scanThreshold(r interface{ Scan(...any) error }) (*tracking.Threshold, error) {
	var t tracking.Threshold
	var round, base, by sql.NullInt64
	var at string
	if err := r.Scan(&t.ID, &round, &t.Problem, &t.Variant, &t.Kind, &base, &t.Percent, &t.Window, &t.Z, &by, &at); err != nil {
		return nil, err
	}
	ts, err := parseTime(at)
	if err != nil {
		return nil, err
	}
	t.Round, t.BaselineRun, t.CreatedBy, t.CreatedAt = int(round.Int64), base.Int64, by.Int64, ts
	return &t, nil
}

// Thresholds lists every regression threshold, oldest first.
func (db *DB) Thresholds(ctx context.Context) ([]tracking.Threshold, error) {
	return queryAll(ctx, db.r, "list thresholds", values(scanThreshold), `SELECT `+thresholdCols+` FROM regression_thresholds ORDER BY id`)
}

// AddThreshold stores a checked threshold (the round, or the problem and
// variant; a percent one's existing baseline run, a zscore one's window
// and z: tracking.CheckKind). One that a stored threshold already
// is (tracking.Threshold.SameAs; the unique index of migration 154) is
// refused with tracking.DuplicateError, even when a concurrent create
// stored it after the caller looked.
func (db *DB) AddThreshold(ctx context.Context, t tracking.Threshold) (*tracking.Threshold, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		var round any
		if t.Round > 0 {
			round = t.Round
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rounds WHERE number = ?`, t.Round).Scan(&n); err != nil {
				return fmt.Errorf("sqlite: find round %d: %w", t.Round, err)
			}
			if n == 0 {
				return pitches.Errorf(pitches.EINVALID, "round", "round %d does not exist", t.Round)
			}
		}
		t.Kind = t.KindOrDefault()
		if t.Kind == tracking.KindPercent {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, t.BaselineRun).Scan(&n); err != nil {
				return fmt.Errorf("sqlite: find run %d: %w", t.BaselineRun, err)
			}
			if n == 0 {
				return pitches.Errorf(pitches.EINVALID, "baseline_run", "run %d does not exist", t.BaselineRun)
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO regression_thresholds (round_number, problem, variant, kind, baseline_run, percent, window_runs, z_bound, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, round, t.Problem, t.Variant, t.Kind, runNullID(t.BaselineRun), t.Percent, t.Window, t.Z,
			runNullID(t.CreatedBy), fmtTime(db.Now()))
		if isUnique(err) {
			return duplicateThreshold(ctx, tx, round, t)
		}
		if err != nil {
			return fmt.Errorf("sqlite: insert threshold: %w", err)
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := scanThreshold(db.r.QueryRowContext(ctx, `SELECT `+thresholdCols+` FROM regression_thresholds WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("sqlite: read threshold %d: %w", id, err)
	}
	return out, nil
}

// duplicateThreshold is the refusal of t, whose insert broke the unique
// index: the stored threshold it duplicates, named as the web layer's own
// check names it.
func duplicateThreshold(ctx context.Context, tx *sql.Tx, round any, t tracking.Threshold) error {
	o, err := scanThreshold(tx.QueryRowContext(ctx, `SELECT `+thresholdCols+` FROM regression_thresholds
		WHERE ifnull(round_number, 0) = ifnull(?, 0) AND problem = ? AND variant = ? AND kind = ? AND ifnull(baseline_run, 0) = ?
			AND percent = ? AND window_runs = ? AND z_bound = ?`,
		round, t.Problem, t.Variant, t.KindOrDefault(), t.BaselineRun, t.Percent, t.Window, t.Z))
	if err != nil {
		return fmt.Errorf("sqlite: %s threshold for %s: find the one it duplicates: %w", t.KindOrDefault(), t.Scope(), err)
	}
	return tracking.DuplicateError(*o)
}

// Threshold returns threshold id.
func (db *DB) Threshold(ctx context.Context, id int64) (*tracking.Threshold, error) {
	t, err := scanThreshold(db.r.QueryRowContext(ctx, `SELECT `+thresholdCols+` FROM regression_thresholds WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "threshold %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get threshold %d: %w", id, err)
	}
	return t, nil
}

// DeleteThreshold removes threshold id; its alerts stay.
func (db *DB) DeleteThreshold(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM regression_thresholds WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("sqlite: delete threshold %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return pitches.Errorf(pitches.ENOTFOUND, "", "threshold %d not found", id)
		}
		return nil
	})
}

// alertCols name the dismissing user's login with the alert, for the
// lists that show who dismissed it (migration 156).
const alertCols = `id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at,
	dismissed_at, dismissed_by, (SELECT login FROM users WHERE users.id = dismissed_by), dismiss_reason`

func scanAlert(r interface{ Scan(...any) error }) (*tracking.Alert, error) {
	var a tracking.Alert
	var th, by sql.NullInt64
	var shapes, at string
	var dismissedAt, login sql.NullString
	var reason string
	if err := r.Scan(&a.ID, &a.RunID, &th, &a.BaselineRun, &a.Percent, &shapes, &a.Summary, &at,
		&dismissedAt, &by, &login, &reason); err != nil {
		return nil, err
	}
	t, err := parseTime(at)
	if err != nil {
		return nil, err
	}
	a.ThresholdID, a.CreatedAt = th.Int64, t
	if dismissedAt.Valid {
		dt, err := parseTime(dismissedAt.String)
		if err != nil {
			return nil, err
		}
		a.Dismissed = &tracking.Dismissal{By: by.Int64, ByLogin: login.String, At: dt, Reason: reason}
	}
	// kind, window, z and history (migration 157's zscore alerts) live in
	// the same JSON; an alert stored before is a percent one.
	var stored struct {
		Scope   string                     `json:"scope"`
		Shapes  []tracking.ShapeRegression `json:"shapes"`
		Kind    string                     `json:"kind"`
		Window  int                        `json:"window"`
		Z       float64                    `json:"z"`
		History int                        `json:"history"`
	}
	if err := json.Unmarshal([]byte(shapes), &stored); err != nil {
		return nil, fmt.Errorf("alert %d shapes: %w", a.ID, err)
	}
	a.Scope, a.Shapes = stored.Scope, stored.Shapes
	a.Kind, a.Window, a.Z, a.History = stored.Kind, stored.Window, stored.Z, stored.History
	if a.Kind == "" {
		a.Kind = tracking.KindPercent
	}
	return &a, nil
}

// AddAlert stores an alert; a run's second alert for the same threshold
// (a repeated evaluation) is the first one.
func (db *DB) AddAlert(ctx context.Context, a tracking.Alert) (*tracking.Alert, error) {
	doc := map[string]any{"scope": a.Scope, "shapes": a.Shapes}
	if a.Kind == tracking.KindZScore {
		doc["kind"], doc["window"], doc["z"], doc["history"] = a.Kind, a.Window, a.Z, a.History
	}
	shapes, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode alert: %w", err)
	}
	var id int64
	err = db.write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT id FROM regression_alerts WHERE run_id = ? AND threshold_id = ?`, a.RunID, a.ThresholdID).Scan(&id); err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: find alert: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO regression_alerts (run_id, threshold_id, baseline_run, percent, shapes, summary, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, a.RunID, runNullID(a.ThresholdID), a.BaselineRun, a.Percent, string(shapes), a.Summary, fmtTime(a.CreatedAt))
		if err != nil {
			return fmt.Errorf("sqlite: insert alert: %w", err)
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := scanAlert(db.r.QueryRowContext(ctx, `SELECT `+alertCols+` FROM regression_alerts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("sqlite: read alert %d: %w", id, err)
	}
	return out, nil
}

// Alerts lists alerts newest first: of f.RunID when it is > 0, else every
// run's, in f.State (default all: active or dismissed), before alert id
// f.Before (when > 0), at most f.Limit (default 50, at most 500).
func (db *DB) Alerts(ctx context.Context, f tracking.AlertFilter) ([]tracking.Alert, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + alertCols + ` FROM regression_alerts WHERE 1 = 1`
	var args []any
	if f.RunID > 0 {
		q += ` AND run_id = ?`
		args = append(args, f.RunID)
	}
	switch f.State {
	case tracking.StateActive:
		q += ` AND dismissed_at IS NULL`
	case tracking.StateDismissed:
		q += ` AND dismissed_at IS NOT NULL`
	}
	if f.Before > 0 {
		q += ` AND id < ?`
		args = append(args, f.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, min(limit, 500))
	return queryAll(ctx, db.r, "list alerts", values(scanAlert), q, args...)
}

// Alert returns alert id (ENOTFOUND when there is none).
func (db *DB) Alert(ctx context.Context, id int64) (*tracking.Alert, error) {
	return readAlert(ctx, db.r, id)
}

func readAlert(ctx context.Context, q queryer, id int64) (*tracking.Alert, error) {
	a, err := scanAlert(q.QueryRowContext(ctx, `SELECT `+alertCols+` FROM regression_alerts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "alert %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: read alert %d: %w", id, err)
	}
	return a, nil
}

// DismissAlert records user by's dismissal of alert id with a checked
// reason (tracking.CheckDismissReason), and returns the alert before and
// after. An alert already dismissed is refused (tracking's CheckDismiss,
// asked inside the transaction so that two admins' dismissals cannot both
// pass it); an unknown alert is ENOTFOUND.
func (db *DB) DismissAlert(ctx context.Context, id, by int64, reason string) (before, after *tracking.Alert, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		if before, err = readAlert(ctx, tx, id); err != nil {
			return err
		}
		if err := before.CheckDismiss(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE regression_alerts SET dismissed_at = ?, dismissed_by = ?, dismiss_reason = ? WHERE id = ?`,
			fmtTime(db.Now()), runNullID(by), reason, id); err != nil {
			return fmt.Errorf("sqlite: dismiss alert %d: %w", id, err)
		}
		after, err = readAlert(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// UndismissAlert undoes alert id's dismissal (the alert is active again)
// and returns the alert before and after; an active alert is refused
// (tracking's CheckUndismiss), an unknown one is ENOTFOUND.
func (db *DB) UndismissAlert(ctx context.Context, id int64) (before, after *tracking.Alert, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		if before, err = readAlert(ctx, tx, id); err != nil {
			return err
		}
		if err := before.CheckUndismiss(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE regression_alerts SET dismissed_at = NULL, dismissed_by = NULL, dismiss_reason = '' WHERE id = ?`, id); err != nil {
			return fmt.Errorf("sqlite: undo the dismissal of alert %d: %w", id, err)
		}
		after, err = readAlert(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// SetProvenance records (or replaces) a run's provenance.
func (db *DB) SetProvenance(ctx context.Context, p tracking.Provenance) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO run_provenance (run_id, source_hash, app_build, recorded_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET source_hash = excluded.source_hash, app_build = excluded.app_build, recorded_at = excluded.recorded_at`,
			p.RunID, p.SourceHash, p.AppBuild, fmtTime(p.RecordedAt))
		if err != nil {
			return fmt.Errorf("sqlite: record provenance of run %d: %w", p.RunID, err)
		}
		return nil
	})
}

// Provenances returns the provenance of the given runs that have one.
func (db *DB) Provenances(ctx context.Context, ids []int64) (map[int64]tracking.Provenance, error) {
	out := map[int64]tracking.Provenance{}
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		marks := make([]byte, 0, 2*len(chunk))
		args := make([]any, len(chunk))
		for i, id := range chunk {
			if i > 0 {
				marks = append(marks, ',')
			}
			marks = append(marks, '?')
			args[i] = id
		}
		ps, err := queryAll(ctx, db.r, "list provenance", func(r *sql.Rows) (tracking.Provenance, error) {
			var p tracking.Provenance
			var at string
			if err := r.Scan(&p.RunID, &p.SourceHash, &p.AppBuild, &at); err != nil {
				return p, err
			}
			t, err := parseTime(at)
			p.RecordedAt = t
			return p, err
		}, `SELECT run_id, source_hash, app_build, recorded_at FROM run_provenance WHERE run_id IN (`+string(marks)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[p.RunID] = p
		}
	}
	return out, nil
}
