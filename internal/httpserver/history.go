package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

// Scorecard and vote history: every stored version with its time, under
// the visibility of the cards and votes themselves (pitches.CanSeeScorecards,
// pitches.CanSeeVotes, enforced by the store), with the versions stored
// after the pitch's first result marked (pitches.ChangedAfterResult).

// pitchFirstResult is when a result of what the pitch predicts first
// existed (pitches.Service.FirstResultAt: its own runs, and its variant's
// under no pitch or another pitch), zero when none or when the server
// measures nothing.
func (s *server) pitchFirstResult(ctx context.Context, pitchID int64) (time.Time, error) {
	if s.runs == nil {
		return time.Time{}, nil
	}
	first, err := s.svc.FirstResultAt(ctx, pitchID)
	if err != nil {
		return time.Time{}, fmt.Errorf("find the first result of pitch %d: %w", pitchID, err)
	}
	return first, nil
}

// markChanged sets changed_after_result on current cards (API) of pitchID.
func (s *server) markChanged(ctx context.Context, pitchID int64, cards []scorecardJSON) error {
	first, err := s.pitchFirstResult(ctx, pitchID)
	if err != nil {
		return err
	}
	for i := range cards {
		cards[i].ChangedAfterResult = pitches.ChangedAfterResult(pitches.Scorecard{CreatedAt: cards[i].CreatedAt}, first)
	}
	return nil
}

// cardHistory is one shark's versions of a pitch's card.
type cardHistory struct {
	SharkID  int64
	Shark    string
	Versions []pitches.Scorecard // oldest first
}

// cardHistories returns the history of every card of the pitch that viewer
// may see (VisibleScorecards), in the order of cards.
func (s *server) cardHistories(ctx context.Context, viewer *pitches.User, pitchID int64, cards []pitches.Scorecard) ([]cardHistory, error) {
	out := make([]cardHistory, 0, len(cards))
	for _, c := range cards {
		vs, err := s.svc.ScorecardHistory(ctx, viewer, pitchID, c.SharkID)
		if err != nil {
			return nil, err
		}
		out = append(out, cardHistory{SharkID: c.SharkID, Shark: c.Shark, Versions: vs})
	}
	return out, nil
}

// cardVersions marks each version: stored after the first result, and the
// one whose estimate is scored.
func cardVersions(vs []pitches.Scorecard, first time.Time) []templates.CardVersion {
	scored, ok := pitches.PredictionAt(vs, first)
	out := make([]templates.CardVersion, 0, len(vs))
	for _, v := range vs {
		out = append(out, templates.CardVersion{Card: v, ChangedAfter: pitches.ChangedAfterResult(v, first),
			Scored: ok && !first.IsZero() && v.Version == scored.Version})
	}
	return out
}

// voteHistories returns every version of the votes of the round that
// viewer may see (the sharks of VisibleVotes), oldest first per shark.
func (s *server) voteHistories(ctx context.Context, viewer *pitches.User, round int, current []pitches.Vote) ([]templates.VoteVersions, error) {
	out := make([]templates.VoteVersions, 0, len(current))
	for _, v := range current {
		vs, err := s.svc.VoteHistory(ctx, viewer, round, v.SharkID)
		if err != nil {
			return nil, err
		}
		out = append(out, templates.VoteVersions{Shark: v.Shark, Versions: vs})
	}
	return out, nil
}

type cardHistoryJSON struct {
	SharkID            int64           `json:"shark_id"`
	Shark              string          `json:"shark"`
	ChangedAfterResult bool            `json:"changed_after_result"`
	ScoredVersion      int             `json:"scored_version,omitempty"`
	Versions           []scorecardJSON `json:"versions"`
}

// handleAPIScorecardHistory is GET /api/pitches/{id}/scorecards/history.
func (s *server) handleAPIScorecardHistory(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	cards, hidden, err := s.svc.VisibleScorecards(ctx, viewer, id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	hists, err := s.cardHistories(ctx, viewer, id, cards)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	first, err := s.pitchFirstResult(ctx, id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := struct {
		Pitch         int64             `json:"pitch"`
		FirstResultAt *time.Time        `json:"first_result_at"`
		Scorecards    []cardHistoryJSON `json:"scorecards"`
		Hidden        int               `json:"hidden"`
	}{Pitch: id, Scorecards: []cardHistoryJSON{}, Hidden: hidden}
	if !first.IsZero() {
		out.FirstResultAt = &first
	}
	for _, h := range hists {
		ch := cardHistoryJSON{SharkID: h.SharkID, Shark: h.Shark, Versions: []scorecardJSON{}}
		for _, cv := range cardVersions(h.Versions, first) {
			cj := toScorecardJSON(&cv.Card)
			cj.ChangedAfterResult = cv.ChangedAfter
			ch.Versions = append(ch.Versions, cj)
			ch.ChangedAfterResult = ch.ChangedAfterResult || cv.ChangedAfter
			if cv.Scored {
				ch.ScoredVersion = cv.Card.Version
			}
		}
		out.Scorecards = append(out.Scorecards, ch)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIVoteHistory is GET /api/rounds/{number}/votes/history.
func (s *server) handleAPIVoteHistory(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	current, err := s.svc.VisibleVotes(ctx, viewer, n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	hists, err := s.voteHistories(ctx, viewer, n, current)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	type sharkVotes struct {
		SharkID  int64      `json:"shark_id"`
		Shark    string     `json:"shark"`
		Versions []voteJSON `json:"versions"`
	}
	out := struct {
		Round int          `json:"round"`
		Votes []sharkVotes `json:"votes"`
	}{Round: n, Votes: []sharkVotes{}}
	for i, h := range hists {
		sv := sharkVotes{SharkID: current[i].SharkID, Shark: h.Shark, Versions: []voteJSON{}}
		for j := range h.Versions {
			sv.Versions = append(sv.Versions, toVoteJSON(&h.Versions[j]))
		}
		out.Votes = append(out.Votes, sv)
	}
	writeJSON(w, http.StatusOK, out)
}
