package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// The runner's store: the run queue and measured results (migration 100).
var _ runner.Store = (*DB)(nil)

// runCols are the columns of a run's summary; runDetailCols adds the large
// ones that only Get reads.
const (
	runCols = `id, problem, suite, variant, baseline, device, seed, requested_by, pitch_id, requeue_of,
		imported, status, reason, created_at, started_at, finished_at,
		result IS NOT NULL, geomean, geomean_lo, geomean_hi, correct, flags,
		device_name, accepted_by, accepted_at, accept_reason, note`
	runDetailCols = runCols + `, result, log, stderr`
	shapeCols     = `run_id, idx, label, baseline_median_us, baseline_sem_us, baseline_samples,
		variant_median_us, variant_sem_us, variant_samples, floor_us, floor_fraction,
		speedup, speedup_lo, speedup_hi, correct, max_abs_err, max_rel_err, rel_l2_err, flags`
)

// Enqueue stores a new queued run. The request was validated by the runner;
// this checks only what the database knows: that the pitch and the user exist.
func (db *DB) Enqueue(ctx context.Context, req runner.Request) (*runner.Run, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := checkRunRefs(ctx, tx, req.PitchID, req.RequestedBy); err != nil {
			return err
		}
		if err := checkRoundOpen(ctx, tx, req.PitchID, pitches.LaunchWhat); err != nil {
			return err
		}
		if err := checkBlindRun(ctx, tx, req.PitchID, req.Problem, req.Variant); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO runs
			(problem, suite, variant, variant_key, baseline, device, seed, requested_by, pitch_id, status, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
			req.Problem, req.Suite, req.Variant, pitches.VariantKey(req.Variant), req.Baseline, req.Device, req.Seed,
			runNullID(req.RequestedBy), runNullID(req.PitchID), fmtTime(db.Now()))
		if err != nil {
			return fmt.Errorf("sqlite: insert run: %w", err)
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.Get(ctx, id)
}

// checkRoundOpen refuses what would change the result of pitch pitchID
// (0: none) once its round is closed (pitches.ActLaunchRun, ActAcceptRun),
// in the writing transaction, so a round closed meanwhile is seen.
func checkRoundOpen(ctx context.Context, q queryer, pitchID int64, what string) error {
	if pitchID == 0 {
		return nil
	}
	var number int
	var status string
	err := q.QueryRowContext(ctx, `SELECT r.number, r.status FROM pitches p JOIN rounds r ON r.id = p.round_id WHERE p.id = ?`, pitchID).Scan(&number, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // checkRunRefs names a missing pitch
	}
	if err != nil {
		return fmt.Errorf("sqlite: look up the round of pitch %d: %w", pitchID, err)
	}
	if e := pitches.ResultsFrozen(number, pitches.RoundStatus(status), "", what); e != nil {
		return e
	}
	return nil
}

// checkBlindRun applies pitches.CheckBlindRun to a run of problem and
// variant filed under pitch pitchID (0: none): the active pitches of rounds
// that are not closed and measure problem, read in the writing transaction
// so that a pitch filed meanwhile is seen.
func checkBlindRun(ctx context.Context, q queryer, pitchID int64, problem, variant string) error {
	if strings.TrimSpace(variant) == "" {
		return nil
	}
	open, err := queryAll(ctx, q, "look up the open pitches of the run's problem", func(rs *sql.Rows) (pitches.OpenPitch, error) {
		var o pitches.OpenPitch
		err := rs.Scan(&o.PitchID, &o.RoundNumber, &o.Variant)
		return o, err
	}, `SELECT p.id, r.number, p.variant FROM pitches p JOIN rounds r ON r.id = p.round_id
		WHERE r.status != 'closed' AND p.status = 'active' AND r.problem = ? AND p.variant != '' ORDER BY p.id`, problem)
	if err != nil {
		return err
	}
	return pitches.CheckBlindRun(pitchID, variant, open)
}

// checkRunRefs turns a missing pitch or user into an EINVALID error naming
// the field, instead of a foreign-key failure.
func checkRunRefs(ctx context.Context, q queryer, pitchID, userID int64) error {
	var n int
	if pitchID != 0 {
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pitches WHERE id = ?`, pitchID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: look up pitch %d: %w", pitchID, err)
		}
		if n == 0 {
			return pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch %d does not exist", pitchID)
		}
	}
	if userID != 0 {
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ?`, userID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: look up user %d: %w", userID, err)
		}
		if n == 0 {
			return pitches.Errorf(pitches.EINVALID, "requested_by", "user %d does not exist", userID)
		}
	}
	return nil
}

