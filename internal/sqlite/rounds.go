package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

const roundCols = `id, number, title, rules, status, baseline, created_at, problem, suite, device_class, allow_imports`

func scanRound(row interface{ Scan(...any) error }) (*pitches.Round, error) {
	var r pitches.Round
	var status, created string
	m := &r.Measurement
	if err := row.Scan(&r.ID, &r.Number, &r.Title, &r.Rules, &status, &r.Baseline, &created,
		&m.Problem, &m.Suite, &m.DeviceClass, &m.AllowImports); err != nil {
		return nil, err
	}
	r.Status = pitches.RoundStatus(status)
	t, err := parseTime(created)
	if err != nil {
		return nil, err
	}
	r.CreatedAt = t
	return &r, nil
}

func loadCriteria(ctx context.Context, q queryer, roundID int64) ([]pitches.Criterion, error) {
	return queryAll(ctx, q, fmt.Sprintf("load criteria of round id %d", roundID), func(r *sql.Rows) (pitches.Criterion, error) {
		var c pitches.Criterion
		err := r.Scan(&c.Key, &c.Name, &c.Description, &c.Weight)
		return c, err
	}, `SELECT key, name, description, weight FROM criteria WHERE round_id = ? ORDER BY position`, roundID)
}

// roundByNumber loads a round with its rubric; ENOTFOUND when missing.
func roundByNumber(ctx context.Context, q queryer, number int) (*pitches.Round, error) {
	r, err := scanRound(q.QueryRowContext(ctx, `SELECT `+roundCols+` FROM rounds WHERE number = ?`, number))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "round", "round %d not found", number)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: load round %d: %w", number, err)
	}
	if r.Criteria, err = loadCriteria(ctx, q, r.ID); err != nil {
		return nil, err
	}
	return r, nil
}

func (db *DB) Rounds(ctx context.Context) ([]pitches.Round, error) {
	out, err := queryAll(ctx, db.r, "list rounds", values(scanRound), `SELECT `+roundCols+` FROM rounds ORDER BY number`)
	if err != nil {
		return nil, err
	}
	// Every round's rubric in one query, not one per round (issue 13).
	type crit struct {
		round int64
		c     pitches.Criterion
	}
	all, err := queryAll(ctx, db.r, "load criteria", func(r *sql.Rows) (crit, error) {
		var x crit
		err := r.Scan(&x.round, &x.c.Key, &x.c.Name, &x.c.Description, &x.c.Weight)
		return x, err
	}, `SELECT round_id, key, name, description, weight FROM criteria ORDER BY round_id, position`)
	if err != nil {
		return nil, err
	}
	at := make(map[int64]int, len(out))
	for i := range out {
		at[out[i].ID] = i
	}
	for _, x := range all {
		if i, ok := at[x.round]; ok {
			out[i].Criteria = append(out[i].Criteria, x.c)
		}
	}
	return out, nil
}

func (db *DB) Round(ctx context.Context, number int) (*pitches.Round, error) {
	return roundByNumber(ctx, db.r, number)
}

// CurrentRound: the latest round that is not closed, else the latest round.
func (db *DB) CurrentRound(ctx context.Context) (*pitches.Round, error) {
	var number int
	err := db.r.QueryRowContext(ctx, `SELECT number FROM rounds ORDER BY status = 'closed', number DESC LIMIT 1`).Scan(&number)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: find current round: %w", err)
	}
	return roundByNumber(ctx, db.r, number)
}

func trimCriteria(cs []pitches.Criterion) []pitches.Criterion {
	out := make([]pitches.Criterion, len(cs))
	for i, c := range cs {
		out[i] = pitches.Criterion{Key: c.Key, Name: strings.TrimSpace(c.Name), Description: c.Description, Weight: c.Weight}
	}
	return out
}

