package pitches

import "sort"

// Who sees what. The rule is HotCRP's "reviews are visible only after
// completing a review" as adopted in scoring.md ("Hidden until submitted"):
// a shark's judgement must not be anchored by other sharks' numbers.
//
// Anonymous visitors (nil viewer), contestants and viewers see, in an open
// round: the round, its rubric, its pitches, and the standings rows with
// every score figure and vote count withheld (Hidden) and no winner. Once the
// round is closed everyone sees everything. Admins see everything always:
// they run the round and do not judge it.

// CanSeeScorecards reports whether viewer may see other sharks' scorecards of
// a pitch in round. viewerScored: the viewer has submitted a scorecard for
// that pitch. The viewer's own card is always visible to them.
func CanSeeScorecards(viewer *User, round *Round, viewerScored bool) bool {
	if round != nil && round.Status == RoundClosed {
		return true
	}
	if viewer == nil {
		return false
	}
	if SeesEveryResult(viewer) {
		return true
	}
	switch viewer.Role {
	case RoleShark:
		return viewerScored
	}
	return false
}

// CanSeeScorecard reports whether viewer may see shark sharkID's card on a
// pitch in round: their own always, another's as CanSeeScorecards says.
func CanSeeScorecard(viewer *User, round *Round, sharkID int64, viewerScored bool) bool {
	if viewer != nil && viewer.ID == sharkID {
		return true
	}
	return CanSeeScorecards(viewer, round, viewerScored)
}

// CanSeeVotes reports whether viewer may see other sharks' votes in round.
// viewerVoted: the viewer has cast a vote in the round.
func CanSeeVotes(viewer *User, round *Round, viewerVoted bool) bool {
	if round != nil && round.Status == RoundClosed {
		return true
	}
	if viewer == nil {
		return false
	}
	switch viewer.Role {
	case RoleAdmin:
		return true
	case RoleShark:
		return viewerVoted
	}
	return false
}

// CanSeeWinner reports whether viewer may see the winner and the ranking of
// round: everyone once the round is closed; admins always (they run it and
// do not judge it); a shark once every row of the ranking is open to them
// (seesAll, from ApplyVisibility): they have scored every active pitch they
// may score, they have voted, and no active pitch is hidden from them. The
// ranking is votes first, so showing it to a shark who has not voted shows
// the votes; and a shark with a pitch of their own in the round (which they
// may not score, so its row stays hidden) would read their pitch's place
// from the ranks around it. Such a shark waits for the close, as
// contestants, viewers and anonymous visitors do.
func CanSeeWinner(viewer *User, round *Round, seesAll bool) bool {
	if round != nil && round.Status == RoundClosed {
		return true
	}
	if viewer == nil {
		return false
	}
	switch viewer.Role {
	case RoleAdmin:
		return true
	case RoleShark:
		return seesAll
	}
	return false
}

// ScoredAll reports whether the viewer has scored every active pitch of the
// standings that is not their own (false when there is none to score).
func ScoredAll(st *Standings, viewer *User, scored map[int64]bool) bool {
	if viewer == nil {
		return false
	}
	any := false
	for _, r := range st.Pitches {
		if r.Status != PitchActive || r.ContestantID == viewer.ID {
			continue
		}
		if !scored[r.PitchID] {
			return false
		}
		any = true
	}
	return any
}