// ClaimNext returns the oldest queued run of device, or nil.
func (db *DB) ClaimNext(ctx context.Context, device string) (*runner.Run, error) {
	row := db.w.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs
		WHERE device = ? AND status = 'queued' AND imported = 0 ORDER BY id LIMIT 1`, device)
	run, err := scanRun(row, false)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim next run on device %s: %w", device, err)
	}
	return run, nil
}

// MarkRunning moves a queued run to running.
func (db *DB) MarkRunning(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'running', started_at = ?
			WHERE id = ? AND status = 'queued'`, fmtTime(db.Now()), id)
		if err != nil {
			return fmt.Errorf("sqlite: mark run %d running: %w", id, err)
		}
		return runTransitioned(ctx, tx, res, id, "start")
	})
}

// MarkSucceeded stores the result and its shapes with the status, in one
// transaction: a run is never "succeeded" without its figures.
func (db *DB) MarkSucceeded(ctx context.Context, id int64, r *runner.Result, fin runner.Finish) error {
	return db.MarkMeasured(ctx, id, runner.StatusSucceeded, r, fin)
}

// MarkMeasured stores a finished measurement (succeeded, incorrect or
// suspect) with its result and shapes, in one transaction.
func (db *DB) MarkMeasured(ctx context.Context, id int64, status runner.Status, r *runner.Result, fin runner.Finish) error {
	if !status.Measured() {
		return fmt.Errorf("sqlite: mark run %d %s: not a status with a result", id, status)
	}
	if r == nil || len(r.Doc) == 0 {
		return fmt.Errorf("sqlite: mark run %d %s: no result document", id, status)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ?, reason = ?,
			result = ?, geomean = ?, geomean_lo = ?, geomean_hi = ?, correct = ?, flags = ?, log = ?, stderr = ?, device_name = ?
			WHERE id = ? AND status = 'running'`,
			string(status), fmtTime(db.Now()), fin.Reason, string(r.Doc), runNullPos(r.Speedup.Value), runNullPos(r.Speedup.Lo), runNullPos(r.Speedup.Hi),
			r.Correct, runJoinFlags(r.Flags), fin.Log, fin.Stderr, r.DeviceName, id)
		if err != nil {
			return fmt.Errorf("sqlite: mark run %d %s: %w", id, status, err)
		}
		if err := runTransitioned(ctx, tx, res, id, "record a result for"); err != nil {
			return err
		}
		return insertRunShapes(ctx, tx, id, r.Shapes)
	})
}

// Accept records an admin's acceptance of a suspect run. The reason was
// checked by the runner; the state is checked here, in the same statement.
func (db *DB) Accept(ctx context.Context, id, by int64, reason string) (*runner.Run, error) {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := checkRunRefs(ctx, tx, 0, by); err != nil {
			return err
		}
		var pitchID sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT pitch_id FROM runs WHERE id = ?`, id).Scan(&pitchID); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: accept run %d: read its pitch: %w", id, err)
		}
		if err := checkRoundOpen(ctx, tx, pitchID.Int64, "accept runs into it"); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE runs SET accepted_by = ?, accepted_at = ?, accept_reason = ?
			WHERE id = ? AND status = 'suspect' AND accepted_at IS NULL`, by, fmtTime(db.Now()), reason, id)
		if err != nil {
			return fmt.Errorf("sqlite: accept run %d: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: accept run %d: %w", id, err)
		}
		if n == 1 {
			return nil
		}
		var status string
		var accepted sql.NullString
		err = tx.QueryRowContext(ctx, `SELECT status, accepted_at FROM runs WHERE id = ?`, id).Scan(&status, &accepted)
		if errors.Is(err, sql.ErrNoRows) {
			return pitches.Errorf(pitches.ENOTFOUND, "", "run %d not found", id)
		}
		if err != nil {
			return fmt.Errorf("sqlite: accept run %d: read status: %w", id, err)
		}
		if accepted.Valid {
			return pitches.Errorf(pitches.ECONFLICT, "", "run %d was already accepted on %s", id, accepted.String)
		}
		return pitches.Errorf(pitches.ECONFLICT, "", "run %d is %s, not suspect: only a suspect run is accepted (a succeeded run counts as it is; an incorrect or failed one never does)", id, status)
	})
	if err != nil {
		return nil, err
	}
	return db.Get(ctx, id)
}

// MarkFailed moves a queued or running run to failed.
func (db *DB) MarkFailed(ctx context.Context, id int64, fin runner.Finish) error {
	return db.finishRun(ctx, id, runner.StatusFailed, fin)
}

// MarkCancelled moves a queued or running run to cancelled.
func (db *DB) MarkCancelled(ctx context.Context, id int64, fin runner.Finish) error {
	return db.finishRun(ctx, id, runner.StatusCancelled, fin)
}

func (db *DB) finishRun(ctx context.Context, id int64, status runner.Status, fin runner.Finish) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?, finished_at = ?, log = ?, stderr = ?
			WHERE id = ? AND status IN ('queued', 'running')`,
			string(status), fin.Reason, fmtTime(db.Now()), fin.Log, fin.Stderr, id)
		if err != nil {
			return fmt.Errorf("sqlite: mark run %d %s: %w", id, status, err)
		}
		verb := "fail"
		if status == runner.StatusCancelled {
			verb = "cancel"
		}
		return runTransitioned(ctx, tx, res, id, verb)
	})
}

