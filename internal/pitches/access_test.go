package pitches

import (
	"testing"
	"time"
)

// The role x action matrix: every action against every role, in the states
// that matter. "" means allowed.
func TestCanMatrix(t *testing.T) {
	admin := &User{ID: 1, Role: RoleAdmin}
	shark := &User{ID: 2, Role: RoleShark}
	owner := &User{ID: 3, Role: RoleContestant}
	other := &User{ID: 4, Role: RoleContestant}
	viewer := &User{ID: 5, Role: RoleViewer}
	users := []struct {
		name string
		u    *User
	}{{"anon", nil}, {"admin", admin}, {"shark", shark}, {"owner", owner}, {"other", other}, {"viewer", viewer}}

	round := func(s RoundStatus) *Round { return &Round{Number: 1, Status: s} }
	importing := func(s RoundStatus) *Round {
		return &Round{Number: 1, Status: s, Measurement: RoundMeasurement{Problem: "p", AllowImports: true}}
	}
	pitch := &Pitch{ID: 10, RoundNumber: 1, ContestantID: owner.ID, Status: PitchActive}
	withdrawn := &Pitch{ID: 11, RoundNumber: 1, ContestantID: owner.ID, Status: PitchWithdrawn}
	sharkPitch := &Pitch{ID: 12, RoundNumber: 1, ContestantID: shark.ID, Status: PitchActive}
	otherRound := &Pitch{ID: 13, RoundNumber: 2, ContestantID: owner.ID, Status: PitchActive}
	queued := &RunFacts{ID: 20, Status: "queued", RequestedBy: owner.ID}
	nobodys := &RunFacts{ID: 21, Status: "queued"}
	failed := &RunFacts{ID: 22, Status: "failed", RequestedBy: owner.ID, Finished: true, Retryable: true}
	imported := &RunFacts{ID: 23, Status: "failed", Finished: true, Imported: true, Retryable: true}
	pitchRunning := &RunFacts{ID: 24, Status: "running", RequestedBy: owner.ID, Running: true, OfPitch: true}
	pitchQueued := &RunFacts{ID: 25, Status: "queued", RequestedBy: owner.ID, OfPitch: true}
	running := &RunFacts{ID: 26, Status: "running", RequestedBy: owner.ID, Running: true}

	const (
		ok = ""
		U  = EUNAUTHORIZED
		F  = EFORBIDDEN
		C  = ECONFLICT
		I  = EINVALID
	)
	cases := []struct {
		name   string
		action Action
		target Target
		want   [6]string // anon, admin, shark, owner, other, viewer
	}{
		{"read open round", ActReadRound, Target{Round: round(RoundJudging)}, [6]string{ok, ok, ok, ok, ok, ok}},
		{"create round", ActCreateRound, Target{}, [6]string{U, ok, F, F, F, F}},
		{"manage users", ActManageUsers, Target{}, [6]string{U, ok, F, F, F, F}},
		{"read the audit log", ActReadAudit, Target{}, [6]string{U, ok, F, F, F, F}},
		{"manage webhooks and thresholds", ActManageAlerts, Target{}, [6]string{U, ok, F, F, F, F}},
		{"edit rubric pitching", ActEditRound, Target{Round: round(RoundPitching)}, [6]string{U, ok, F, F, F, F}},
		{"edit rubric judging", ActEditRound, Target{Round: round(RoundJudging)}, [6]string{U, C, F, F, F, F}},
		{"advance pitching->judging", ActAdvanceRound, Target{Round: round(RoundPitching), NextStatus: RoundJudging}, [6]string{U, ok, F, F, F, F}},
		{"advance judging->closed", ActAdvanceRound, Target{Round: round(RoundJudging), NextStatus: RoundClosed}, [6]string{U, ok, F, F, F, F}},
		// A closed round's results stay as they are: no run of its pitches may still be in flight.
		{"close with runs in flight", ActAdvanceRound, Target{Round: round(RoundJudging), NextStatus: RoundClosed, InFlight: []int64{4, 7}}, [6]string{U, C, F, F, F, F}},
		{"to judging with runs in flight", ActAdvanceRound, Target{Round: round(RoundPitching), NextStatus: RoundJudging, InFlight: []int64{4}}, [6]string{U, ok, F, F, F, F}},
		{"skip pitching->closed", ActAdvanceRound, Target{Round: round(RoundPitching), NextStatus: RoundClosed}, [6]string{U, C, F, F, F, F}},
		{"back judging->pitching", ActAdvanceRound, Target{Round: round(RoundJudging), NextStatus: RoundPitching}, [6]string{U, C, F, F, F, F}},
		{"reopen closed", ActAdvanceRound, Target{Round: round(RoundClosed), NextStatus: RoundJudging}, [6]string{U, C, F, F, F, F}},
		{"file while pitching", ActFilePitch, Target{Round: round(RoundPitching)}, [6]string{U, ok, ok, ok, ok, F}},
		{"file while judging", ActFilePitch, Target{Round: round(RoundJudging)}, [6]string{U, C, C, C, C, F}},
		{"edit while pitching", ActEditPitch, Target{Round: round(RoundPitching), Pitch: pitch}, [6]string{U, F, F, ok, F, F}},
		{"edit while judging", ActEditPitch, Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, F, F, C, F, F}},
		{"withdraw while judging", ActWithdrawPitch, Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, ok, F, ok, F, F}},
		{"withdraw when closed", ActWithdrawPitch, Target{Round: round(RoundClosed), Pitch: pitch}, [6]string{U, C, F, C, F, F}},
		{"withdraw twice", ActWithdrawPitch, Target{Round: round(RoundPitching), Pitch: withdrawn}, [6]string{U, C, F, C, F, F}},
		{"score while judging", ActScore, Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, F, ok, F, F, F}},
		{"score while pitching", ActScore, Target{Round: round(RoundPitching), Pitch: pitch}, [6]string{U, F, C, F, F, F}},
		{"score when closed", ActScore, Target{Round: round(RoundClosed), Pitch: pitch}, [6]string{U, F, C, F, F, F}},
		{"score withdrawn", ActScore, Target{Round: round(RoundJudging), Pitch: withdrawn}, [6]string{U, F, C, F, F, F}},
		{"score own", ActScore, Target{Round: round(RoundJudging), Pitch: sharkPitch}, [6]string{U, F, C, F, F, F}},
		{"weights while pitching", ActSetWeights, Target{Round: round(RoundPitching)}, [6]string{U, F, ok, F, F, F}},
		{"weights after a card", ActSetWeights, Target{Round: round(RoundJudging), HasScored: true}, [6]string{U, F, C, F, F, F}},
		{"weights when closed", ActSetWeights, Target{Round: round(RoundClosed)}, [6]string{U, F, C, F, F, F}},
		{"vote while judging", ActVote, Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, F, ok, F, F, F}},
		{"vote when closed", ActVote, Target{Round: round(RoundClosed), Pitch: pitch}, [6]string{U, F, C, F, F, F}},
		{"vote while pitching", ActVote, Target{Round: round(RoundPitching), Pitch: pitch}, [6]string{U, F, C, F, F, F}},
		{"vote other round's pitch", ActVote, Target{Round: round(RoundJudging), Pitch: otherRound}, [6]string{U, F, I, F, F, F}},
		{"vote withdrawn", ActVote, Target{Round: round(RoundJudging), Pitch: withdrawn}, [6]string{U, F, C, F, F, F}},
		{"vote own", ActVote, Target{Round: round(RoundJudging), Pitch: sharkPitch}, [6]string{U, F, C, F, F, F}},
		// Imports: admin while open; the owner only where the round allows imports; never on a closed round.
		{"import pitching, imports allowed", ActImportRun, Target{Round: importing(RoundPitching), Pitch: pitch}, [6]string{U, ok, F, ok, F, F}},
		{"import judging, imports allowed", ActImportRun, Target{Round: importing(RoundJudging), Pitch: pitch}, [6]string{U, ok, F, ok, F, F}},
		{"import closed, imports allowed", ActImportRun, Target{Round: importing(RoundClosed), Pitch: pitch}, [6]string{U, C, F, C, F, F}},
		{"import judging, imports not allowed", ActImportRun, Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, ok, F, F, F, F}},
		{"import no pitch", ActImportRun, Target{}, [6]string{U, ok, F, F, F, F}},
		{"accept suspect run", ActAcceptRun, Target{}, [6]string{U, ok, F, F, F, F}},
		{"accept a run of a judging round's pitch", ActAcceptRun, Target{Round: round(RoundJudging)}, [6]string{U, ok, F, F, F, F}},
		{"accept a run of a closed round's pitch", ActAcceptRun, Target{Round: round(RoundClosed)}, [6]string{U, C, F, F, F, F}},
		{"set a round's measurement", ActSetMeasure, Target{}, [6]string{U, ok, F, F, F, F}},
		{"re-pitch", ActRepitch, Target{Pitch: pitch}, [6]string{F, ok, F, ok, F, F}},
		{"revoke the owner's token", ActRevokeToken, Target{TokenOwner: owner.ID}, [6]string{U, ok, F, ok, F, F}},
		// Runs: a contestant measures only their own pitch; viewers never start one.
		{"launch on no pitch", ActLaunchRun, Target{}, [6]string{U, ok, ok, ok, ok, F}},
		{"launch on a pitch", ActLaunchRun, Target{Pitch: pitch, Round: round(RoundJudging)}, [6]string{U, ok, ok, ok, F, F}},
		{"launch on a shark's pitch", ActLaunchRun, Target{Pitch: sharkPitch, Round: round(RoundPitching)}, [6]string{U, ok, ok, F, F, F}},
		{"launch on a closed round's pitch", ActLaunchRun, Target{Pitch: pitch, Round: round(RoundClosed)}, [6]string{U, C, C, C, F, F}},
		{"launch on a pitch, its round not given", ActLaunchRun, Target{Pitch: pitch}, [6]string{U, EINTERNAL, EINTERNAL, EINTERNAL, F, F}},
		{"cancel the owner's queued run", ActCancelRun, Target{Run: queued}, [6]string{F, ok, F, ok, F, F}},
		// Once a pitch's run measures, its requester sees its figures: only an admin stops it then.
		{"cancel the owner's queued pitch run", ActCancelRun, Target{Run: pitchQueued}, [6]string{F, ok, F, ok, F, F}},
		{"cancel the owner's running pitch run", ActCancelRun, Target{Run: pitchRunning}, [6]string{F, ok, F, F, F, F}},
		{"cancel the owner's running run of no pitch", ActCancelRun, Target{Run: running}, [6]string{F, ok, F, ok, F, F}},
		{"cancel nobody's queued run", ActCancelRun, Target{Run: nobodys}, [6]string{F, ok, F, F, F, F}},
		// Who may cancel before the state: the others' refusal tells no run's outcome.
		{"cancel a finished run", ActCancelRun, Target{Run: failed}, [6]string{F, C, F, C, F, F}},
		{"repeat a failed run", ActRepeatRun, Target{Run: failed}, [6]string{U, ok, ok, ok, ok, F}},
		{"repeat a queued run", ActRepeatRun, Target{Run: queued}, [6]string{U, C, C, C, C, F}},
		{"repeat an imported run", ActRepeatRun, Target{Run: imported}, [6]string{U, C, C, C, C, F}},
	}
	for _, tc := range cases {
		for i, u := range users {
			got := ErrorCode(Can(u.u, tc.action, tc.target))
			if got != tc.want[i] {
				t.Errorf("%s as %s: got %q, want %q", tc.name, u.name, got, tc.want[i])
			}
		}
	}
	// A missing target is an internal error, not a panic.
	if got := ErrorCode(Can(shark, ActScore, Target{})); got != EINTERNAL {
		t.Errorf("missing target: %q", got)
	}
	if got := ErrorCode(Can(admin, ActCancelRun, Target{})); got != EINTERNAL {
		t.Errorf("missing run: %q", got)
	}
	if got := ErrorCode(Can(shark, "fly", Target{})); got != EINTERNAL {
		t.Errorf("unknown action: %q", got)
	}
}

