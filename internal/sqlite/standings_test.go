package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

func sc(keys []string, vals ...float64) map[string]float64 {
	m := map[string]float64{}
	for i, k := range keys {
		m[k] = vals[i]
	}
	return m
}

var r1Keys = []string{"speedup", "feasibility", "risk", "pitch_quality"}

// Round 1 as the Pragmatic Engineer scored it (seeds: round1-shark2), under
// 40/25/20/15. The app's totals are 7.85 / 5.75 / 6.75 / 5.25; the document's
// hand-typed 8.05 / 5.85 / 6.95 / 5.35 are kept as TypedTotal.
func TestRound1PragmatistTotalsAndUnanimousWinner(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	titles := []string{"Pipeline Stages", "Tile Size Tuning", "TMA Store Epilogue", "Warp Specialization"}
	claims := [][2]float64{{1.5, 1.8}, {1.8, 2.5}, {1.12, 1.15}, {1.25, 1.40}}
	var ps []*pitches.Pitch
	for i, title := range titles {
		ps = append(ps, mustPitch(t, db, c.c[i+1], 1, title, claims[i][0], claims[i][1]))
	}
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	scores := [][]float64{{7, 9, 8, 8}, {5, 6, 6, 7}, {6, 7, 7, 8}, {6, 4, 4, 7}}
	typed := []float64{8.05, 5.85, 6.95, 5.35}
	want := []float64{7.85, 5.75, 6.75, 5.25}
	for i, p := range ps {
		card, err := db.ImportScorecard(ctx, c.pragmatist, p.ID, pitches.ScorecardInput{
			Scores: sc(r1Keys, scores[i]...), Estimate: pitches.Range{Lo: 1.05, Hi: 1.12}, Verdict: "FUND"}, typed[i])
		if err != nil {
			t.Fatalf("import scorecard %d: %v", i, err)
		}
		if !near(card.Total, want[i]) {
			t.Errorf("%s: total %.4f, want %.2f", titles[i], card.Total, want[i])
		}
		if card.TypedTotal == nil || *card.TypedTotal != typed[i] {
			t.Errorf("%s: typed total %v, want %.2f kept", titles[i], card.TypedTotal, typed[i])
		}
		if card.Weights["speedup"] != 40 || card.Weights["pitch_quality"] != 15 {
			t.Errorf("%s: weights used %v, want the round's 40/25/20/15", titles[i], card.Weights)
		}
	}
	mustVote(t, db, c.oracle, 1, ps[0].ID)
	mustVote(t, db, c.pragmatist, 1, ps[0].ID)
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)

	st, err := db.Standings(ctx, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.WinnerID != ps[0].ID || st.DecidedBy != pitches.DecidedByVotes {
		t.Fatalf("winner %d by %q, want Pipeline Stages (%d) by votes", st.WinnerID, st.DecidedBy, ps[0].ID)
	}
	// Best first: Pipeline (2 votes), then by mean: TMA 6.75, Tile 5.75, Warp 5.25.
	order := []string{"Pipeline Stages", "TMA Store Epilogue", "Tile Size Tuning", "Warp Specialization"}
	for i, row := range st.Pitches {
		if row.Title != order[i] {
			t.Errorf("row %d = %s, want %s", i, row.Title, order[i])
		}
		if row.Hidden {
			t.Errorf("row %s hidden in a closed round", row.Title)
		}
	}
	if st.Pitches[0].Votes != 2 || !near(st.Pitches[0].MeanTotal, 7.85) || st.Pitches[0].Spread != 0 {
		t.Errorf("pipeline row %+v", st.Pitches[0])
	}
}

var r2Rubric = []pitches.Criterion{
	{Key: "speedup", Name: "Expected speedup", Weight: 30},
	{Key: "kernel_evidence", Name: "Kernel-specific evidence", Weight: 10},
	{Key: "feasibility", Name: "Feasibility", Weight: 25},
	{Key: "risk", Name: "Risk and testability", Weight: 30},
	{Key: "pitch_quality", Name: "Pitch quality", Weight: 5},
}
var r2Keys = []string{"speedup", "kernel_evidence", "feasibility", "risk", "pitch_quality"}

// Round 2 as the Oracle scored it (seeds: round2-shark1) with personal weights
// 35/25/20/20/0: 5.10 / 8.75 / 6.50 / 5.40 (typed: 4.2 / 8.7 / 6.5 / 5.3).
func TestRound2OraclePersonalWeights(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 2, r2Rubric)
	oracleW := map[string]int{"speedup": 35, "kernel_evidence": 25, "feasibility": 20, "risk": 20, "pitch_quality": 0}
	if err := db.SetPersonalWeights(ctx, c.oracle, 2, oracleW); err != nil {
		t.Fatal(err)
	}
	var ps []*pitches.Pitch
	for i := 1; i <= 4; i++ {
		ps = append(ps, mustPitch(t, db, c.c[i], 2, fmt.Sprintf("pitch %d", i), 1, 2))
	}
	mustStatus(t, db, c.admin, 2, pitches.RoundJudging)
	scores := [][]float64{{2, 8, 9, 3}, {8.5, 9.5, 8, 9}, {5, 7, 7, 8}, {4, 8, 4, 6}}
	want := []float64{5.10, 8.75, 6.50, 5.40}
	for i, p := range ps {
		s := sc([]string{"speedup", "kernel_evidence", "feasibility", "risk"}, scores[i]...)
		s["pitch_quality"] = 0
		card := mustScore(t, db, c.oracle, p.ID, s)
		if !near(card.Total, want[i]) {
			t.Errorf("pitch %d: total %.4f, want %.2f", i+1, card.Total, want[i])
		}
		if fmt.Sprint(card.Weights) != fmt.Sprint(oracleW) {
			t.Errorf("pitch %d: weights used %v, want the Oracle's %v", i+1, card.Weights, oracleW)
		}
	}
	// The Pragmatist has no personal weights: the round's defaults apply.
	card := mustScore(t, db, c.pragmatist, ps[1].ID, sc(r2Keys, 10, 10, 0, 0, 0))
	if !near(card.Total, 4.0) || card.Weights["speedup"] != 30 {
		t.Errorf("default-weight card: total %.4f weights %v, want 4.00 with the round defaults", card.Total, card.Weights)
	}
}