// MarkInterrupted fails every running run with reason "interrupted".
func (db *DB) MarkInterrupted(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = queryAll(ctx, tx, "find interrupted runs", scanID, `SELECT id FROM runs WHERE status = 'running' ORDER BY id`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'failed', reason = ?, finished_at = ?
			WHERE status = 'running'`, runner.ReasonInterrupted, fmtTime(db.Now()))
		if err != nil {
			return fmt.Errorf("sqlite: mark runs interrupted: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Requeue stores a new queued run with the parameters of finished run id.
func (db *DB) Requeue(ctx context.Context, id, by int64) (*runner.Run, error) {
	var newID int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		old, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id), false)
		if errors.Is(err, sql.ErrNoRows) {
			return pitches.Errorf(pitches.ENOTFOUND, "", "run %d not found", id)
		}
		if err != nil {
			return fmt.Errorf("sqlite: requeue run %d: %w", id, err)
		}
		if old.Imported {
			return pitches.Errorf(pitches.ECONFLICT, "", "run %d was imported (measured elsewhere) and cannot be re-run here", id)
		}
		if !old.Status.Retryable() {
			return pitches.Errorf(pitches.ECONFLICT, "", "run %d is %s: only a failed or cancelled run is re-queued", id, old.Status)
		}
		if err := checkRunRefs(ctx, tx, 0, by); err != nil {
			return err
		}
		if err := checkRoundOpen(ctx, tx, old.PitchID, pitches.LaunchWhat); err != nil {
			return err
		}
		if err := checkBlindRun(ctx, tx, old.PitchID, old.Problem, old.Variant); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO runs
			(problem, suite, variant, variant_key, baseline, device, seed, requested_by, pitch_id, requeue_of, status, created_at)
			SELECT problem, suite, variant, variant_key, baseline, device, seed, ?, pitch_id, id, 'queued', ? FROM runs WHERE id = ?`,
			runNullID(by), fmtTime(db.Now()), id)
		if err != nil {
			return fmt.Errorf("sqlite: requeue run %d: %w", id, err)
		}
		newID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.Get(ctx, newID)
}

