package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

const cardSelect = `SELECT sv.id, sv.pitch_id, sv.shark_id, u.display_name, sv.version, sv.estimate_lo, sv.estimate_hi,
	sv.verdict, sv.weights_json, sv.total, sv.typed_total, sv.created_at
	FROM scorecard_versions sv JOIN users u ON u.id = sv.shark_id`

// latestOnly keeps the current version of each shark's card: the latest
// counts, all are kept (scoring.md, "Append-only history").
const latestOnly = ` sv.version = (SELECT max(v2.version) FROM scorecard_versions v2
	WHERE v2.pitch_id = sv.pitch_id AND v2.shark_id = sv.shark_id)`

func loadCards(ctx context.Context, q queryer, where string, args ...any) ([]pitches.Scorecard, error) {
	out, err := queryAll(ctx, q, "load scorecards", func(r *sql.Rows) (pitches.Scorecard, error) {
		var c pitches.Scorecard
		var wj, created string
		var typed sql.NullFloat64
		if err := r.Scan(&c.ID, &c.PitchID, &c.SharkID, &c.Shark, &c.Version, &c.Estimate.Lo, &c.Estimate.Hi,
			&c.Verdict, &wj, &c.Total, &typed, &created); err != nil {
			return c, err
		}
		if err := json.Unmarshal([]byte(wj), &c.Weights); err != nil {
			return c, fmt.Errorf("scorecard %d weights: %w", c.ID, err)
		}
		if typed.Valid {
			v := typed.Float64
			c.TypedTotal = &v
		}
		var err error
		c.CreatedAt, err = parseTime(created)
		return c, err
	}, cardSelect+` WHERE `+where+` ORDER BY sv.pitch_id, sv.shark_id, sv.version`, args...)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := loadScores(ctx, q, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func loadScores(ctx context.Context, q queryer, c *pitches.Scorecard) error {
	rows, err := q.QueryContext(ctx, `SELECT criterion_key, score, note FROM scorecard_scores WHERE version_id = ?`, c.ID)
	if err != nil {
		return fmt.Errorf("sqlite: load scores of scorecard %d: %w", c.ID, err)
	}
	defer rows.Close()
	c.Scores = map[string]float64{}
	c.Notes = map[string]string{}
	for rows.Next() {
		var k, note string
		var s float64
		if err := rows.Scan(&k, &s, &note); err != nil {
			return fmt.Errorf("sqlite: load scores of scorecard %d: %w", c.ID, err)
		}
		c.Scores[k] = s
		if note != "" {
			c.Notes[k] = note
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: load scores of scorecard %d: %w", c.ID, err)
	}
	return nil
}

// SubmitScorecard stores a new version of by's scorecard for the pitch.
func (db *DB) SubmitScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput) (*pitches.Scorecard, error) {
	return db.submitScorecard(ctx, by, pitchID, in, nil)
}

// ImportScorecard is SubmitScorecard plus a total a person typed by hand,
// kept next to the computed one so the disagreement shows (scoring.md: "where
// an imported or demo scorecard carries a total typed by a person, keep it").
// It is for the demo loader and importers only: it is not part of
// pitches.Service, so no web request can set a typed total. Every rule of
// SubmitScorecard applies.
func (db *DB) ImportScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput, typedTotal float64) (*pitches.Scorecard, error) {
	if math.IsNaN(typedTotal) || typedTotal < 0 || typedTotal > pitches.MaxScore {
		return nil, pitches.Errorf(pitches.EINVALID, "typed_total", "must be between 0 and 10")
	}
	return db.submitScorecard(ctx, by, pitchID, in, &typedTotal)
}

func (db *DB) submitScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput, typed *float64) (*pitches.Scorecard, error) {
	if err := pitches.CanRole(by, pitches.ActScore); err != nil {
		return nil, err
	}
	var out *pitches.Scorecard
	err := db.write(ctx, func(tx *sql.Tx) error {
		p, r, err := pitchAndRound(ctx, tx, pitchID)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActScore, pitches.Target{Round: r, Pitch: p}); err != nil {
			return err
		}
		if err := pitches.ValidateScorecard(r.Criteria, in); err != nil {
			return err
		}
		firstResult, err := checkEstimateUnlocked(ctx, tx, p, r, by.ID, in.Estimate)
		if err != nil {
			return err
		}
		// The shark's personal weights if set, else the round's defaults
		// (scoring.md: "Without personal weights the round's defaults apply").
		weights, err := personalWeights(ctx, tx, by.ID, r.ID)
		if err != nil {
			return err
		}
		if weights == nil {
			weights = map[string]int{}
			for _, c := range r.Criteria {
				weights[c.Key] = c.Weight
			}
		}
		wj, err := json.Marshal(weights)
		if err != nil {
			return fmt.Errorf("sqlite: encode weights: %w", err)
		}
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) + 1 FROM scorecard_versions WHERE pitch_id = ? AND shark_id = ?`,
			pitchID, by.ID).Scan(&version); err != nil {
			return fmt.Errorf("sqlite: next scorecard version: %w", err)
		}
		// A version stored once the pitch has a result is dated after it,
		// even on a clock that has not moved (or moved back) since the
		// run was stored: the history marks it changed_after_result and
		// prediction scoring (pitches.PredictionAt) leaves it out, which a
		// version dated at the result's own instant would not be.
		created := db.Now()
		if !firstResult.IsZero() && !created.After(firstResult) {
			created = firstResult.Add(time.Nanosecond)
		}
		total := pitches.WeightedTotal(weights, in.Scores)
		var typedArg any
		if typed != nil {
			typedArg = *typed
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO scorecard_versions (pitch_id, shark_id, version, estimate_lo, estimate_hi, verdict, weights_json, total, typed_total, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			pitchID, by.ID, version, in.Estimate.Lo, in.Estimate.Hi, strings.TrimSpace(in.Verdict), string(wj), total, typedArg, fmtTime(created))
		if err != nil {
			return fmt.Errorf("sqlite: insert scorecard: %w", err)
		}
		vid, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: insert scorecard: %w", err)
		}
		for _, c := range r.Criteria {
			if _, err := tx.ExecContext(ctx, `INSERT INTO scorecard_scores (version_id, criterion_key, score, note) VALUES (?, ?, ?, ?)`,
				vid, c.Key, in.Scores[c.Key], in.Notes[c.Key]); err != nil {
				return fmt.Errorf("sqlite: insert score %q: %w", c.Key, err)
			}
		}
		cards, err := loadCards(ctx, tx, `sv.id = `+joinParam, vid)
		if err != nil {
			return err
		}
		out = &cards[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VisibleScorecards returns the current cards of a pitch that viewer may see
// (hidden-score rule, pitches.CanSeeScorecards) and how many are withheld.
// The viewer's own card is always included.
func (db *DB) VisibleScorecards(ctx context.Context, viewer *pitches.User, pitchID int64) ([]pitches.Scorecard, int, error) {
	_, r, err := pitchAndRound(ctx, db.r, pitchID)
	if err != nil {
		return nil, 0, err
	}
	cards, err := loadCards(ctx, db.r, `sv.pitch_id = `+joinParam+` AND`+latestOnly, pitchID)
	if err != nil {
		return nil, 0, err
	}
	scored := false
	if viewer != nil {
		for _, c := range cards {
			if c.SharkID == viewer.ID {
				scored = true
			}
		}
	}
	var out []pitches.Scorecard
	hidden := 0
	for _, c := range cards {
		if pitches.CanSeeScorecard(viewer, r, c.SharkID, scored) {
			out = append(out, c)
		} else {
			hidden++
		}
	}
	return out, hidden, nil
}

// ScorecardHistory returns every version of one shark's card for a pitch,
// oldest first, if viewer may see that card.
func (db *DB) ScorecardHistory(ctx context.Context, viewer *pitches.User, pitchID, sharkID int64) ([]pitches.Scorecard, error) {
	_, r, err := pitchAndRound(ctx, db.r, pitchID)
	if err != nil {
		return nil, err
	}
	// Whether the viewer scored matters only for another shark's card.
	if !pitches.CanSeeScorecard(viewer, r, sharkID, false) {
		scored := false
		if viewer != nil {
			var n int
			if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM scorecard_versions WHERE pitch_id = ? AND shark_id = ?`,
				pitchID, viewer.ID).Scan(&n); err != nil {
				return nil, fmt.Errorf("sqlite: check own scorecard: %w", err)
			}
			scored = n > 0
		}
		if !pitches.CanSeeScorecard(viewer, r, sharkID, scored) {
			return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "other sharks' scorecards stay hidden until you have scored this pitch or the round closes")
		}
	}
	return loadCards(ctx, db.r, `sv.pitch_id = `+joinParam+` AND sv.shark_id = `+joinParam, pitchID, sharkID)
}