func insertCriteria(ctx context.Context, tx *sql.Tx, roundID int64, cs []pitches.Criterion) error {
	for i, c := range cs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO criteria (round_id, position, key, name, description, weight) VALUES (?, ?, ?, ?, ?, ?)`,
			roundID, i, c.Key, c.Name, c.Description, c.Weight); err != nil {
			return fmt.Errorf("sqlite: insert criterion %q: %w", c.Key, err)
		}
	}
	return nil
}

// CreateRound: admin only; the round starts in pitching.
func (db *DB) CreateRound(ctx context.Context, by *pitches.User, in pitches.RoundInput) (*pitches.Round, error) {
	if err := pitches.Can(by, pitches.ActCreateRound, pitches.Target{}); err != nil {
		return nil, err
	}
	if err := pitches.ValidateRound(in); err != nil {
		return nil, err
	}
	m := pitches.RoundMeasurement{}
	if in.Measurement != nil {
		m = trimMeasurement(*in.Measurement)
	}
	if err := pitches.ValidateRoundBaseline(in.Number, m, in.Baseline); err != nil {
		return nil, err
	}
	var out *pitches.Round
	err := db.write(ctx, func(tx *sql.Tx) error {
		now := fmtTime(db.Now())
		if m.Suite == "" {
			m.Suite = "benchmarks"
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO rounds (number, title, rules, status, baseline, created_at, updated_at,
			problem, suite, device_class, allow_imports) VALUES (?, ?, ?, 'pitching', ?, ?, ?, ?, ?, ?, ?)`,
			in.Number, strings.TrimSpace(in.Title), in.Rules, in.Baseline, now, now, m.Problem, m.Suite, m.DeviceClass, m.AllowImports)
		if isUnique(err) {
			return pitches.Errorf(pitches.ECONFLICT, "number", "round %d already exists", in.Number)
		}
		if err != nil {
			return fmt.Errorf("sqlite: insert round %d: %w", in.Number, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: insert round %d: %w", in.Number, err)
		}
		if err := insertCriteria(ctx, tx, id, trimCriteria(in.Criteria)); err != nil {
			return err
		}
		out, err = roundByNumber(ctx, tx, in.Number)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateRound edits title, rules, baseline and rubric, only while pitching.
// The number stays (in.Number may be 0 or the same number). If the rubric's
// keys change, personal weights set for the round no longer cover its
// criteria and are deleted: sharks set them again.
func (db *DB) UpdateRound(ctx context.Context, by *pitches.User, number int, in pitches.RoundInput) (*pitches.Round, error) {
	// The role first, before the round is read; the round's state is
	// checked with it below.
	if err := pitches.CanRole(by, pitches.ActEditRound); err != nil {
		return nil, err
	}
	if in.Number == 0 {
		in.Number = number
	}
	if in.Number != number {
		return nil, pitches.Errorf(pitches.EINVALID, "number", "a round's number cannot change (%d -> %d)", number, in.Number)
	}
	if err := pitches.ValidateRound(in); err != nil {
		return nil, err
	}
	var out *pitches.Round
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, number)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActEditRound, pitches.Target{Round: r}); err != nil {
			return err
		}
		// The baseline is checked against the measurement it is stored
		// with, read in this transaction: an edit that leaves the
		// measurement keeps the stored one.
		// A baseline stored before measurements existed, kept as it is by
		// an edit of the title or rules, does not block that edit.
		m := r.Measurement
		if in.Measurement != nil {
			m = trimMeasurement(*in.Measurement)
		}
		if in.Measurement != nil || pitches.TrimLine(in.Baseline) != r.Baseline {
			if err := pitches.ValidateRoundBaseline(number, m, in.Baseline); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rounds SET title = ?, rules = ?, baseline = ?, updated_at = ? WHERE id = ?`,
			strings.TrimSpace(in.Title), in.Rules, in.Baseline, fmtTime(db.Now()), r.ID); err != nil {
			return fmt.Errorf("sqlite: update round %d: %w", number, err)
		}
		if in.Measurement != nil {
			if err := setMeasurement(ctx, tx, r.ID, *in.Measurement); err != nil {
				return fmt.Errorf("sqlite: update round %d: %w", number, err)
			}
		}
		if !sameKeys(r.Criteria, in.Criteria) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM personal_weights WHERE round_id = ?`, r.ID); err != nil {
				return fmt.Errorf("sqlite: drop stale personal weights of round %d: %w", number, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM criteria WHERE round_id = ?`, r.ID); err != nil {
			return fmt.Errorf("sqlite: replace criteria of round %d: %w", number, err)
		}
		if err := insertCriteria(ctx, tx, r.ID, trimCriteria(in.Criteria)); err != nil {
			return err
		}
		out, err = roundByNumber(ctx, tx, number)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func sameKeys(a, b []pitches.Criterion) bool {
	if len(a) != len(b) {
		return false
	}
	keys := map[string]bool{}
	for _, c := range a {
		keys[c.Key] = true
	}
	for _, c := range b {
		if !keys[c.Key] {
			return false
		}
	}
	return true
}

// SetRoundStatus moves a round one step forward: pitching -> judging -> closed.
func (db *DB) SetRoundStatus(ctx context.Context, by *pitches.User, number int, status pitches.RoundStatus) (*pitches.Round, error) {
	if err := pitches.CanRole(by, pitches.ActAdvanceRound); err != nil {
		return nil, err
	}
	if !pitches.ValidStatus(status) {
		return nil, pitches.Errorf(pitches.EINVALID, "status", "must be pitching, judging or closed")
	}
	var out *pitches.Round
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, number)
		if err != nil {
			return err
		}
		inFlight, err := roundRunsInFlight(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActAdvanceRound, pitches.Target{Round: r, NextStatus: status, InFlight: inFlight}); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rounds SET status = ?, updated_at = ? WHERE id = ?`,
			string(status), fmtTime(db.Now()), r.ID); err != nil {
			return fmt.Errorf("sqlite: set status of round %d: %w", number, err)
		}
		r.Status = status
		out = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// roundRunsInFlight lists the queued and running runs of round roundID's
// pitches, oldest first: in the same transaction as the status change, so
// none slips in between (a run is queued in a transaction of its own).
func roundRunsInFlight(ctx context.Context, tx *sql.Tx, roundID int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT r.id FROM runs r JOIN pitches p ON p.id = r.pitch_id
		WHERE p.round_id = ? AND r.status IN ('queued', 'running') ORDER BY r.id`, roundID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list the runs in flight of round %d: %w", roundID, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: list the runs in flight of round %d: %w", roundID, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list the runs in flight of round %d: %w", roundID, err)
	}
	return ids, nil
}

// SetPersonalWeights: a shark's own weights for a round, replacing earlier
// ones, allowed until the shark's first scorecard in the round (scoring.md:
// "before submitting a first scorecard; they are then frozen").
func (db *DB) SetPersonalWeights(ctx context.Context, by *pitches.User, round int, weights map[string]int) error {
	if err := pitches.CanRole(by, pitches.ActSetWeights); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, round)
		if err != nil {
			return err
		}
		scored, err := hasScoredInRound(ctx, tx, by.ID, r.ID)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActSetWeights, pitches.Target{Round: r, HasScored: scored}); err != nil {
			return err
		}
		if err := pitches.ValidatePersonalWeights(r.Criteria, weights); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM personal_weights WHERE round_id = ? AND shark_id = ?`, r.ID, by.ID); err != nil {
			return fmt.Errorf("sqlite: replace personal weights: %w", err)
		}
		now := fmtTime(db.Now())
		for _, c := range r.Criteria {
			if _, err := tx.ExecContext(ctx, `INSERT INTO personal_weights (round_id, shark_id, criterion_key, weight, created_at) VALUES (?, ?, ?, ?, ?)`,
				r.ID, by.ID, c.Key, weights[c.Key], now); err != nil {
				return fmt.Errorf("sqlite: insert personal weight %q: %w", c.Key, err)
			}
		}
		return nil
	})
}