// Import stores a measurement made elsewhere as a succeeded imported run.
func (db *DB) Import(ctx context.Context, run *runner.Run, r *runner.Result) (*runner.Run, error) {
	if r == nil || len(r.Doc) == 0 {
		return nil, errors.New("sqlite: import run: no result document")
	}
	status := run.Status
	if status == "" {
		status = runner.StatusSucceeded
	}
	if !status.Measured() {
		return nil, fmt.Errorf("sqlite: import run: status %q has no result", status)
	}
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := checkRunRefs(ctx, tx, run.PitchID, run.RequestedBy); err != nil {
			return err
		}
		if err := checkBlindRun(ctx, tx, run.PitchID, run.Problem, run.Variant); err != nil {
			return err
		}
		now := fmtTime(db.Now())
		res, err := tx.ExecContext(ctx, `INSERT INTO runs
			(problem, suite, variant, variant_key, baseline, device, seed, requested_by, pitch_id, imported, status, reason,
			 created_at, started_at, finished_at, result, geomean, geomean_lo, geomean_hi, correct, flags, device_name, note)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			run.Problem, run.Suite, run.Variant, pitches.VariantKey(run.Variant), run.Baseline, run.Device, runNullID(run.RequestedBy), runNullID(run.PitchID),
			string(status), run.Reason,
			now, now, now, string(r.Doc), runNullPos(r.Speedup.Value), runNullPos(r.Speedup.Lo), runNullPos(r.Speedup.Hi),
			r.Correct, runJoinFlags(r.Flags), r.DeviceName, run.Note)
		if err != nil {
			return fmt.Errorf("sqlite: insert imported run: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("sqlite: insert imported run: %w", err)
		}
		return insertRunShapes(ctx, tx, id, r.Shapes)
	})
	if err != nil {
		return nil, err
	}
	return db.Get(ctx, id)
}

// Get returns a run with its result document, shapes and logs.
func (db *DB) Get(ctx context.Context, id int64) (*runner.Run, error) {
	run, err := scanRun(db.r.QueryRowContext(ctx, `SELECT `+runDetailCols+` FROM runs WHERE id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "run %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get run %d: %w", id, err)
	}
	shapes, err := db.shapes(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	run.Shapes = shapes[id]
	return run, nil
}