// measuredRun returns the newest run (local or imported) of the pitch that
// holds a result document, whatever it found (succeeded, incorrect or
// suspect), or 0 when none. Once it exists the pitch's predictions are
// locked (scoring.md: "Predictions are locked once a result for that
// variant exists: editing after seeing the result is not possible"): an
// incorrect or suspect run's figures are seen by the pitch's contestant and
// the sharks who scored it too, and calibration scores predictions as they
// stood at the first such run.
func measuredRun(ctx context.Context, q queryer, pitchID int64) (int64, error) {
	var id sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT max(id) FROM runs WHERE pitch_id = ? AND status IN ('succeeded', 'incorrect', 'suspect')`, pitchID).Scan(&id); err != nil {
		return 0, fmt.Errorf("sqlite: look up measured runs of pitch %d: %w", pitchID, err)
	}
	return id.Int64, nil
}

// predictedResult is the first and newest result of what pitch pitchID
// predicts (scoring.md: "Predictions are locked once a result for that
// variant exists"): a run of the pitch that holds a result (any variant,
// any status with a result: each shows a figure to someone), or any other
// run with a result of the pitch's variant (knob order ignored:
// variant_key) that its round's measurement would take as the pitch's
// (runner.Measurement.Mismatch: the same problem, suite, baseline and
// device class, imports where the round takes them), under no pitch or
// another pitch, in this round or another. Such a figure answers the
// prediction and was there to see, whenever it was made, even before the
// pitch was filed; a result on another device class or suite is another
// measurement and does not count. first is the earliest finish (an
// import's creation), zero when none; newest the newest such run's id.
// p and r are the pitch and its round, as the caller loaded them
// (pitchAndRound).
func predictedResult(ctx context.Context, q queryer, p *pitches.Pitch, r *pitches.Round) (first time.Time, newest int64, err error) {
	pitchID := p.ID
	m := runner.MeasurementForPitch(r, p)
	key := pitches.VariantKey(p.Variant)
	runs, err := queryAll(ctx, q, "read the results of the pitch's variant", func(rs *sql.Rows) (*runner.Run, error) {
		return scanRun(rs, false)
	}, `SELECT `+runCols+` FROM runs WHERE status IN ('succeeded', 'incorrect', 'suspect')
		AND (pitch_id = ? OR (? != '' AND problem = ? AND variant_key = ?))`, pitchID, key, r.Measurement.Problem, key)
	if err != nil {
		return time.Time{}, 0, err
	}
	for _, run := range runs {
		if run.PitchID != pitchID {
			if field, _ := m.Mismatch(run); field != "" {
				continue
			}
		}
		at := run.FinishedAt
		if at.IsZero() {
			at = run.CreatedAt
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		newest = max(newest, run.ID)
	}
	return first, newest, nil
}

// FirstResultAt is when a result of what pitch pitchID predicts first
// existed (predictedResult), zero when none: the time prediction scoring
// reads estimates and claims at (pitches.PredictionAt).
func (db *DB) FirstResultAt(ctx context.Context, pitchID int64) (time.Time, error) {
	p, r, err := pitchAndRound(ctx, db.r, pitchID)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	first, _, err := predictedResult(ctx, db.r, p, r)
	return first, err
}

// checkEstimateUnlocked enforces the prediction lock on a shark's card for
// a pitch that already has a result (scoring.md: "Predictions are locked
// once a result for that variant exists"). It returns when the pitch's
// first result existed (zero when none).
//
// A shark who scored before the result keeps the estimate they gave: a new
// version must repeat it (scores, notes and the verdict may still be
// corrected), anything else is refused naming "estimate".
//
// A shark who had not scored before the result may still submit a card, as
// a late review is still a review (HotCRP): its scores count in the
// standings like any other, and it lets the shark complete the round (the
// ranking shows to a shark once they have scored every pitch they may). Its
// estimate is required and checked like any other and is stored, but it is
// not a prediction: the version is dated after the result, so prediction
// scoring (pitches.PredictionAt: the pitch page, the recap, the results
// exports, calibration) leaves it out, and the card's history marks it
// changed_after_result. Once stored, that estimate is locked like any
// other.
func checkEstimateUnlocked(ctx context.Context, tx *sql.Tx, p *pitches.Pitch, r *pitches.Round, sharkID int64, est pitches.Range) (time.Time, error) {
	pitchID := p.ID
	first, runID, err := predictedResult(ctx, tx, p, r)
	if err != nil || runID == 0 {
		return time.Time{}, err
	}
	var lo, hi float64
	err = tx.QueryRowContext(ctx, `SELECT estimate_lo, estimate_hi FROM scorecard_versions WHERE pitch_id = ? AND shark_id = ?
		ORDER BY version DESC LIMIT 1`, pitchID, sharkID).Scan(&lo, &hi)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return first, nil // a late card: stored, never scored as a prediction
	case err != nil:
		return time.Time{}, fmt.Errorf("sqlite: read current estimate: %w", err)
	case lo != est.Lo || hi != est.Hi:
		return time.Time{}, pitches.Errorf(pitches.ECONFLICT, "estimate", "predictions on this pitch are locked: run #%d has measured its variant; your estimate stays %s-%sx (scores and notes may still change)",
			runID, strconv.FormatFloat(lo, 'f', -1, 64), strconv.FormatFloat(hi, 'f', -1, 64))
	}
	return first, nil
}