func (db *DB) PersonalWeights(ctx context.Context, sharkID int64, round int) (map[string]int, error) {
	r, err := roundByNumber(ctx, db.r, round)
	if err != nil {
		return nil, err
	}
	return personalWeights(ctx, db.r, sharkID, r.ID)
}

func personalWeights(ctx context.Context, q queryer, sharkID, roundID int64) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT criterion_key, weight FROM personal_weights WHERE round_id = ? AND shark_id = ?`, roundID, sharkID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load personal weights: %w", err)
	}
	defer rows.Close()
	var w map[string]int
	for rows.Next() {
		var k string
		var v int
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("sqlite: load personal weights: %w", err)
		}
		if w == nil {
			w = map[string]int{}
		}
		w[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load personal weights: %w", err)
	}
	return w, nil
}

func hasScoredInRound(ctx context.Context, q queryer, sharkID, roundID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM scorecard_versions sv JOIN pitches p ON p.id = sv.pitch_id
		WHERE sv.shark_id = ? AND p.round_id = ?`, sharkID, roundID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("sqlite: check scorecards of shark %d: %w", sharkID, err)
	}
	return n > 0, nil
}

// SetRoundBaseline changes the round's baseline variant, the one its runs
// compare against. Unlike the rubric it may change while judging (runs are
// made then), not once the round is closed. Admins only. Not part of
// pitches.Service: the web layer checks the spec against the kernel
// manifest first.
func (db *DB) SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error) {
	if pitches.CanRole(by, pitches.ActSetMeasure) != nil {
		return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins set a round's baseline")
	}
	baseline = pitches.TrimLine(baseline)
	if len(baseline) > 200 || strings.ContainsAny(baseline, "\x00\r\n\t") {
		return nil, pitches.Errorf(pitches.EINVALID, "baseline", "the baseline is a variant spec of at most 200 characters on one line")
	}
	var out *pitches.Round
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, number)
		if err != nil {
			return err
		}
		if r.Status == pitches.RoundClosed {
			return pitches.Errorf(pitches.ECONFLICT, "baseline", "round %d is closed: its baseline stays", number)
		}
		if err := pitches.ValidateRoundBaseline(number, r.Measurement, baseline); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rounds SET baseline = ?, updated_at = ? WHERE id = ?`, baseline, fmtTime(db.Now()), r.ID); err != nil {
			return fmt.Errorf("sqlite: set baseline of round %d: %w", number, err)
		}
		out, err = roundByNumber(ctx, tx, number)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func trimMeasurement(m pitches.RoundMeasurement) pitches.RoundMeasurement {
	m.Problem, m.Suite, m.DeviceClass = pitches.TrimLine(m.Problem), pitches.TrimLine(m.Suite), pitches.TrimLine(m.DeviceClass)
	return m
}

func setMeasurement(ctx context.Context, tx *sql.Tx, roundID int64, m pitches.RoundMeasurement) error {
	m = trimMeasurement(m)
	if m.Suite == "" {
		m.Suite = "benchmarks"
	}
	_, err := tx.ExecContext(ctx, `UPDATE rounds SET problem = ?, suite = ?, device_class = ?, allow_imports = ? WHERE id = ?`,
		m.Problem, m.Suite, m.DeviceClass, m.AllowImports, roundID)
	return err
}

// SetRoundMeasurement changes how the round's pitches are measured (and,
// with it, its baseline), admins only, while the round is pitching or
// judging: a closed round's results stay as they were published. Like
// SetRoundBaseline it is not part of pitches.Service: the web layer checks
// the measurement against the kernel catalogue first
// (runner.CheckMeasurement).
func (db *DB) SetRoundMeasurement(ctx context.Context, by *pitches.User, number int, m pitches.RoundMeasurement, baseline string) (*pitches.Round, error) {
	if pitches.CanRole(by, pitches.ActSetMeasure) != nil {
		return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins set a round's measurement")
	}
	if err := pitches.ValidateMeasurement(trimMeasurement(m)); err != nil {
		return nil, err
	}
	if err := pitches.ValidateVariant("baseline", pitches.TrimLine(baseline)); err != nil {
		return nil, err
	}
	var out *pitches.Round
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, number)
		if err != nil {
			return err
		}
		if r.Status == pitches.RoundClosed {
			return pitches.Errorf(pitches.ECONFLICT, "", "round %d is closed: its measurement stays as its results were published", number)
		}
		if err := setMeasurement(ctx, tx, r.ID, m); err != nil {
			return fmt.Errorf("sqlite: set measurement of round %d: %w", number, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rounds SET baseline = ?, updated_at = ? WHERE id = ?`, pitches.TrimLine(baseline), fmtTime(db.Now()), r.ID); err != nil {
			return fmt.Errorf("sqlite: set measurement of round %d: %w", number, err)
		}
		out, err = roundByNumber(ctx, tx, number)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
