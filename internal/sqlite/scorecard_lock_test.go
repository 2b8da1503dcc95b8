package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A shark who had not scored a pitch before it was measured may still
// score it (a late review is still a review): the card is stored, counts in
// the standings and completes the shark's round (the ranking shows), but
// its estimate is not a prediction: the version is dated after the result,
// so pitches.PredictionAt leaves it out. Once stored, that estimate is
// locked like any other; an estimate is still required and checked.
func TestLateScorecardIsStoredButNotAPrediction(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	q := mustPitch(t, db, c.c[2], 1, "Tile Size Tuning", 1.8, 2.5)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	scores := map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8}
	mustScore(t, db, c.pragmatist, p.ID, scores)
	mustScore(t, db, c.oracle, q.ID, scores)
	run := importResult(t, db, c.admin, p.ID, "pipeline_stages", runner.StatusSucceeded)

	st, err := db.Standings(ctx, c.oracle, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.RanksShown {
		t.Fatal("the oracle sees the ranking before scoring every pitch")
	}

	// No estimate: still required, and nothing is stored.
	before := dump(t, db)
	_, err = db.SubmitScorecard(ctx, c.oracle, p.ID, pitches.ScorecardInput{Scores: scores})
	wantErr(t, err, pitches.EINVALID, "estimate.lo")
	if dump(t, db) != before {
		t.Fatal("a refused late card changed the database")
	}

	// The late card goes in, estimate and all.
	late, err := db.SubmitScorecard(ctx, c.oracle, p.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 0.7, Hi: 0.8}, Verdict: "REJECT"})
	if err != nil {
		t.Fatalf("a late card for a measured pitch: %v", err)
	}
	if late.Version != 1 || late.Estimate != (pitches.Range{Lo: 0.7, Hi: 0.8}) {
		t.Fatalf("late card %+v", late)
	}
	first := run.FinishedAt
	if first.IsZero() {
		first = run.CreatedAt
	}
	if !pitches.ChangedAfterResult(*late, first) {
		t.Errorf("late card stored at %v, not after the first result at %v", late.CreatedAt, first)
	}
	hist, err := db.ScorecardHistory(ctx, c.admin, p.ID, c.oracle.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := pitches.PredictionAt(hist, first); ok {
		t.Errorf("the late card's version %d is scored as a prediction", v.Version)
	}
	// The pragmatist's card, given before the result, still is.
	hist, err = db.ScorecardHistory(ctx, c.admin, p.ID, c.pragmatist.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := pitches.PredictionAt(hist, first); !ok || v.Version != 1 {
		t.Errorf("the pre-result card is not the prediction: %+v %v", v, ok)
	}

	// The round is complete for the oracle once they vote (the ranking is
	// votes first): the ranking shows, the card counts.
	if _, err := db.CastVote(ctx, c.oracle, 1, pitches.VoteInput{PitchID: q.ID, Justification: "tiles"}); err != nil {
		t.Fatal(err)
	}
	st, err = db.Standings(ctx, c.oracle, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !st.RanksShown {
		t.Error("the oracle has scored every pitch but the ranking stays withheld")
	}
	for _, r := range st.Pitches {
		if r.PitchID == p.ID && r.Scorecards != 2 {
			t.Errorf("pitch %d counts %d scorecards, want 2", p.ID, r.Scorecards)
		}
	}

	// Now the late estimate is locked: a change is refused, scores may move.
	before = dump(t, db)
	_, err = db.SubmitScorecard(ctx, c.oracle, p.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 0.7, Hi: 0.9}})
	wantErr(t, err, pitches.ECONFLICT, "estimate")
	if dump(t, db) != before {
		t.Fatal("a refused estimate change changed the database")
	}
	scores["risk"] = 5
	if _, err := db.SubmitScorecard(ctx, c.oracle, p.ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 0.7, Hi: 0.8}}); err != nil {
		t.Fatalf("score correction with the same estimate: %v", err)
	}
}

// A version stored once a result exists is dated after it even when the
// clock has not moved since the run was stored (or went back): a version
// dated at the result's own instant would count as before it and be scored
// as a prediction.
func TestLateScorecardDatedAfterTheResultOnAStillClock(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return t0 }
	run := importResult(t, db, c.admin, p.ID, "pipeline_stages", runner.StatusSucceeded)
	db.Now = func() time.Time { return t0.Add(-time.Minute) } // the clock stepped back
	late, err := db.SubmitScorecard(ctx, c.oracle, p.ID, pitches.ScorecardInput{
		Scores: map[string]float64{"speedup": 7, "feasibility": 9, "risk": 8, "pitch_quality": 8}, Estimate: pitches.Range{Lo: 1, Hi: 1.1}})
	if err != nil {
		t.Fatal(err)
	}
	first := run.FinishedAt
	if first.IsZero() {
		first = run.CreatedAt
	}
	if !first.Equal(t0) || !late.CreatedAt.After(first) {
		t.Fatalf("result at %v, late card at %v: want the card after it", first, late.CreatedAt)
	}
	if _, ok := pitches.PredictionAt([]pitches.Scorecard{*late}, first); ok {
		t.Fatal("the late card is scored as a prediction")
	}
}
