package sqlite

import (
	"context"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Predictions lock once a pitch has a measured result (scoring.md): a shark
// cannot change an estimate, a contestant cannot change the claim or the
// variant. Everything else stays editable, a shark's first card after the
// result included (stored, not a prediction: scorecard_lock_test.go), and a
// refused write changes nothing.
func TestPredictionsLockAfterResult(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	scores := map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8}

	// A failed run does not lock anything.
	failed := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "baseline", Device: "0", PitchID: p.ID})
	if err := db.MarkFailed(ctx, failed.ID, runner.Finish{Reason: "crashed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EditPitch(ctx, c.c[1], p.ID, pitches.PitchInput{Title: p.Title, Claim: pitches.Range{Lo: 1.4, Hi: 1.8}}); err != nil {
		t.Fatalf("claim edit before any result: %v", err)
	}

	// An imported result locks. (Claims are edited while pitching, cards
	// are scored while judging: the pitch is measured in between, and a
	// second pitch stays in a pitching round.)
	mustRound(t, db, c.admin, 2, round1Rubric)
	p2 := mustPitch(t, db, c.c[1], 2, "Pipeline Stages again", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustScore(t, db, c.pragmatist, p.ID, scores)
	var stored *runner.Run
	for _, pid := range []int64{p.ID, p2.ID} {
		stored = importResult(t, db, c.admin, pid, "pipeline_stages", runner.StatusSucceeded)
	}
	p1 := p
	p = p2
	before := dump(t, db)

	_, err := db.SubmitScorecard(ctx, c.pragmatist, p1.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 0.7, Hi: 0.8}})
	wantErr(t, err, pitches.ECONFLICT, "estimate")
	_, err = db.EditPitch(ctx, c.c[1], p.ID, pitches.PitchInput{Title: p.Title, Claim: pitches.Range{Lo: 0.7, Hi: 0.8}})
	wantErr(t, err, pitches.ECONFLICT, "claim")
	_, err = db.EditPitch(ctx, c.c[1], p.ID, pitches.PitchInput{Title: p.Title, Claim: pitches.Range{Lo: 1.5, Hi: 1.8}, Variant: "baseline?stages=2"})
	wantErr(t, err, pitches.ECONFLICT, "variant")
	if after := dump(t, db); after != before {
		t.Fatalf("refused writes changed the database:\n%s\nvs\n%s", before, after)
	}
	if stored.ID == 0 {
		t.Fatal("import stored no run")
	}

	// A first card after the result is a late review, not a prediction.
	if _, err := db.SubmitScorecard(ctx, c.oracle, p1.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 0.7, Hi: 0.8}}); err != nil {
		t.Fatalf("a late first card: %v", err)
	}
	// The same estimate with other scores is a correction, not a prediction.
	scores["risk"] = 6
	if _, err := db.SubmitScorecard(ctx, c.pragmatist, p1.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 1, Hi: 1.2}}); err != nil {
		t.Fatalf("score correction with the same estimate: %v", err)
	}
	if _, err := db.EditPitch(ctx, c.c[1], p.ID, pitches.PitchInput{Title: "Pipeline Stages (3)", Claim: pitches.Range{Lo: 1.5, Hi: 1.8}}); err != nil {
		t.Fatalf("title edit after the result: %v", err)
	}
}