func TestVisibility(t *testing.T) {
	open := &Round{Status: RoundJudging}
	closed := &Round{Status: RoundClosed}
	shark := &User{ID: 2, Role: RoleShark}
	for _, tc := range []struct {
		name         string
		u            *User
		r            *Round
		did          bool
		cards, votes bool
		winner       bool
	}{
		{"shark before", shark, open, false, false, false, false},
		{"shark after", shark, open, true, true, true, true}, // did: scored every pitch
		{"admin open", &User{Role: RoleAdmin}, open, false, true, true, true},
		{"contestant open", &User{Role: RoleContestant}, open, true, false, false, false},
		{"viewer open", &User{Role: RoleViewer}, open, false, false, false, false},
		{"anon open", nil, open, false, false, false, false},
		{"anon closed", nil, closed, false, true, true, true},
		{"shark closed", shark, closed, false, true, true, true},
	} {
		if got := CanSeeScorecards(tc.u, tc.r, tc.did); got != tc.cards {
			t.Errorf("%s: cards %v, want %v", tc.name, got, tc.cards)
		}
		if got := CanSeeVotes(tc.u, tc.r, tc.did); got != tc.votes {
			t.Errorf("%s: votes %v, want %v", tc.name, got, tc.votes)
		}
		if got := CanSeeWinner(tc.u, tc.r, tc.did); got != tc.winner {
			t.Errorf("%s: winner %v, want %v", tc.name, got, tc.winner)
		}
	}
}

