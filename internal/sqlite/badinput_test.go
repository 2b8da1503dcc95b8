package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Every refused request must leave every table exactly as it was: each case
// dumps the whole database before and after and compares.
func TestBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric) // will be closed
	closedPitch := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	mustRound(t, db, c.admin, 2, round1Rubric) // judging
	p2 := mustPitch(t, db, c.c[2], 2, "Tile Size Tuning", 1.8, 2.5)
	sharkPitch := mustPitch(t, db, c.oracle, 2, "The Oracle's own idea", 1.1, 1.2)
	mustStatus(t, db, c.admin, 2, pitches.RoundJudging)
	mustRound(t, db, c.admin, 3, round1Rubric) // pitching
	p3 := mustPitch(t, db, c.c[3], 3, "TMA Store Epilogue", 1.12, 1.15)

	good := sc(r1Keys, 5, 5, 5, 5)
	card := func(scores map[string]float64, est pitches.Range) pitches.ScorecardInput {
		return pitches.ScorecardInput{Scores: scores, Estimate: est}
	}
	one := pitches.Range{Lo: 1, Hi: 1.1}
	bigBody := strings.Repeat("x", pitches.MaxBodyBytes+1)
	badWeights := []pitches.Criterion{{Key: "speedup", Name: "Speedup", Weight: 60}, {Key: "risk", Name: "Risk", Weight: 30}}

	cases := []struct {
		name, code, field string
		do                func() error
	}{
		{"round weights sum to 90", pitches.EINVALID, "weights", func() error {
			_, err := db.CreateRound(ctx, c.admin, pitches.RoundInput{Number: 4, Title: "r4", Criteria: badWeights})
			return err
		}},
		{"rubric edit weights sum to 90", pitches.EINVALID, "weights", func() error {
			_, err := db.UpdateRound(ctx, c.admin, 3, pitches.RoundInput{Title: "r3", Criteria: badWeights})
			return err
		}},
		{"duplicate round number", pitches.ECONFLICT, "number", func() error {
			_, err := db.CreateRound(ctx, c.admin, pitches.RoundInput{Number: 3, Title: "again", Criteria: round1Rubric})
			return err
		}},
		{"duplicate criterion key", pitches.EINVALID, "criteria[1].key", func() error {
			_, err := db.CreateRound(ctx, c.admin, pitches.RoundInput{Number: 4, Title: "r4", Criteria: []pitches.Criterion{
				{Key: "a", Name: "A", Weight: 50}, {Key: "a", Name: "A again", Weight: 50}}})
			return err
		}},
		{"personal weights sum to 110", pitches.EINVALID, "weights", func() error {
			return db.SetPersonalWeights(ctx, c.oracle, 3, map[string]int{"speedup": 50, "feasibility": 20, "risk": 20, "pitch_quality": 20})
		}},
		{"personal weights unknown key", pitches.EINVALID, "weights.evidence", func() error {
			return db.SetPersonalWeights(ctx, c.oracle, 3, map[string]int{"speedup": 40, "feasibility": 25, "risk": 20, "pitch_quality": 15, "evidence": 0})
		}},
		{"score above 10", pitches.EINVALID, "scores.risk", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(sc(r1Keys, 5, 5, 11, 5), one))
			return err
		}},
		{"score below 0", pitches.EINVALID, "scores.speedup", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(sc(r1Keys, -1, 5, 5, 5), one))
			return err
		}},
		{"score not a half step", pitches.EINVALID, "scores.feasibility", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(sc(r1Keys, 5, 5.3, 5, 5), one))
			return err
		}},
		{"unknown criterion", pitches.EINVALID, "scores.elegance", func() error {
			s := sc(r1Keys, 5, 5, 5, 5)
			s["elegance"] = 9
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(s, one))
			return err
		}},
		{"criterion missing", pitches.EINVALID, "scores.pitch_quality", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(sc(r1Keys[:3], 5, 5, 5), one))
			return err
		}},
		{"estimate lo > hi", pitches.EINVALID, "estimate.lo", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(good, pitches.Range{Lo: 2, Hi: 1}))
			return err
		}},
		{"claim lo > hi", pitches.EINVALID, "claim.lo", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Claim: pitches.Range{Lo: 2.5, Hi: 1.8}})
			return err
		}},
		{"claim lo <= 0", pitches.EINVALID, "claim.lo", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Claim: pitches.Range{Lo: 0, Hi: 1.8}})
			return err
		}},
		{"claim hi negative", pitches.EINVALID, "claim.hi", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Claim: pitches.Range{Lo: 1, Hi: -2}})
			return err
		}},
		{"empty title", pitches.EINVALID, "title", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "   ", Claim: one})
			return err
		}},
		{"empty title on edit", pitches.EINVALID, "title", func() error {
			_, err := db.EditPitch(ctx, c.c[3], p3.ID, pitches.PitchInput{Title: "", Claim: one})
			return err
		}},
		{"oversized body", pitches.EINVALID, "body", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Body: bigBody, Claim: one})
			return err
		}},
		{"bad variant", pitches.EINVALID, "variant", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Claim: one, Variant: "base line"})
			return err
		}},
		{"re-pitch of a later round", pitches.EINVALID, "repitch_of", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 3, Title: "x", Claim: one, RepitchOf: p3.ID})
			return err
		}},
		{"file in closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 1, Title: "late", Claim: one})
			return err
		}},
		{"file in judging round", pitches.ECONFLICT, "", func() error {
			_, err := db.FilePitch(ctx, c.c[4], pitches.PitchInput{RoundNumber: 2, Title: "late", Claim: one})
			return err
		}},
		{"score in closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, closedPitch.ID, card(good, one))
			return err
		}},
		{"vote in closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.CastVote(ctx, c.oracle, 1, pitches.VoteInput{PitchID: closedPitch.ID, Justification: "late"})
			return err
		}},
		{"withdraw in closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.WithdrawPitch(ctx, c.c[1], closedPitch.ID)
			return err
		}},
		{"edit pitch in closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.EditPitch(ctx, c.c[1], closedPitch.ID, pitches.PitchInput{Title: "rewrite history", Claim: one})
			return err
		}},
		{"edit rubric of closed round", pitches.ECONFLICT, "", func() error {
			_, err := db.UpdateRound(ctx, c.admin, 1, pitches.RoundInput{Title: "r1", Criteria: round1Rubric})
			return err
		}},
		{"personal weights in closed round", pitches.ECONFLICT, "", func() error {
			return db.SetPersonalWeights(ctx, c.pragmatist, 1, map[string]int{"speedup": 40, "feasibility": 25, "risk": 20, "pitch_quality": 15})
		}},
		{"reopen closed round", pitches.ECONFLICT, "status", func() error {
			_, err := db.SetRoundStatus(ctx, c.admin, 1, pitches.RoundJudging)
			return err
		}},
		{"score own pitch", pitches.ECONFLICT, "", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, sharkPitch.ID, card(good, one))
			return err
		}},
		{"vote for a pitch of another round", pitches.EINVALID, "pitch", func() error {
			_, err := db.CastVote(ctx, c.oracle, 2, pitches.VoteInput{PitchID: closedPitch.ID, Justification: "x"})
			return err
		}},
		{"vote without justification", pitches.EINVALID, "justification", func() error {
			_, err := db.CastVote(ctx, c.oracle, 2, pitches.VoteInput{PitchID: p2.ID, Justification: " "})
			return err
		}},
		{"score in a pitching round", pitches.ECONFLICT, "", func() error {
			_, err := db.SubmitScorecard(ctx, c.oracle, p3.ID, card(good, one))
			return err
		}},
		{"duplicate login", pitches.ECONFLICT, "login", func() error {
			_, err := db.CreateUser(ctx, "oracle", "Impostor", pitches.RoleShark, "long-enough")
			return err
		}},
		{"bad role", pitches.EINVALID, "role", func() error {
			_, err := db.CreateUser(ctx, "newbie", "Newbie", "owner", "long-enough")
			return err
		}},
		{"short password", pitches.EINVALID, "password", func() error {
			_, err := db.CreateUser(ctx, "newbie", "Newbie", pitches.RoleViewer, "short")
			return err
		}},
		{"demote the last admin", pitches.ECONFLICT, "role", func() error {
			return db.SetUserRole(ctx, c.admin, c.admin.ID, pitches.RoleViewer)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, db)
			err := tc.do()
			wantErr(t, err, tc.code, tc.field)
			if pitches.ErrorMessage(err) == "" || pitches.ErrorMessage(err) == "internal error" {
				t.Errorf("unclear message for %s: %v", tc.name, err)
			}
			if after := dump(t, db); after != before {
				t.Fatalf("%s was refused but changed the database", tc.name)
			}
		})
	}
	// And the good versions of the same requests do go through.
	if _, err := db.EditPitch(ctx, c.c[3], p3.ID, pitches.PitchInput{Title: "TMA Store Epilogue (revised)", Claim: one}); err != nil {
		t.Errorf("owner editing own pitch: %v", err)
	}
	if _, err := db.SubmitScorecard(ctx, c.oracle, p2.ID, card(good, one)); err != nil {
		t.Errorf("valid scorecard: %v", err)
	}
}