// ApplyVisibility withholds from st what viewer may not see. scored holds the
// pitches the viewer has scored, voted whether the viewer voted in the round.
// Hidden rows keep title, contestant, status, filing time and the number of
// scorecards (progress, not judgement) and lose mean, spread and
// bias-corrected score. Vote counts go unless the viewer may see votes.
//
// The bias-corrected score goes from every row while any row is hidden: it
// z-scores each shark's totals over all their cards in the round, so a
// visible row's figure moves with the hidden cards (a shark's 2 or 10 on a
// pitch the viewer has not scored shifts another pitch's score).
//
// When the winner is withheld (CanSeeWinner) the rows are re-sorted by
// filing order, since the best-first order would itself leak the ranking.
func ApplyVisibility(st *Standings, viewer *User, round *Round, scored map[int64]bool, voted bool) {
	seeVotes := CanSeeVotes(viewer, round, voted)
	anyHidden, activeHidden := false, false
	for i := range st.Pitches {
		r := &st.Pitches[i]
		if !CanSeeScorecards(viewer, round, scored[r.PitchID]) {
			r.Hidden = true
			r.MeanTotal, r.Spread, r.BiasCorrected = 0, 0, 0
			anyHidden = true
			activeHidden = activeHidden || r.Status == PitchActive
		}
		if !seeVotes {
			r.Votes = 0
		}
	}
	if anyHidden {
		for i := range st.Pitches {
			st.Pitches[i].BiasCorrected = 0
		}
	}
	st.BiasWithheld, st.VotesWithheld = anyHidden, !seeVotes
	seesAll := ScoredAll(st, viewer, scored) && seeVotes && !activeHidden
	if !CanSeeWinner(viewer, round, seesAll) {
		st.WinnerID = 0
		st.DecidedBy = ""
		st.RanksShown = false
		for i := range st.Pitches {
			st.Pitches[i].Rank = 0
		}
		sort.SliceStable(st.Pitches, func(a, b int) bool {
			pa, pb := st.Pitches[a], st.Pitches[b]
			if !pa.FiledAt.Equal(pb.FiledAt) {
				return pa.FiledAt.Before(pb.FiledAt)
			}
			return pa.PitchID < pb.PitchID
		})
	}
}

// SeesEveryResult says whether viewer may see every run's result in every
// round, whatever they scored: then a count of runs matching a filter on
// results reveals nothing hidden from them.
func SeesEveryResult(viewer *User) bool {
	return viewer != nil && viewer.Role == RoleAdmin
}

// CanSeeResults reports whether viewer may see anything derived from the
// measured results of pitch p in round: speedups, per-shape times, flags,
// correctness, a run's logs and stderr, its failure reason, live progress,
// history charts, scored predictions, recaps and calibration. viewerScored:
// the viewer has submitted a scorecard for p.
//
// scoring.md: "Measured results of a pitch's variant are not shown to a
// shark who has not yet scored it" (blind judging: a number seen before
// scoring anchors the score). Applied like the scorecards' rule above, so
// nobody who could pass a number on sees it early: while the round is not
// closed, admins (they run the round), whoever filed the pitch (it is their
// measurement) and sharks who scored p see its results; other sharks,
// other contestants, viewers and anonymous callers do not. Once the round
// is closed everyone does. A run of no pitch (p nil) is nobody's judgement
// and always visible.
//
// What stays visible to everyone: that a run exists, its parameters and its
// status (queued, running, succeeded, ...), since a shark must know whether
// a measurement finished and predictions are locked.
func CanSeeResults(viewer *User, round *Round, p *Pitch, viewerScored bool) bool {
	if p == nil || round == nil || round.Status == RoundClosed {
		return true
	}
	if viewer == nil {
		return false
	}
	if p.ContestantID == viewer.ID {
		return true // a shark may file a pitch too, and may not score it
	}
	if SeesEveryResult(viewer) {
		return true
	}
	return viewer.Role == RoleShark && viewerScored
}

// ResultsDependOnScoring reports whether CanSeeResults's answer for viewer
// in round can depend on viewerScored (a shark, while the round is open), so
// that a caller reads the viewer's scorecards only when they matter.
func ResultsDependOnScoring(viewer *User, round *Round) bool {
	return viewer != nil && viewer.Role == RoleShark && round != nil && round.Status != RoundClosed
}

// CanReadRound reports whether viewer may open round's pages at all. Every
// logged-in user may. Anonymous visitors may read a closed round (nothing
// in it is hidden any more) when the server lets them (publicClosed, the
// --public-closed-rounds option); an open round needs a login, since its
// pages are per viewer.
func CanReadRound(viewer *User, round *Round, publicClosed bool) bool {
	if viewer != nil {
		return true
	}
	return publicClosed && round != nil && round.Status == RoundClosed
}