func TestWeightedTotalSeeds(t *testing.T) {
	r1 := map[string]int{"s": 40, "f": 25, "r": 20, "q": 15}
	for i, tc := range []struct {
		s    [4]float64
		want float64
	}{{[4]float64{7, 9, 8, 8}, 7.85}, {[4]float64{5, 6, 6, 7}, 5.75}, {[4]float64{6, 7, 7, 8}, 6.75}, {[4]float64{6, 4, 4, 7}, 5.25}} {
		got := WeightedTotal(r1, map[string]float64{"s": tc.s[0], "f": tc.s[1], "r": tc.s[2], "q": tc.s[3]})
		if d := got - tc.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("round 1 card %d: %.4f, want %.2f", i+1, got, tc.want)
		}
	}
	r2 := map[string]int{"s": 35, "k": 25, "f": 20, "r": 20, "q": 0}
	for i, tc := range []struct {
		s    [4]float64
		want float64
	}{{[4]float64{2, 8, 9, 3}, 5.10}, {[4]float64{8.5, 9.5, 8, 9}, 8.75}, {[4]float64{5, 7, 7, 8}, 6.50}, {[4]float64{4, 8, 4, 6}, 5.40}} {
		got := WeightedTotal(r2, map[string]float64{"s": tc.s[0], "k": tc.s[1], "f": tc.s[2], "r": tc.s[3], "q": 10})
		if d := got - tc.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("round 2 card %d: %.4f, want %.2f", i+1, got, tc.want)
		}
	}
}