// List returns runs matching f, newest first.
func (db *DB) List(ctx context.Context, f runner.Filter) ([]runner.Run, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Problem != "" {
		add("problem = ?", f.Problem)
	}
	if f.Variant != "" {
		cond, vs := variantCond("variant_key", f.Variant, f.VariantAsTyped)
		where, args = append(where, cond), append(args, vs...)
	}
	if f.Baseline != "" {
		add("baseline = ?", f.Baseline)
	}
	if f.Device != "" {
		add("device = ?", f.Device)
	}
	if f.Suite != "" {
		add("suite = ?", f.Suite)
	}
	if f.PitchID != 0 {
		add("pitch_id = ?", f.PitchID)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.Imported != nil {
		add("imported = ?", *f.Imported)
	}
	if f.BeforeID > 0 {
		add("id < ?", f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	runs, err := queryAll(ctx, db.r, "list runs", func(r *sql.Rows) (runner.Run, error) {
		run, err := scanRun(r, false)
		if err != nil {
			return runner.Run{}, err
		}
		return *run, nil
	}, q, args...)
	if err != nil {
		return nil, err
	}
	if f.WithShapes {
		if err := db.fillShapes(ctx, runs); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// fillShapes sets the per-shape rows of every run in runs (one query).
func (db *DB) fillShapes(ctx context.Context, runs []runner.Run) error {
	if len(runs) == 0 {
		return nil
	}
	ids := make([]int64, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
	}
	shapes, err := db.shapes(ctx, ids)
	if err != nil {
		return err
	}
	for i := range runs {
		runs[i].Shapes = shapes[runs[i].ID]
	}
	return nil
}

// shapes returns the per-shape rows of the given runs, by run id.
func (db *DB) shapes(ctx context.Context, ids []int64) (map[int64][]runner.Shape, error) {
	out := map[int64][]runner.Shape{}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+shapeCols+` FROM run_shapes WHERE run_id IN (`+marks+`) ORDER BY run_id, idx`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read run shapes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s runner.Shape
		var runID int64
		var flags string
		if err := rows.Scan(&runID, &s.Index, &s.Label, &s.BaselineMedianUs, &s.BaselineSEMUs, &s.BaselineSamples,
			&s.VariantMedianUs, &s.VariantSEMUs, &s.VariantSamples, &s.FloorUs, &s.FractionOfFloor,
			&s.Speedup.Value, &s.Speedup.Lo, &s.Speedup.Hi, &s.Correct, &s.MaxAbsErr, &s.MaxRelErr, &s.RelL2Err, &flags); err != nil {
			return nil, fmt.Errorf("sqlite: read run shapes: %w", err)
		}
		s.Flags = runSplitFlags(flags)
		out[runID] = append(out[runID], s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read run shapes: %w", err)
	}
	return out, nil
}

func insertRunShapes(ctx context.Context, tx *sql.Tx, runID int64, shapes []runner.Shape) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO run_shapes (`+shapeCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("sqlite: prepare run shapes: %w", err)
	}
	defer stmt.Close()
	for _, s := range shapes {
		_, err := stmt.ExecContext(ctx, runID, s.Index, s.Label,
			runFinite(s.BaselineMedianUs), runFinite(s.BaselineSEMUs), s.BaselineSamples,
			runFinite(s.VariantMedianUs), runFinite(s.VariantSEMUs), s.VariantSamples,
			runFinite(s.FloorUs), runFinite(s.FractionOfFloor),
			runFinite(s.Speedup.Value), runFinite(s.Speedup.Lo), runFinite(s.Speedup.Hi),
			s.Correct, runFinite(s.MaxAbsErr), runFinite(s.MaxRelErr), runFinite(s.RelL2Err), runJoinFlags(s.Flags))
		if err != nil {
			return fmt.Errorf("sqlite: insert shape %d of run %d: %w", s.Index, runID, err)
		}
	}
	return nil
}

// runTransitioned checks that an UPDATE guarded by the run's status changed
// one row; if not, it says why: no such run, or a run in another state.
func runTransitioned(ctx context.Context, tx *sql.Tx, res sql.Result, id int64, verb string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: run %d: rows affected: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	var status string
	err = tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return pitches.Errorf(pitches.ENOTFOUND, "", "run %d not found", id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: run %d: read status: %w", id, err)
	}
	return pitches.Errorf(pitches.ECONFLICT, "", "cannot %s run %d: it is %s", verb, id, status)
}

type runRowScanner interface{ Scan(dest ...any) error }

func scanRun(row runRowScanner, detail bool) (*runner.Run, error) {
	var (
		r                               runner.Run
		requestedBy, pitchID, requeueOf sql.NullInt64
		status, createdAt, flags        string
		startedAt, finishedAt           sql.NullString
		geomean, geoLo, geoHi           sql.NullFloat64
		correct                         sql.NullBool
		result                          sql.NullString
		log, stderr                     string
		acceptedBy                      sql.NullInt64
		acceptedAt                      sql.NullString
	)
	dest := []any{&r.ID, &r.Problem, &r.Suite, &r.Variant, &r.Baseline, &r.Device, &r.Seed,
		&requestedBy, &pitchID, &requeueOf, &r.Imported, &status, &r.Reason, &createdAt, &startedAt, &finishedAt,
		&r.HasResult, &geomean, &geoLo, &geoHi, &correct, &flags,
		&r.DeviceName, &acceptedBy, &acceptedAt, &r.AcceptReason, &r.Note}
	if detail {
		dest = append(dest, &result, &log, &stderr)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	r.RequestedBy, r.PitchID, r.RequeueOf, r.AcceptedBy = requestedBy.Int64, pitchID.Int64, requeueOf.Int64, acceptedBy.Int64
	r.Status = runner.Status(status)
	var err error
	if r.CreatedAt, err = parseTime(createdAt); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		s   sql.NullString
		dst *time.Time
	}{{startedAt, &r.StartedAt}, {finishedAt, &r.FinishedAt}, {acceptedAt, &r.AcceptedAt}} {
		p, err := parseNullTime(t.s)
		if err != nil {
			return nil, err
		}
		if p != nil {
			*t.dst = *p
		}
	}
	r.Speedup = runner.Interval{Value: geomean.Float64, Lo: geoLo.Float64, Hi: geoHi.Float64}
	r.Correct = correct.Bool
	r.Flags = runSplitFlags(flags)
	if detail {
		if result.Valid {
			r.Result = json.RawMessage(result.String)
		}
		r.Log, r.Stderr = log, stderr
	}
	return &r, nil
}

func runNullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// runNullPos stores an unknown (zero) or non-finite figure as NULL.
func runNullPos(x float64) any {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// finite stores a non-finite figure as 0 ("unknown"); the shape's flags say
// why (SQLite has no NaN, and JSON has neither).
func runFinite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Flags are short identifiers; a comma inside one would split it, so it
// becomes a semicolon.
func runJoinFlags(flags []string) string {
	clean := make([]string, 0, len(flags))
	for _, f := range flags {
		if f = strings.TrimSpace(strings.ReplaceAll(f, ",", ";")); f != "" {
			clean = append(clean, f)
		}
	}
	return strings.Join(clean, ",")
}

func runSplitFlags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