// tieRound sets up a round with one criterion weighted 100 (so a total is
// the score) and three sharks, files pitches A, B, C in that order, opens
// judging, and applies the given scores (shark index -> pitch index -> score).
func tieRound(t *testing.T, scores map[int]map[int]float64, votes map[int]int) (*DB, []*pitches.Pitch, *pitches.Standings) {
	t.Helper()
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	third := mustUser(t, db, "third", "Third Shark", pitches.RoleShark)
	sharks := []*pitches.User{c.oracle, c.pragmatist, third}
	mustRound(t, db, c.admin, 7, []pitches.Criterion{{Key: "overall", Name: "Overall", Weight: 100}})
	var ps []*pitches.Pitch
	for i, title := range []string{"A", "B", "C"} {
		ps = append(ps, mustPitch(t, db, c.c[i+1], 7, title, 1, 2))
	}
	mustStatus(t, db, c.admin, 7, pitches.RoundJudging)
	for s, row := range scores {
		for p, v := range row {
			mustScore(t, db, sharks[s], ps[p].ID, map[string]float64{"overall": v})
		}
	}
	for s, p := range votes {
		mustVote(t, db, sharks[s], 7, ps[p].ID)
	}
	mustStatus(t, db, c.admin, 7, pitches.RoundClosed)
	st, err := db.Standings(ctx, nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	return db, ps, st
}

func TestTieBreakRules(t *testing.T) {
	cases := []struct {
		name    string
		scores  map[int]map[int]float64
		votes   map[int]int
		winner  int // pitch index, -1 for none
		rule    pitches.TieRule
		ordered []string
	}{
		{"most votes", map[int]map[int]float64{0: {0: 3, 1: 9}}, map[int]int{0: 0, 1: 0, 2: 1}, 0, pitches.DecidedByVotes, []string{"A", "B", "C"}},
		{"higher mean", map[int]map[int]float64{0: {0: 8, 1: 6}, 1: {0: 6, 1: 6}}, map[int]int{0: 0, 1: 1}, 0, pitches.DecidedByMeanTotal, []string{"A", "B", "C"}},
		{"lower spread", map[int]map[int]float64{0: {0: 8, 1: 7}, 1: {0: 6, 1: 7}}, map[int]int{0: 0, 1: 1}, 1, pitches.DecidedBySpread, []string{"B", "A", "C"}},
		{"earlier filing", map[int]map[int]float64{0: {0: 7, 1: 7}, 1: {0: 7, 1: 7}}, map[int]int{0: 1, 1: 0}, 0, pitches.DecidedByFiling, []string{"A", "B", "C"}},
		{"no votes", map[int]map[int]float64{0: {2: 9}}, nil, -1, pitches.DecidedByNoVotes, []string{"C", "A", "B"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ps, st := tieRound(t, tc.scores, tc.votes)
			var want int64
			if tc.winner >= 0 {
				want = ps[tc.winner].ID
			}
			if st.WinnerID != want || st.DecidedBy != tc.rule {
				t.Fatalf("winner %d by %q, want %d by %q", st.WinnerID, st.DecidedBy, want, tc.rule)
			}
			for i, row := range st.Pitches {
				if row.Title != tc.ordered[i] {
					t.Errorf("row %d = %s, want %s", i, row.Title, tc.ordered[i])
				}
			}
		})
	}
}

// Bias correction: each shark's totals are z-scored within the round with
// the population standard deviation, then averaged per pitch.
//
//	shark 0: A 9, B 7, C 5 -> mean 7, sd sqrt(8/3): z = +1.2247, 0, -1.2247
//	shark 1: A 4, B 6      -> mean 5, sd 1:         z = -1, +1
//	shark 2: C 10 (one card)                        z = 0
//
// so A = (1.2247 - 1)/2, B = (0 + 1)/2, C = (-1.2247 + 0)/2.
func TestBiasCorrectedScore(t *testing.T) {
	_, _, st := tieRound(t, map[int]map[int]float64{0: {0: 9, 1: 7, 2: 5}, 1: {0: 4, 1: 6}, 2: {2: 10}}, nil)
	z := 2 / 1.6329931618554521    // 2 / sqrt(8/3)
	want := map[string][3]float64{ // mean, spread, bias
		"A": {6.5, 5, (z - 1) / 2},
		"B": {6.5, 1, 0.5},
		"C": {7.5, 5, -z / 2},
	}
	for _, row := range st.Pitches {
		w := want[row.Title]
		if !near(row.MeanTotal, w[0]) || !near(row.Spread, w[1]) || !near(row.BiasCorrected, w[2]) {
			t.Errorf("%s: mean %.4f spread %.4f bias %.6f, want %.4f %.4f %.6f", row.Title,
				row.MeanTotal, row.Spread, row.BiasCorrected, w[0], w[1], w[2])
		}
	}
}