func TestComputeStandingsWithdrawnAndHidden(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ps := []Pitch{
		{ID: 1, Title: "A", Status: PitchWithdrawn, CreatedAt: t0},
		{ID: 2, Title: "B", Status: PitchActive, CreatedAt: t0.Add(time.Second)},
		{ID: 3, Title: "C", Status: PitchActive, CreatedAt: t0.Add(2 * time.Second)},
	}
	cards := []Scorecard{{PitchID: 1, SharkID: 9, Total: 9}, {PitchID: 2, SharkID: 9, Total: 5}, {PitchID: 3, SharkID: 9, Total: 6},
		{PitchID: 99, SharkID: 9, Total: 1}} // a card for a pitch not in the round is ignored
	votes := []Vote{{PitchID: 1, SharkID: 9}, {PitchID: 1, SharkID: 8}, {PitchID: 2, SharkID: 7}}
	st := ComputeStandings(&Round{Number: 2, Status: RoundJudging}, ps, cards, votes)
	// A has the most votes but is withdrawn: B wins, and withdrawn rows go last.
	if st.WinnerID != 2 || st.DecidedBy != DecidedByVotes {
		t.Fatalf("winner %d by %q, want B by votes", st.WinnerID, st.DecidedBy)
	}
	if got := st.Pitches[0].Title + st.Pitches[1].Title + st.Pitches[2].Title; got != "BCA" {
		t.Errorf("order %s, want BCA", got)
	}
	shark := &User{ID: 9, Role: RoleShark}
	ApplyVisibility(&st, shark, &Round{Status: RoundJudging}, map[int64]bool{3: true}, false)
	if st.WinnerID != 0 || st.DecidedBy != "" {
		t.Errorf("winner leaked to a shark in an open round")
	}
	for _, r := range st.Pitches {
		if r.Hidden != (r.PitchID != 3) || r.Votes != 0 {
			t.Errorf("row %s: hidden %v votes %d", r.Title, r.Hidden, r.Votes)
		}
		if r.Hidden && (r.MeanTotal != 0 || r.BiasCorrected != 0) {
			t.Errorf("hidden row %s keeps figures", r.Title)
		}
		// Shark 9's z-scores run over their cards on A and B too, which
		// this viewer may not see: C's bias-corrected figure would move
		// with them.
		if r.BiasCorrected != 0 {
			t.Errorf("row %s shows a bias-corrected score while rows are hidden: %v", r.Title, r.BiasCorrected)
		}
	}
	if got := st.Pitches[0].Title + st.Pitches[1].Title + st.Pitches[2].Title; got != "ABC" {
		t.Errorf("withheld ranking should fall back to filing order, got %s", got)
	}
	if !st.BiasWithheld || !st.VotesWithheld {
		t.Errorf("the zeroed bias-corrected scores and votes are not marked withheld: %v %v", st.BiasWithheld, st.VotesWithheld)
	}
	empty := ComputeStandings(nil, nil, nil, nil)
	if empty.WinnerID != 0 || empty.DecidedBy != DecidedByNoVotes {
		t.Errorf("empty standings %+v", empty)
	}
}

