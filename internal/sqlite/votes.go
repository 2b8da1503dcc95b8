package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

const voteSelect = `SELECT r.number, vv.shark_id, u.display_name, vv.pitch_id, vv.justification, vv.version, vv.created_at,
	vv.min_geomean, vv.max_regression, vv.max_variation, vv.require_correct
	FROM vote_versions vv JOIN rounds r ON r.id = vv.round_id JOIN users u ON u.id = vv.shark_id`

const latestVote = ` vv.version = (SELECT max(v2.version) FROM vote_versions v2
	WHERE v2.round_id = vv.round_id AND v2.shark_id = vv.shark_id)`

func loadVotes(ctx context.Context, q queryer, where string, args ...any) ([]pitches.Vote, error) {
	return queryAll(ctx, q, "load votes", func(r *sql.Rows) (pitches.Vote, error) {
		var v pitches.Vote
		var created string
		var minG, maxR, maxV sql.NullFloat64
		if err := r.Scan(&v.RoundNumber, &v.SharkID, &v.Shark, &v.PitchID, &v.Justification, &v.Version, &created,
			&minG, &maxR, &maxV, &v.Terms.Correct); err != nil {
			return v, err
		}
		v.Terms.MinGeomean, v.Terms.MaxRegression, v.Terms.MaxVariation = nullFloatPtr(minG), nullFloatPtr(maxR), nullFloatPtr(maxV)
		var err error
		v.CreatedAt, err = parseTime(created)
		return v, err
	}, voteSelect+` WHERE `+where+` ORDER BY vv.shark_id, vv.version`, args...)
}

// CastVote stores a new version of by's vote in the round; the latest counts
// and a vote may change until the round closes (scoring.md, "Votes").
func (db *DB) CastVote(ctx context.Context, by *pitches.User, round int, in pitches.VoteInput) (*pitches.Vote, error) {
	if err := pitches.CanRole(by, pitches.ActVote); err != nil {
		return nil, err
	}
	if err := pitches.ValidateVote(in); err != nil {
		return nil, err
	}
	var out *pitches.Vote
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, round)
		if err != nil {
			return err
		}
		p, err := pitchByID(ctx, tx, in.PitchID)
		if pitches.ErrorCode(err) == pitches.ENOTFOUND {
			return pitches.Errorf(pitches.EINVALID, "pitch", "pitch %d does not exist", in.PitchID)
		}
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActVote, pitches.Target{Round: r, Pitch: p}); err != nil {
			return err
		}
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) + 1 FROM vote_versions WHERE round_id = ? AND shark_id = ?`,
			r.ID, by.ID).Scan(&version); err != nil {
			return fmt.Errorf("sqlite: next vote version: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO vote_versions (round_id, shark_id, pitch_id, justification, version, created_at,
			min_geomean, max_regression, max_variation, require_correct) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, by.ID, p.ID, strings.TrimSpace(in.Justification), version, fmtTime(db.Now()),
			floatPtrArg(in.Terms.MinGeomean), floatPtrArg(in.Terms.MaxRegression), floatPtrArg(in.Terms.MaxVariation), in.Terms.Correct); err != nil {
			return fmt.Errorf("sqlite: insert vote: %w", err)
		}
		vs, err := loadVotes(ctx, tx, `vv.round_id = `+joinParam+` AND vv.shark_id = `+joinParam+` AND vv.version = `+joinParam, r.ID, by.ID, version)
		if err != nil {
			return err
		}
		out = &vs[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VisibleVotes returns the current votes of the round that viewer may see
// (pitches.CanSeeVotes); a shark always sees their own.
func (db *DB) VisibleVotes(ctx context.Context, viewer *pitches.User, round int) ([]pitches.Vote, error) {
	r, err := roundByNumber(ctx, db.r, round)
	if err != nil {
		return nil, err
	}
	votes, err := loadVotes(ctx, db.r, `vv.round_id = `+joinParam+` AND`+latestVote, r.ID)
	if err != nil {
		return nil, err
	}
	voted := false
	if viewer != nil {
		for _, v := range votes {
			if v.SharkID == viewer.ID {
				voted = true
			}
		}
	}
	if pitches.CanSeeVotes(viewer, r, voted) {
		return votes, nil
	}
	return []pitches.Vote{}, nil
}

// VoteHistory returns every version of a shark's vote in a round, oldest
// first; the same visibility as VisibleVotes applies.
func (db *DB) VoteHistory(ctx context.Context, viewer *pitches.User, round int, sharkID int64) ([]pitches.Vote, error) {
	r, err := roundByNumber(ctx, db.r, round)
	if err != nil {
		return nil, err
	}
	if viewer == nil || viewer.ID != sharkID {
		mine, err := loadVotes(ctx, db.r, `vv.round_id = `+joinParam+` AND vv.shark_id = `+joinParam, r.ID, viewerID(viewer))
		if err != nil {
			return nil, err
		}
		if !pitches.CanSeeVotes(viewer, r, len(mine) > 0) {
			return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "other sharks' votes stay hidden until you have voted or the round closes")
		}
	}
	return loadVotes(ctx, db.r, `vv.round_id = `+joinParam+` AND vv.shark_id = `+joinParam, r.ID, sharkID)
}

func viewerID(u *pitches.User) int64 {
	if u == nil {
		return 0
	}
	return u.ID
}

// Standings computes the round's table from the current scorecards and
// votes (pitches.ComputeStandings) and withholds what viewer may not see.
// All reads happen in one read transaction so the table is consistent.
func (db *DB) Standings(ctx context.Context, viewer *pitches.User, round int) (*pitches.Standings, error) {
	tx, err := db.r.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin standings read: %w", err)
	}
	defer tx.end(ctx)
	r, err := roundByNumber(ctx, tx, round)
	if err != nil {
		return nil, err
	}
	ps, err := pitchesOfRound(ctx, tx, r.ID)
	if err != nil {
		return nil, err
	}
	cards, err := loadCards(ctx, tx, `sv.pitch_id IN (SELECT id FROM pitches WHERE round_id = ?) AND`+latestOnly, r.ID)
	if err != nil {
		return nil, err
	}
	votes, err := loadVotes(ctx, tx, `vv.round_id = `+joinParam+` AND`+latestVote, r.ID)
	if err != nil {
		return nil, err
	}
	st := pitches.ComputeStandings(r, ps, cards, votes)
	scored := map[int64]bool{}
	voted := false
	if viewer != nil {
		for _, c := range cards {
			if c.SharkID == viewer.ID {
				scored[c.PitchID] = true
			}
		}
		for _, v := range votes {
			if v.SharkID == viewer.ID {
				voted = true
			}
		}
	}
	pitches.ApplyVisibility(&st, viewer, r, scored, voted)
	return &st, nil
}

// nullFloatPtr and floatPtrArg move optional numbers (deal terms) between
// SQL NULL and nil pointers.
func nullFloatPtr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}

func floatPtrArg(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
