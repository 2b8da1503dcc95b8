package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

const pitchSelect = `SELECT p.id, r.number, p.contestant_id, u.display_name, p.title, p.category, p.body,
	p.claim_lo, p.claim_hi, p.variant, p.status, p.repitch_of, p.created_at, p.updated_at
	FROM pitches p JOIN rounds r ON r.id = p.round_id JOIN users u ON u.id = p.contestant_id`

func scanPitch(row interface{ Scan(...any) error }) (*pitches.Pitch, error) {
	var p pitches.Pitch
	var status, created, updated string
	var repitch sql.NullInt64
	if err := row.Scan(&p.ID, &p.RoundNumber, &p.ContestantID, &p.Contestant, &p.Title, &p.Category, &p.Body,
		&p.Claim.Lo, &p.Claim.Hi, &p.Variant, &status, &repitch, &created, &updated); err != nil {
		return nil, err
	}
	p.Status = pitches.PitchStatus(status)
	p.RepitchOf = repitch.Int64
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if p.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	return &p, nil
}

// fillRepitchedBy sets RepitchedBy on each pitch: the link is stored once
// (repitch_of) and shown both ways.
func fillRepitchedBy(ctx context.Context, q queryer, ps []pitches.Pitch) error {
	if len(ps) == 0 {
		return nil
	}
	// One query for every pitch of the list (not one per pitch: issue 13);
	// the ids travel as one JSON array so that the statement's text, and
	// its cached preparation, is the same for any number of pitches.
	ids := make([]int64, len(ps))
	at := make(map[int64]int, len(ps))
	for i := range ps {
		ids[i] = ps[i].ID
		at[ps[i].ID] = i
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("sqlite: load re-pitches: %w", err)
	}
	type link struct{ of, id int64 }
	links, err := queryAll(ctx, q, "load re-pitches", func(r *sql.Rows) (link, error) {
		var l link
		err := r.Scan(&l.of, &l.id)
		return l, err
	}, `SELECT repitch_of, id FROM pitches WHERE repitch_of IN (SELECT value FROM json_each(?)) ORDER BY id`, string(arg))
	if err != nil {
		return err
	}
	for _, l := range links {
		i := at[l.of]
		ps[i].RepitchedBy = append(ps[i].RepitchedBy, l.id)
	}
	return nil
}

