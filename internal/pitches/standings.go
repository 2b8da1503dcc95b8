package pitches

import (
	"math"
	"sort"
)

// WeightedTotal is sum(weight_k * score_k) / 100 over the weights' keys
// (scoring.md: "Weighted total = sum(weight_k * score_k) / 100, computed by
// the app, never typed in"). It is not rounded: round for display only.
// A key missing from scores counts as 0; validation makes that impossible for
// stored scorecards.
func WeightedTotal(weights map[string]int, scores map[string]float64) float64 {
	// Sum in key order so the same card always gives bit-identical totals,
	// whatever Go's map order; standings compare totals for ties.
	keys := make([]string, 0, len(weights))
	for k := range weights {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sum float64
	for _, k := range keys {
		sum += float64(weights[k]) * scores[k]
	}
	return sum / WeightTotal
}

// tieEps absorbs float noise when comparing means and spreads: totals are
// multiples of 0.005 (integer weights, half-point scores), so anything closer
// than this is equal.
const tieEps = 1e-9

// ComputeStandings builds a round's table from the pitches of the round, the
// current (latest-version) scorecards of those pitches and the current votes.
// Cards and votes for pitches not in the list are ignored.
//
// Per pitch (scoring.md, "Standings and the winner"): mean weighted total
// across sharks, spread = max - min, and a bias-corrected score: each shark's
// totals are z-scored within the round (population standard deviation; a
// shark with a single card or no variance contributes z = 0, since there is
// nothing to correct), and the z-scores are averaged per pitch.
//
// Winner = most votes among active pitches; ties broken, in the recorded
// order, by higher mean weighted total, then lower spread, then earlier filing
// (CreatedAt, then ID). DecidedBy names the first rule that separated the
// winner from the runner-up; DecidedByNoVotes (and WinnerID 0) when no active
// pitch has a vote. Rows are sorted best first by the same order, active
// pitches before withdrawn ones.
func ComputeStandings(round *Round, pitches []Pitch, cards []Scorecard, votes []Vote) Standings {
	st := Standings{}
	if round != nil {
		st.RoundNumber = round.Number
	}
	rows := make([]PitchStanding, len(pitches))
	index := make(map[int64]int, len(pitches))
	for i, p := range pitches {
		index[p.ID] = i
		rows[i] = PitchStanding{
			PitchID:      p.ID,
			Title:        p.Title,
			Contestant:   p.Contestant,
			Status:       p.Status,
			FiledAt:      p.CreatedAt,
			ContestantID: p.ContestantID,
		}
	}

	// Bias correction: z-score each shark's totals within the round.
	bySharks := make(map[int64][]float64)
	var inRound []Scorecard
	for _, c := range cards {
		if _, ok := index[c.PitchID]; !ok {
			continue
		}
		inRound = append(inRound, c)
		bySharks[c.SharkID] = append(bySharks[c.SharkID], c.Total)
	}
	type moments struct{ mean, sd float64 }
	sharkStats := make(map[int64]moments, len(bySharks))
	for id, ts := range bySharks {
		var m float64
		for _, t := range ts {
			m += t
		}
		m /= float64(len(ts))
		var v float64
		for _, t := range ts {
			v += (t - m) * (t - m)
		}
		sharkStats[id] = moments{mean: m, sd: math.Sqrt(v / float64(len(ts)))}
	}

	sums := make([]float64, len(rows))
	zsums := make([]float64, len(rows))
	mins := make([]float64, len(rows))
	maxs := make([]float64, len(rows))
	for _, c := range inRound {
		i := index[c.PitchID]
		r := &rows[i]
		if r.Scorecards == 0 || c.Total < mins[i] {
			mins[i] = c.Total
		}
		if r.Scorecards == 0 || c.Total > maxs[i] {
			maxs[i] = c.Total
		}
		r.Scorecards++
		sums[i] += c.Total
		s := sharkStats[c.SharkID]
		if len(bySharks[c.SharkID]) > 1 && s.sd > tieEps {
			zsums[i] += (c.Total - s.mean) / s.sd
		}
	}
	for i := range rows {
		if n := rows[i].Scorecards; n > 0 {
			rows[i].MeanTotal = sums[i] / float64(n)
			rows[i].Spread = maxs[i] - mins[i]
			rows[i].BiasCorrected = zsums[i] / float64(n)
		}
	}
	for _, v := range votes {
		if i, ok := index[v.PitchID]; ok {
			rows[i].Votes++
		}
	}

	// Ranked rows first (best first), then active pitches nobody has
	// judged yet (filing order), then withdrawn ones.
	sort.SliceStable(rows, func(a, b int) bool {
		ra, rb := rows[a], rows[b]
		if ga, gb := rankGroup(ra), rankGroup(rb); ga != gb {
			return ga < gb
		}
		if rankGroup(ra) != 0 {
			return ra.FiledAt.Before(rb.FiledAt) || (ra.FiledAt.Equal(rb.FiledAt) && ra.PitchID < rb.PitchID)
		}
		_, less := compareRows(ra, rb)
		return less
	})
	for i := range rows {
		if rankGroup(rows[i]) != 0 {
			break
		}
		rows[i].Rank = i + 1
		if i > 0 && sameRank(rows[i-1], rows[i]) {
			rows[i].Rank = rows[i-1].Rank
		}
	}
	st.Pitches = rows
	st.RanksShown = true

	st.DecidedBy = DecidedByNoVotes
	if len(rows) == 0 || rows[0].Status != PitchActive || rows[0].Votes == 0 {
		return st
	}
	st.WinnerID = rows[0].PitchID
	st.DecidedBy = DecidedByVotes
	if len(rows) > 1 && rows[1].Status == PitchActive {
		if rule, _ := compareRows(rows[0], rows[1]); rule != "" {
			st.DecidedBy = rule
		}
	}
	return st
}

// rankGroup: 0 for rows that are ranked (active, with a scorecard or a
// vote), 1 for active pitches nobody has judged yet, 2 for withdrawn ones.
// An unjudged pitch has no mean total to rank by; listing it "16th with
// 0.00" would read as a verdict.
func rankGroup(r PitchStanding) int {
	switch {
	case r.Status != PitchActive:
		return 2
	case r.Scorecards == 0 && r.Votes == 0:
		return 1
	}
	return 0
}

// sameRank: the rank rule cannot separate a and b (filing order breaks
// the winner's tie, but is not merit, so it does not split a place).
func sameRank(a, b PitchStanding) bool {
	rule, _ := compareRows(a, b)
	return rule == DecidedByFiling || rule == ""
}

// compareRows orders two rows by the winner rules and says which rule
// separated them ("" only if they are the same pitch).
func compareRows(a, b PitchStanding) (TieRule, bool) {
	if a.Votes != b.Votes {
		return DecidedByVotes, a.Votes > b.Votes
	}
	if math.Abs(a.MeanTotal-b.MeanTotal) > tieEps {
		return DecidedByMeanTotal, a.MeanTotal > b.MeanTotal
	}
	if math.Abs(a.Spread-b.Spread) > tieEps {
		return DecidedBySpread, a.Spread < b.Spread
	}
	if !a.FiledAt.Equal(b.FiledAt) {
		return DecidedByFiling, a.FiledAt.Before(b.FiledAt)
	}
	if a.PitchID != b.PitchID {
		return DecidedByFiling, a.PitchID < b.PitchID
	}
	return "", false
}