func TestVoteDealTerms(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	minG, maxR := 1.4, 0.1
	v, err := db.CastVote(ctx, c.oracle, 1, pitches.VoteInput{PitchID: p.ID, Justification: "settling for 1.4x",
		Terms: pitches.DealTerms{MinGeomean: &minG, MaxRegression: &maxR, Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Terms.MinGeomean == nil || *v.Terms.MinGeomean != 1.4 || *v.Terms.MaxRegression != 0.1 || v.Terms.MaxVariation != nil || !v.Terms.Correct {
		t.Fatalf("stored terms %+v", v.Terms)
	}
	before := dump(t, db)
	bad := -1.0
	_, err = db.CastVote(ctx, c.oracle, 1, pitches.VoteInput{PitchID: p.ID, Justification: "x", Terms: pitches.DealTerms{MaxVariation: &bad}})
	wantErr(t, err, pitches.EINVALID, "terms.max_variation")
	if dump(t, db) != before {
		t.Fatal("a refused vote changed the database")
	}
	// A new version without terms has none; the old one keeps its own.
	v2 := mustVote(t, db, c.oracle, 1, p.ID)
	if !v2.Terms.Empty() || v2.Version != 2 {
		t.Fatalf("second version %+v", v2)
	}
}

func TestSetRoundBaseline(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	// A baseline is a variant of the round's problem: none without one.
	_, err := db.SetRoundBaseline(ctx, c.admin, 1, "baseline")
	wantErr(t, err, pitches.EINVALID, "baseline")
	if _, err := db.SetRoundMeasurement(ctx, c.admin, 1, pitches.RoundMeasurement{Problem: "nvfp4_group_gemm"}, ""); err != nil {
		t.Fatal(err)
	}
	r, err := db.SetRoundBaseline(ctx, c.admin, 1, " baseline?stages=2 ")
	if err != nil || r.Baseline != "baseline?stages=2" {
		t.Fatalf("set baseline while judging: %+v %v", r, err)
	}
	_, err = db.SetRoundBaseline(ctx, c.oracle, 1, "baseline")
	wantErr(t, err, pitches.EFORBIDDEN, "")
	_, err = db.SetRoundBaseline(ctx, c.admin, 1, "a\nb")
	wantErr(t, err, pitches.EINVALID, "baseline")
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	_, err = db.SetRoundBaseline(ctx, c.admin, 1, "baseline")
	wantErr(t, err, pitches.ECONFLICT, "baseline")
	if r, _ := db.Round(ctx, 1); r.Baseline != "baseline?stages=2" {
		t.Fatalf("refused changes stored: %q", r.Baseline)
	}
}

// An incorrect or suspect run locks predictions too: its figures are seen
// by the pitch's contestant and by the sharks who scored it, and
// calibration scores predictions as they stood at the first run with a
// result of any kind.
func TestIncorrectOrSuspectRunLocksPredictions(t *testing.T) {
	ctx := context.Background()
	for _, st := range []runner.Status{runner.StatusIncorrect, runner.StatusSuspect} {
		db := MustOpenDB(t)
		c := mustCast(t, db)
		mustRound(t, db, c.admin, 1, round1Rubric)
		p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
		importResult(t, db, c.admin, p.ID, "pipeline_stages", st)
		_, err := db.EditPitch(ctx, c.c[1], p.ID, pitches.PitchInput{Title: p.Title, Claim: pitches.Range{Lo: 0.7, Hi: 0.8}})
		wantErr(t, err, pitches.ECONFLICT, "claim")
	}
}

// A round stored before measurements existed has a baseline and no
// problem: an edit of its title that keeps that baseline goes through;
// another baseline is refused until the round declares its problem.
func TestEditKeepsALegacyBaseline(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	if _, err := db.w.Exec(`UPDATE rounds SET baseline = 'baseline', problem = '' WHERE number = 1`); err != nil {
		t.Fatal(err)
	}
	in := pitches.RoundInput{Number: 1, Title: "Renamed", Criteria: round1Rubric, Baseline: "baseline"}
	if r, err := db.UpdateRound(ctx, c.admin, 1, in); err != nil || r.Title != "Renamed" || r.Baseline != "baseline" {
		t.Fatalf("an edit keeping the legacy baseline: %+v %v", r, err)
	}
	in.Baseline = "baseline?stages=2"
	_, err := db.UpdateRound(ctx, c.admin, 1, in)
	wantErr(t, err, pitches.EINVALID, "baseline")
}
