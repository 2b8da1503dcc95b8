package pitches

import (
	"testing"
	"time"
)

// Ranks: # is the place by the rank rule, shared by rows the rule cannot
// separate; unjudged and withdrawn pitches are not ranked.
func TestStandingsRanks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	round := &Round{Number: 1, Status: RoundJudging, Criteria: []Criterion{{Key: "s", Name: "S", Weight: 100}}}
	ps := []Pitch{
		{ID: 1, Title: "A", Status: PitchActive, ContestantID: 10, CreatedAt: t0},
		{ID: 2, Title: "B", Status: PitchActive, ContestantID: 11, CreatedAt: t0.Add(time.Minute)},
		{ID: 3, Title: "C", Status: PitchActive, ContestantID: 12, CreatedAt: t0.Add(2 * time.Minute)},
		{ID: 4, Title: "D unscored", Status: PitchActive, ContestantID: 13, CreatedAt: t0.Add(3 * time.Minute)},
		{ID: 5, Title: "E withdrawn", Status: PitchWithdrawn, ContestantID: 13, CreatedAt: t0.Add(4 * time.Minute)},
	}
	card := func(pitch, shark int64, total float64) Scorecard {
		return Scorecard{PitchID: pitch, SharkID: shark, Total: total}
	}
	// A and C tie exactly (same totals, no votes); B is best.
	cards := []Scorecard{card(1, 100, 6), card(2, 100, 8), card(3, 100, 6), card(5, 100, 9)}
	st := ComputeStandings(round, ps, cards, nil)
	want := []struct {
		id   int64
		rank int
	}{{2, 1}, {1, 2}, {3, 2}, {4, 0}, {5, 0}}
	for i, w := range want {
		if r := st.Pitches[i]; r.PitchID != w.id || r.Rank != w.rank {
			t.Fatalf("row %d: pitch %d rank %d, want pitch %d rank %d (%+v)", i, r.PitchID, r.Rank, w.id, w.rank, st.Pitches)
		}
	}

	// A round nobody scored (round 6 of the demo): nothing is ranked.
	st = ComputeStandings(round, ps, nil, nil)
	for _, r := range st.Pitches {
		if r.Rank != 0 {
			t.Fatalf("unscored pitch %d ranked %d", r.PitchID, r.Rank)
		}
	}
}

// The winner and the ranking: a shark sees them once every row is open to
// them: they have scored every active pitch they may score and voted, and
// no pitch of their own is in the round (its hidden row's place would show
// between the ranks of the others); contestants and viewers when the round
// closes; admins always.
func TestWinnerVisibleToSharkWhoScoredEverything(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	round := &Round{Number: 1, Status: RoundJudging}
	owner := &User{ID: 100, Role: RoleShark} // files pitch 3
	judge := &User{ID: 102, Role: RoleShark}
	ps := []Pitch{
		{ID: 1, Status: PitchActive, ContestantID: 10, CreatedAt: t0},
		{ID: 2, Status: PitchActive, ContestantID: 11, CreatedAt: t0.Add(time.Minute)},
		{ID: 3, Status: PitchActive, ContestantID: owner.ID, CreatedAt: t0.Add(2 * time.Minute)},
		{ID: 4, Status: PitchWithdrawn, ContestantID: 12, CreatedAt: t0.Add(3 * time.Minute)},
	}
	cards := []Scorecard{{PitchID: 1, SharkID: 100, Total: 5}, {PitchID: 2, SharkID: 100, Total: 7}, {PitchID: 1, SharkID: 101, Total: 6},
		{PitchID: 3, SharkID: 101, Total: 1}}
	votes := []Vote{{SharkID: 101, PitchID: 2}}
	view := func(u *User, scored map[int64]bool, voted bool) Standings {
		st := ComputeStandings(round, ps, cards, votes)
		ApplyVisibility(&st, u, round, scored, voted)
		return st
	}
	withheld := func(st Standings) bool {
		for _, r := range st.Pitches {
			if r.Rank != 0 {
				return false
			}
		}
		return st.WinnerID == 0 && st.DecidedBy == "" && !st.RanksShown
	}
	if st := view(judge, map[int64]bool{1: true, 3: true}, true); !withheld(st) {
		t.Fatalf("shark with a pitch left to score sees the winner or ranks: %+v", st)
	}
	if st := view(judge, map[int64]bool{1: true, 2: true, 3: true}, false); !withheld(st) {
		t.Fatalf("shark who has not voted sees the winner or ranks, which are votes first: %+v", st)
	}
	if st := view(owner, map[int64]bool{1: true, 2: true}, true); !withheld(st) {
		t.Fatalf("shark with their own pitch in the round sees the ranks around its hidden row: %+v", st)
	}
	st := view(judge, map[int64]bool{1: true, 2: true, 3: true}, true)
	if st.WinnerID != 2 || !st.RanksShown || st.Pitches[0].PitchID != 2 || st.Pitches[0].Rank != 1 {
		t.Fatalf("shark who scored every pitch and voted: winner %d, ranks shown %v, rows %+v; want pitch 2 first and winning", st.WinnerID, st.RanksShown, st.Pitches)
	}
	for _, u := range []*User{{ID: 10, Role: RoleContestant}, {ID: 50, Role: RoleViewer}, nil} {
		if st := view(u, nil, false); st.WinnerID != 0 || st.RanksShown {
			t.Fatalf("%v sees the winner of an open round", u)
		}
	}
	if st := view(&User{ID: 1, Role: RoleAdmin}, nil, false); st.WinnerID != 2 {
		t.Fatalf("admin does not see the winner")
	}
	closed := &Round{Number: 1, Status: RoundClosed}
	st = ComputeStandings(closed, ps, cards, votes)
	ApplyVisibility(&st, nil, closed, nil, false)
	if st.WinnerID != 2 || !st.RanksShown {
		t.Fatalf("closed round: anonymous does not see the winner")
	}
}
