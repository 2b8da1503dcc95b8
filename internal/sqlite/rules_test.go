package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// judgingRound: round 1 with the round-1 rubric, pitches by contestants 1
// and 2, in judging.
func judgingRound(t *testing.T) (*DB, cast, []*pitches.Pitch) {
	t.Helper()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	ps := []*pitches.Pitch{
		mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8),
		mustPitch(t, db, c.c[2], 1, "Tile Size Tuning", 1.8, 2.5),
	}
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	return db, c, ps
}

func TestHiddenScorecardsAndVotes(t *testing.T) {
	db, c, ps := judgingRound(t)
	ctx := context.Background()
	a := ps[0].ID
	mustScore(t, db, c.oracle, a, sc(r1Keys, 8, 8, 8, 8))

	visible := func(viewer *pitches.User) (int, int) {
		t.Helper()
		cards, hidden, err := db.VisibleScorecards(ctx, viewer, a)
		if err != nil {
			t.Fatal(err)
		}
		return len(cards), hidden
	}
	// Before the Pragmatist scores: he sees nothing, the Oracle sees his own.
	if n, h := visible(c.pragmatist); n != 0 || h != 1 {
		t.Errorf("unscored shark sees %d cards (%d hidden), want 0 (1)", n, h)
	}
	if n, h := visible(c.oracle); n != 1 || h != 0 {
		t.Errorf("oracle sees %d cards (%d hidden), want own 1 (0)", n, h)
	}
	if _, err := db.ScorecardHistory(ctx, c.pragmatist, a, c.oracle.ID); pitches.ErrorCode(err) != pitches.EFORBIDDEN {
		t.Errorf("unscored shark reading another's history: %v, want forbidden", err)
	}
	mustScore(t, db, c.pragmatist, a, sc(r1Keys, 6, 6, 6, 6))
	for _, tc := range []struct {
		name       string
		viewer     *pitches.User
		seen, hide int
	}{
		{"pragmatist after scoring", c.pragmatist, 2, 0},
		{"oracle", c.oracle, 2, 0},
		{"admin", c.admin, 2, 0},
		{"contestant", c.c[1], 0, 2},
		{"viewer", c.viewer, 0, 2},
		{"anonymous", nil, 0, 2},
	} {
		if n, h := visible(tc.viewer); n != tc.seen || h != tc.hide {
			t.Errorf("open round, %s sees %d (%d hidden), want %d (%d)", tc.name, n, h, tc.seen, tc.hide)
		}
	}

	// Standings in the open round: the Oracle has scored A only.
	st, err := db.Standings(ctx, c.oracle, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range st.Pitches {
		if hidden := row.PitchID != a; row.Hidden != hidden {
			t.Errorf("oracle: row %s Hidden=%v, want %v", row.Title, row.Hidden, hidden)
		}
		if row.PitchID == a && !near(row.MeanTotal, 7) {
			t.Errorf("oracle: row A mean %.3f, want 7", row.MeanTotal)
		}
	}
	if st.WinnerID != 0 || st.DecidedBy != "" {
		t.Errorf("open round: winner shown to a shark: %d %q", st.WinnerID, st.DecidedBy)
	}
	for _, v := range []*pitches.User{nil, c.c[1], c.viewer} {
		st, err := db.Standings(ctx, v, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range st.Pitches {
			if !row.Hidden || row.MeanTotal != 0 || row.Votes != 0 {
				t.Errorf("open round, %v: row %s not hidden: %+v", v, row.Title, row)
			}
		}
	}

	// Votes: hidden from a shark until they vote.
	mustVote(t, db, c.oracle, 1, a)
	if vs, _ := db.VisibleVotes(ctx, c.pragmatist, 1); len(vs) != 0 {
		t.Errorf("pragmatist sees %d votes before voting", len(vs))
	}
	if vs, _ := db.VisibleVotes(ctx, c.admin, 1); len(vs) != 1 {
		t.Errorf("admin sees %d votes, want 1", len(vs))
	}
	mustVote(t, db, c.pragmatist, 1, ps[1].ID)
	if vs, _ := db.VisibleVotes(ctx, c.pragmatist, 1); len(vs) != 2 {
		t.Errorf("pragmatist sees %d votes after voting, want 2", len(vs))
	}
	for _, v := range []*pitches.User{nil, c.c[1], c.viewer} {
		if vs, _ := db.VisibleVotes(ctx, v, 1); len(vs) != 0 {
			t.Errorf("%v sees %d votes in an open round", v, len(vs))
		}
	}
	st, _ = db.Standings(ctx, c.admin, 1)
	if st.WinnerID != a || st.DecidedBy != pitches.DecidedByMeanTotal {
		t.Errorf("admin: winner %d by %q, want %d by mean", st.WinnerID, st.DecidedBy, a)
	}

	// Closed: everyone sees everything.
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	for _, v := range []*pitches.User{nil, c.c[2], c.viewer, c.oracle} {
		if n, h := visible(v); n != 2 || h != 0 {
			t.Errorf("closed round: %v sees %d cards (%d hidden)", v, n, h)
		}
		if vs, _ := db.VisibleVotes(ctx, v, 1); len(vs) != 2 {
			t.Errorf("closed round: %v sees %d votes", v, len(vs))
		}
		st, _ := db.Standings(ctx, v, 1)
		if st.WinnerID != a {
			t.Errorf("closed round: %v sees winner %d", v, st.WinnerID)
		}
	}
}

// The role x action matrix through the service: each row starts from a
// fresh database where round 1 is pitching (file, set weights, advance,
// create round) or judging (score, vote).
func TestRoleActionMatrix(t *testing.T) {
	type roleOf func(c cast) *pitches.User
	roles := map[string]roleOf{
		"anonymous":  func(c cast) *pitches.User { return nil },
		"admin":      func(c cast) *pitches.User { return c.admin },
		"shark":      func(c cast) *pitches.User { return c.oracle },
		"contestant": func(c cast) *pitches.User { return c.c[3] },
		"viewer":     func(c cast) *pitches.User { return c.viewer },
	}
	ctx := context.Background()
	actions := []struct {
		name    string
		judging bool
		do      func(db *DB, u *pitches.User, ps []*pitches.Pitch) error
		want    map[string]string // role -> code ("" = allowed)
	}{
		{"file pitch", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			_, err := db.FilePitch(ctx, u, pitches.PitchInput{RoundNumber: 1, Title: "x", Claim: pitches.Range{Lo: 1, Hi: 1}})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": "", "contestant": "", "viewer": pitches.EFORBIDDEN}},
		{"edit another's pitch", false, func(db *DB, u *pitches.User, ps []*pitches.Pitch) error {
			// ps[0] is contestant 1's; nobody in the matrix owns it.
			_, err := db.EditPitch(ctx, u, ps[0].ID, pitches.PitchInput{Title: "y", Claim: pitches.Range{Lo: 1, Hi: 1}})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": pitches.EFORBIDDEN, "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"withdraw another's pitch", true, func(db *DB, u *pitches.User, ps []*pitches.Pitch) error {
			_, err := db.WithdrawPitch(ctx, u, ps[0].ID)
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"score", true, func(db *DB, u *pitches.User, ps []*pitches.Pitch) error {
			_, err := db.SubmitScorecard(ctx, u, ps[0].ID, pitches.ScorecardInput{Scores: sc(r1Keys, 5, 5, 5, 5), Estimate: pitches.Range{Lo: 1, Hi: 1}})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": pitches.EFORBIDDEN, "shark": "", "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"vote", true, func(db *DB, u *pitches.User, ps []*pitches.Pitch) error {
			_, err := db.CastVote(ctx, u, 1, pitches.VoteInput{PitchID: ps[0].ID, Justification: "x"})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": pitches.EFORBIDDEN, "shark": "", "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"set weights", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			return db.SetPersonalWeights(ctx, u, 1, map[string]int{"speedup": 25, "feasibility": 25, "risk": 25, "pitch_quality": 25})
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": pitches.EFORBIDDEN, "shark": "", "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"advance round", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			_, err := db.SetRoundStatus(ctx, u, 1, pitches.RoundJudging)
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"create round", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			_, err := db.CreateRound(ctx, u, pitches.RoundInput{Number: 2, Title: "r2", Criteria: round1Rubric})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"edit rubric", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			_, err := db.UpdateRound(ctx, u, 1, pitches.RoundInput{Title: "r1", Criteria: round1Rubric})
			return err
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"set user role", false, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			users, _ := db.Users(ctx)
			return db.SetUserRole(ctx, u, users[len(users)-1].ID, pitches.RoleShark)
		}, map[string]string{"anonymous": pitches.EUNAUTHORIZED, "admin": "", "shark": pitches.EFORBIDDEN, "contestant": pitches.EFORBIDDEN, "viewer": pitches.EFORBIDDEN}},
		{"read standings", true, func(db *DB, u *pitches.User, _ []*pitches.Pitch) error {
			_, err := db.Standings(ctx, u, 1)
			return err
		}, map[string]string{"anonymous": "", "admin": "", "shark": "", "contestant": "", "viewer": ""}},
	}
	for _, a := range actions {
		for role, who := range roles {
			t.Run(a.name+"/"+role, func(t *testing.T) {
				db := MustOpenDB(t)
				c := mustCast(t, db)
				mustRound(t, db, c.admin, 1, round1Rubric)
				ps := []*pitches.Pitch{mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)}
				if a.judging {
					mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
				}
				before := dump(t, db)
				err := a.do(db, who(c), ps)
				want := a.want[role]
				if got := pitches.ErrorCode(err); got != want {
					t.Fatalf("%s as %s: code %q, want %q (%v)", a.name, role, got, want, err)
				}
				if want != "" && dump(t, db) != before {
					t.Fatalf("%s as %s was refused but changed the database", a.name, role)
				}
			})
		}
	}
}

func TestRoundStatusOneWayOneStep(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	_, err := db.SetRoundStatus(ctx, c.admin, 1, pitches.RoundClosed)
	wantErr(t, err, pitches.ECONFLICT, "status")
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	_, err = db.SetRoundStatus(ctx, c.admin, 1, pitches.RoundPitching)
	wantErr(t, err, pitches.ECONFLICT, "status")
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	_, err = db.SetRoundStatus(ctx, c.admin, 1, pitches.RoundJudging)
	wantErr(t, err, pitches.ECONFLICT, "status")
	_, err = db.SetRoundStatus(ctx, c.admin, 1, "open")
	wantErr(t, err, pitches.EINVALID, "status")
	_, err = db.SetRoundStatus(ctx, c.admin, 9, pitches.RoundJudging)
	wantErr(t, err, pitches.ENOTFOUND, "round")
}

func TestFrozenRubricAndPersonalWeights(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	w1 := map[string]int{"speedup": 50, "feasibility": 20, "risk": 20, "pitch_quality": 10}
	w2 := map[string]int{"speedup": 60, "feasibility": 20, "risk": 20, "pitch_quality": 0}
	if err := db.SetPersonalWeights(ctx, c.oracle, 1, w1); err != nil {
		t.Fatal(err)
	}
	// Rubric edits are fine while pitching.
	edited := append([]pitches.Criterion(nil), round1Rubric...)
	edited[0].Name = "Speedup (geomean)"
	if _, err := db.UpdateRound(ctx, c.admin, 1, pitches.RoundInput{Title: "Round 1", Criteria: edited}); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	before := dump(t, db)
	_, err := db.UpdateRound(ctx, c.admin, 1, pitches.RoundInput{Title: "Round 1", Criteria: round1Rubric})
	wantErr(t, err, pitches.ECONFLICT, "")
	if dump(t, db) != before {
		t.Fatal("refused rubric edit changed the database")
	}
	// Personal weights may change until the first scorecard...
	if err := db.SetPersonalWeights(ctx, c.oracle, 1, w2); err != nil {
		t.Fatalf("change weights before scoring: %v", err)
	}
	card := mustScore(t, db, c.oracle, p.ID, sc(r1Keys, 10, 0, 0, 0))
	if !near(card.Total, 6) {
		t.Errorf("total with personal weights %.3f, want 6", card.Total)
	}
	// ...and are frozen after it.
	before = dump(t, db)
	err = db.SetPersonalWeights(ctx, c.oracle, 1, w1)
	wantErr(t, err, pitches.ECONFLICT, "weights")
	if dump(t, db) != before {
		t.Fatal("refused weights change wrote something")
	}
	got, err := db.PersonalWeights(ctx, c.oracle.ID, 1)
	if err != nil || got["speedup"] != 60 {
		t.Fatalf("personal weights %v, %v; want the frozen 60/20/20/0", got, err)
	}
	if got, _ := db.PersonalWeights(ctx, c.pragmatist.ID, 1); got != nil {
		t.Errorf("pragmatist has weights %v, want nil", got)
	}
}

func TestVoteAndScorecardVersions(t *testing.T) {
	db, c, ps := judgingRound(t)
	ctx := context.Background()
	v1 := mustVote(t, db, c.oracle, 1, ps[0].ID)
	v2 := mustVote(t, db, c.oracle, 1, ps[1].ID)
	if v1.Version != 1 || v2.Version != 2 {
		t.Fatalf("vote versions %d, %d; want 1, 2", v1.Version, v2.Version)
	}
	vs, _ := db.VisibleVotes(ctx, c.oracle, 1)
	if len(vs) != 1 || vs[0].PitchID != ps[1].ID {
		t.Fatalf("current vote %+v, want one vote for pitch %d", vs, ps[1].ID)
	}
	hist, err := db.VoteHistory(ctx, c.oracle, 1, c.oracle.ID)
	if err != nil || len(hist) != 2 || hist[0].PitchID != ps[0].ID {
		t.Fatalf("vote history %+v, %v; want both versions", hist, err)
	}

	s1 := mustScore(t, db, c.oracle, ps[0].ID, sc(r1Keys, 5, 5, 5, 5))
	s2 := mustScore(t, db, c.oracle, ps[0].ID, sc(r1Keys, 6, 6, 6, 6))
	if s1.Version != 1 || s2.Version != 2 {
		t.Fatalf("scorecard versions %d, %d", s1.Version, s2.Version)
	}
	cards, _, _ := db.VisibleScorecards(ctx, c.oracle, ps[0].ID)
	if len(cards) != 1 || cards[0].Version != 2 || !near(cards[0].Total, 6) {
		t.Fatalf("current card %+v, want version 2 total 6", cards)
	}
	h, err := db.ScorecardHistory(ctx, c.oracle, ps[0].ID, c.oracle.ID)
	if err != nil || len(h) != 2 || !near(h[0].Total, 5) {
		t.Fatalf("scorecard history %+v, %v", h, err)
	}

	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	before := dump(t, db)
	_, err = db.CastVote(ctx, c.oracle, 1, pitches.VoteInput{PitchID: ps[0].ID, Justification: "changed my mind"})
	wantErr(t, err, pitches.ECONFLICT, "")
	if !strings.Contains(pitches.ErrorMessage(err), "closed") {
		t.Errorf("message %q does not say the round is closed", pitches.ErrorMessage(err))
	}
	if dump(t, db) != before {
		t.Fatal("refused vote wrote something")
	}
}