// CanRole is the role column of Can alone: what a role may do on some target.
func TestCanRole(t *testing.T) {
	cases := []struct {
		u      *User
		action Action
		want   string
	}{
		{nil, ActImportRun, EUNAUTHORIZED},
		{&User{ID: 1, Role: RoleAdmin}, ActImportRun, ""},
		{&User{ID: 2, Role: RoleContestant}, ActImportRun, ""}, // on their own pitch, where the round allows it
		{&User{ID: 3, Role: RoleShark}, ActImportRun, EFORBIDDEN},
		{&User{ID: 4, Role: RoleViewer}, ActImportRun, EFORBIDDEN},
		{&User{ID: 5, Role: RoleViewer}, "fly", EINTERNAL},
	}
	for _, tc := range cases {
		err := CanRole(tc.u, tc.action)
		if got := ErrorCode(err); got != tc.want || (tc.want == "") != (err == nil) {
			t.Errorf("%v %s: got %v (%q), want %q", tc.u, tc.action, err, got, tc.want)
		}
	}
}

// Wherever CanSeeResults answers differently for a viewer who scored the
// pitch, ResultsDependOnScoring must say so: a caller that skips reading
// the scorecards otherwise hides results from a shark who scored.
func TestResultsDependOnScoring(t *testing.T) {
	viewers := []*User{nil, {ID: 1, Role: RoleAdmin}, {ID: 2, Role: RoleShark}, {ID: 3, Role: RoleContestant}, {ID: 4, Role: RoleViewer}}
	pitchesOf := []*Pitch{nil, {ID: 10, ContestantID: 3}, {ID: 11, ContestantID: 2}}
	depends := 0
	for _, st := range []RoundStatus{RoundPitching, RoundJudging, RoundClosed} {
		round := &Round{Number: 1, Status: st}
		for _, v := range viewers {
			for _, p := range pitchesOf {
				if CanSeeResults(v, round, p, true) != CanSeeResults(v, round, p, false) {
					depends++
					if !ResultsDependOnScoring(v, round) {
						t.Errorf("viewer %v, round %s, pitch %v: the answer depends on scoring, ResultsDependOnScoring says no", v, st, p)
					}
				}
			}
		}
	}
	if depends == 0 {
		t.Fatal("no case where scoring matters: the test checks nothing")
	}
	if ResultsDependOnScoring(&User{ID: 2, Role: RoleShark}, &Round{Status: RoundClosed}) {
		t.Error("a closed round shows everyone everything: scoring cannot matter")
	}
}

func TestCheckRoleChange(t *testing.T) {
	admin := &User{ID: 1, Login: "ada", Role: RoleAdmin}
	shark := &User{ID: 2, Login: "sam", Role: RoleShark}
	cases := []struct {
		u      *User
		to     Role
		admins int
		want   string
	}{
		{admin, RoleShark, 1, ECONFLICT}, // the last admin
		{admin, RoleShark, 2, ""},
		{admin, RoleAdmin, 1, ""},
		{shark, RoleViewer, 0, ""}, // no admin taken away: the count is not read
		{shark, RoleAdmin, 1, ""},
	}
	for _, tc := range cases {
		if got := ErrorCode(CheckRoleChange(tc.u, tc.to, tc.admins)); got != tc.want {
			t.Errorf("%s %s -> %s with %d admins: got %q, want %q", tc.u.Login, tc.u.Role, tc.to, tc.admins, got, tc.want)
		}
	}
	if !DemotesAdmin(admin, RoleViewer) || DemotesAdmin(admin, RoleAdmin) || DemotesAdmin(shark, RoleViewer) {
		t.Error("DemotesAdmin: only an admin given another role is demoted")
	}
}

func TestCanSeeScorecard(t *testing.T) {
	judging := &Round{Number: 1, Status: RoundJudging}
	shark := &User{ID: 2, Role: RoleShark}
	if !CanSeeScorecard(shark, judging, shark.ID, false) {
		t.Error("a shark's own card is hidden from them before they scored")
	}
	if CanSeeScorecard(shark, judging, 7, false) {
		t.Error("another shark's card shows to a shark who has not scored")
	}
	if !CanSeeScorecard(shark, judging, 7, true) {
		t.Error("another shark's card stays hidden from a shark who scored")
	}
	if CanSeeScorecard(nil, judging, 0, false) {
		t.Error("an anonymous visitor sees a card of nobody (shark id 0) in an open round")
	}
	if !CanSeeScorecard(nil, &Round{Number: 1, Status: RoundClosed}, 7, false) {
		t.Error("a closed round's cards are hidden")
	}
}