func pitchByID(ctx context.Context, q queryer, id int64) (*pitches.Pitch, error) {
	p, err := scanPitch(q.QueryRowContext(ctx, pitchSelect+` WHERE p.id = `+joinParam, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "pitch %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: load pitch %d: %w", id, err)
	}
	one := []pitches.Pitch{*p}
	if err := fillRepitchedBy(ctx, q, one); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// pitchAndRound loads a pitch and the round it belongs to (with its rubric),
// the pair every permission check needs.
func pitchAndRound(ctx context.Context, q queryer, id int64) (*pitches.Pitch, *pitches.Round, error) {
	p, err := pitchByID(ctx, q, id)
	if err != nil {
		return nil, nil, err
	}
	r, err := roundByNumber(ctx, q, p.RoundNumber)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

func pitchesOfRound(ctx context.Context, q queryer, roundID int64) ([]pitches.Pitch, error) {
	out, err := queryAll(ctx, q, "list pitches", values(scanPitch), pitchSelect+` WHERE p.round_id = `+joinParam+` ORDER BY p.created_at, p.id`, roundID)
	if err != nil {
		return nil, err
	}
	if err := fillRepitchedBy(ctx, q, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Pitches lists a round's pitches in filing order.
func (db *DB) Pitches(ctx context.Context, round int) ([]pitches.Pitch, error) {
	r, err := roundByNumber(ctx, db.r, round)
	if err != nil {
		return nil, err
	}
	return pitchesOfRound(ctx, db.r, r.ID)
}

func (db *DB) Pitch(ctx context.Context, id int64) (*pitches.Pitch, error) {
	return pitchByID(ctx, db.r, id)
}

// checkRepitch: a re-pitch links to a pitch of an earlier round, filed by
// the same person (an admin may link anyone's).
func checkRepitch(ctx context.Context, q queryer, by *pitches.User, round, repitchOf int64) error {
	if repitchOf == 0 {
		return nil
	}
	orig, err := pitchByID(ctx, q, repitchOf)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return pitches.Errorf(pitches.EINVALID, "repitch_of", "pitch %d does not exist", repitchOf)
	}
	if err != nil {
		return err
	}
	if int64(orig.RoundNumber) >= round {
		return pitches.Errorf(pitches.EINVALID, "repitch_of", "a re-pitch must follow a pitch of an earlier round (pitch %d is in round %d)", orig.ID, orig.RoundNumber)
	}
	return pitches.Can(by, pitches.ActRepitch, pitches.Target{Pitch: orig})
}

// checkVariantFree applies the one-pitch-per-variant rule
// (pitches.CheckVariantFree) to pitch self (0 for a new one) of contestant
// in round r taking variant: the contestant's other pitches of the round
// naming it, with the newest run of each withdrawn one that has a result
// (measuredRun, the notion that locks a pitch's claim and variant). Call it
// in the transaction that writes the variant, so that two writes cannot
// both pass it.
func checkVariantFree(ctx context.Context, tx *sql.Tx, r *pitches.Round, contestant, self int64, variant string) error {
	if strings.TrimSpace(variant) == "" {
		return nil
	}
	others, err := queryAll(ctx, tx, "look up the contestant's variants", func(rs *sql.Rows) (pitches.VariantHolder, error) {
		h := pitches.VariantHolder{RoundNumber: r.Number}
		var status string
		err := rs.Scan(&h.PitchID, &status, &h.Variant)
		h.Status = pitches.PitchStatus(status)
		return h, err
	}, `SELECT id, status, variant FROM pitches WHERE round_id = ? AND contestant_id = ? AND id != ? AND variant != '' ORDER BY id`,
		r.ID, contestant, self)
	if err != nil {
		return err
	}
	var holders []pitches.VariantHolder
	for _, h := range others {
		if !pitches.SameVariant(variant, h.Variant) {
			continue
		}
		if h.Status != pitches.PitchActive {
			if h.MeasuredRun, err = measuredRun(ctx, tx, h.PitchID); err != nil {
				return err
			}
		}
		holders = append(holders, h)
	}
	return pitches.CheckVariantFree(variant, holders)
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// FilePitch: contestants, sharks and admins, while the round is pitching.
func (db *DB) FilePitch(ctx context.Context, by *pitches.User, in pitches.PitchInput) (*pitches.Pitch, error) {
	if err := pitches.Can(by, pitches.ActFilePitch, pitches.Target{Round: &pitches.Round{Number: in.RoundNumber, Status: pitches.RoundPitching}}); err != nil {
		return nil, err
	}
	if err := pitches.ValidatePitch(in); err != nil {
		return nil, err
	}
	var out *pitches.Pitch
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := roundByNumber(ctx, tx, in.RoundNumber)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActFilePitch, pitches.Target{Round: r}); err != nil {
			return err
		}
		if err := checkRepitch(ctx, tx, by, int64(r.Number), in.RepitchOf); err != nil {
			return err
		}
		if err := checkVariantFree(ctx, tx, r, by.ID, 0, in.Variant); err != nil {
			return err
		}
		now := fmtTime(db.Now())
		res, err := tx.ExecContext(ctx, `INSERT INTO pitches (round_id, contestant_id, title, category, body, claim_lo, claim_hi, variant, status, repitch_of, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
			r.ID, by.ID, strings.TrimSpace(in.Title), strings.TrimSpace(in.Category), in.Body, in.Claim.Lo, in.Claim.Hi,
			in.Variant, nullID(in.RepitchOf), now, now)
		if err != nil {
			return fmt.Errorf("sqlite: insert pitch: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: insert pitch: %w", err)
		}
		out, err = pitchByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EditPitch: the pitch's owner, while the round is pitching. The round
// cannot change (in.RoundNumber may be 0 or the pitch's round).
func (db *DB) EditPitch(ctx context.Context, by *pitches.User, id int64, in pitches.PitchInput) (*pitches.Pitch, error) {
	if by == nil {
		return nil, pitches.Errorf(pitches.EUNAUTHORIZED, "", "log in to edit pitches")
	}
	var out *pitches.Pitch
	err := db.write(ctx, func(tx *sql.Tx) error {
		p, r, err := pitchAndRound(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActEditPitch, pitches.Target{Round: r, Pitch: p}); err != nil {
			return err
		}
		if in.RoundNumber == 0 {
			in.RoundNumber = p.RoundNumber
		}
		if in.RoundNumber != p.RoundNumber {
			return pitches.Errorf(pitches.EINVALID, "round", "a pitch cannot move to another round")
		}
		if err := pitches.ValidatePitch(in); err != nil {
			return err
		}
		if err := checkRepitch(ctx, tx, by, int64(r.Number), in.RepitchOf); err != nil {
			return err
		}
		if strings.TrimSpace(in.Variant) != strings.TrimSpace(p.Variant) {
			runID, err := measuredRun(ctx, tx, id)
			if err != nil {
				return err
			}
			if runID != 0 {
				return pitches.Errorf(pitches.ECONFLICT, "variant", "the variant is locked: run #%d has measured this pitch (title, category and text may still change)", runID)
			}
		}
		// The claim is a prediction: locked once a result of its variant
		// exists anywhere (predictedResult), not only on this pitch.
		if in.Claim != p.Claim {
			_, runID, err := predictedResult(ctx, tx, p, r)
			if err != nil {
				return err
			}
			if runID != 0 {
				return pitches.Errorf(pitches.ECONFLICT, "claim", "the claim is locked: run #%d has measured this pitch's variant (title, category and text may still change)", runID)
			}
		}
		if strings.TrimSpace(in.Variant) != strings.TrimSpace(p.Variant) {
			if err := checkVariantFree(ctx, tx, r, p.ContestantID, p.ID, in.Variant); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pitches SET title = ?, category = ?, body = ?, claim_lo = ?, claim_hi = ?, variant = ?, repitch_of = ?, updated_at = ? WHERE id = ?`,
			strings.TrimSpace(in.Title), strings.TrimSpace(in.Category), in.Body, in.Claim.Lo, in.Claim.Hi, in.Variant,
			nullID(in.RepitchOf), fmtTime(db.Now()), id); err != nil {
			return fmt.Errorf("sqlite: update pitch %d: %w", id, err)
		}
		out, err = pitchByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WithdrawPitch: the owner or an admin, while the round is pitching or
// judging. Scorecards and votes already cast stay (history), but a withdrawn
// pitch cannot win, be scored or receive votes.
func (db *DB) WithdrawPitch(ctx context.Context, by *pitches.User, id int64) (*pitches.Pitch, error) {
	if by == nil {
		return nil, pitches.Errorf(pitches.EUNAUTHORIZED, "", "log in to withdraw pitches")
	}
	var out *pitches.Pitch
	err := db.write(ctx, func(tx *sql.Tx) error {
		p, r, err := pitchAndRound(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActWithdrawPitch, pitches.Target{Round: r, Pitch: p}); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pitches SET status = 'withdrawn', updated_at = ? WHERE id = ?`, fmtTime(db.Now()), id); err != nil {
			return fmt.Errorf("sqlite: withdraw pitch %d: %w", id, err)
		}
		out, err = pitchByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
