package httpserver

import (
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// JSON shapes of the API's responses. They are separate from the domain
// types so the wire format stays stable (snake_case, documented in
// docs/api.md) whatever the domain structs look like.

type criterionJSON struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Weight      int    `json:"weight"`
}

type roundJSON struct {
	Number    int                 `json:"number"`
	Title     string              `json:"title"`
	Status    pitches.RoundStatus `json:"status"`
	Rules     string              `json:"rules,omitempty"`
	Baseline  string              `json:"baseline,omitempty"`
	Criteria  []criterionJSON     `json:"criteria"`
	CreatedAt time.Time           `json:"created_at"`
	// How the round's pitches are measured (with the baseline).
	Measurement *runner.Measurement `json:"measurement,omitempty"`
}

func toRoundJSON(r *pitches.Round, withDetail bool) roundJSON {
	out := roundJSON{Number: r.Number, Title: r.Title, Status: r.Status, CreatedAt: r.CreatedAt, Criteria: []criterionJSON{}}
	if withDetail {
		out.Rules, out.Baseline = r.Rules, r.Baseline
		m := runner.MeasurementOf(r)
		out.Measurement = &m
	}
	for _, c := range r.Criteria {
		cj := criterionJSON{Key: c.Key, Name: c.Name, Weight: c.Weight}
		if withDetail {
			cj.Description = c.Description
		}
		out.Criteria = append(out.Criteria, cj)
	}
	return out
}

type pitchJSON struct {
	ID          int64               `json:"id"`
	Round       int                 `json:"round"`
	Title       string              `json:"title"`
	Category    string              `json:"category"`
	Body        string              `json:"body"`
	Claim       pitches.Range       `json:"claim"`
	Variant     string              `json:"variant"`
	Status      pitches.PitchStatus `json:"status"`
	Contestant  string              `json:"contestant"`
	RepitchOf   int64               `json:"repitch_of,omitempty"`
	RepitchedBy []int64             `json:"repitched_by"`
	CreatedAt   time.Time           `json:"created_at"`
	UpdatedAt   time.Time           `json:"updated_at"`
}

// pitchDetailJSON is GET /api/pitches/{id}: the pitch with the scorecards
// the caller may see and a count of those hidden.
type pitchDetailJSON struct {
	pitchJSON
	Scorecards       []scorecardJSON `json:"scorecards"`
	HiddenScorecards int             `json:"hidden_scorecards"`
}

func toPitchJSON(p *pitches.Pitch) pitchJSON {
	by := p.RepitchedBy
	if by == nil {
		by = []int64{}
	}
	return pitchJSON{ID: p.ID, Round: p.RoundNumber, Title: p.Title, Category: p.Category, Body: p.Body,
		Claim: p.Claim, Variant: p.Variant, Status: p.Status, Contestant: p.Contestant,
		RepitchOf: p.RepitchOf, RepitchedBy: by, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

type scorecardJSON struct {
	ID            int64              `json:"id"`
	Pitch         int64              `json:"pitch"`
	SharkID       int64              `json:"shark_id"`
	Shark         string             `json:"shark"`
	Scores        map[string]float64 `json:"scores"`
	Notes         map[string]string  `json:"notes"`
	Estimate      pitches.Range      `json:"estimate"`
	Verdict       string             `json:"verdict"`
	Weights       map[string]int     `json:"weights"`
	WeightedTotal float64            `json:"weighted_total"`
	TypedTotal    *float64           `json:"typed_total,omitempty"`
	Version       int                `json:"version"`
	CreatedAt     time.Time          `json:"created_at"`
	// Stored after the pitch's first result existed (pitches.ChangedAfterResult).
	ChangedAfterResult bool `json:"changed_after_result"`
}

func toScorecardJSON(c *pitches.Scorecard) scorecardJSON {
	out := scorecardJSON{ID: c.ID, Pitch: c.PitchID, SharkID: c.SharkID, Shark: c.Shark, Scores: c.Scores,
		Notes: c.Notes, Estimate: c.Estimate, Verdict: c.Verdict, Weights: c.Weights,
		WeightedTotal: c.Total, TypedTotal: c.TypedTotal, Version: c.Version, CreatedAt: c.CreatedAt}
	if out.Scores == nil {
		out.Scores = map[string]float64{}
	}
	if out.Notes == nil {
		out.Notes = map[string]string{}
	}
	if out.Weights == nil {
		out.Weights = map[string]int{}
	}
	return out
}

type standingJSON struct {
	ID            int64               `json:"id"`
	Title         string              `json:"title"`
	Contestant    string              `json:"contestant"`
	Status        pitches.PitchStatus `json:"status"`
	Scorecards    int                 `json:"scorecards"`
	MeanTotal     float64             `json:"mean_total"`
	Spread        float64             `json:"spread"`
	BiasCorrected float64             `json:"bias_corrected"`
	Votes         int                 `json:"votes"`
	Hidden        bool                `json:"hidden"`
	FiledAt       time.Time           `json:"filed_at"`
	// Rank is the place by the rank rule (ties share it); null for a
	// pitch that is not ranked or when the ranking is withheld.
	Rank *int `json:"rank"`
}

type winnerJSON struct {
	ID        int64           `json:"id"`
	DecidedBy pitches.TieRule `json:"decided_by"`
}

type standingsJSON struct {
	Round   int            `json:"round"`
	Pitches []standingJSON `json:"pitches"`
	Winner  *winnerJSON    `json:"winner"`
	// RanksShown: false while the ranking is withheld from the caller
	// (rows then come in filing order); RankRule says what decides a rank.
	RanksShown bool   `json:"ranks_shown"`
	RankRule   string `json:"rank_rule"`
	// BiasWithheld, VotesWithheld: every row's bias_corrected or votes is
	// withheld from the caller (0 there means withheld, not zero).
	BiasWithheld  bool `json:"bias_withheld"`
	VotesWithheld bool `json:"votes_withheld"`
}

func toStandingsJSON(s *pitches.Standings) standingsJSON {
	out := standingsJSON{Round: s.RoundNumber, Pitches: []standingJSON{}, RanksShown: s.RanksShown, RankRule: pitches.RankRule,
		BiasWithheld: s.BiasWithheld, VotesWithheld: s.VotesWithheld}
	for _, p := range s.Pitches {
		row := standingJSON{ID: p.PitchID, Title: p.Title, Contestant: p.Contestant,
			Status: p.Status, Scorecards: p.Scorecards, MeanTotal: p.MeanTotal, Spread: p.Spread,
			BiasCorrected: p.BiasCorrected, Votes: p.Votes, Hidden: p.Hidden, FiledAt: p.FiledAt}
		if p.Rank > 0 {
			rank := p.Rank
			row.Rank = &rank
		}
		out.Pitches = append(out.Pitches, row)
	}
	if s.WinnerID != 0 {
		out.Winner = &winnerJSON{ID: s.WinnerID, DecidedBy: s.DecidedBy}
	}
	return out
}

type voteJSON struct {
	Round         int                `json:"round"`
	SharkID       int64              `json:"shark_id"`
	Shark         string             `json:"shark"`
	Pitch         int64              `json:"pitch"`
	Justification string             `json:"justification"`
	Version       int                `json:"version"`
	CreatedAt     time.Time          `json:"created_at"`
	Terms         *pitches.DealTerms `json:"terms,omitempty"`
}

func toVoteJSON(v *pitches.Vote) voteJSON {
	out := voteJSON{Round: v.RoundNumber, SharkID: v.SharkID, Shark: v.Shark, Pitch: v.PitchID,
		Justification: v.Justification, Version: v.Version, CreatedAt: v.CreatedAt}
	if !v.Terms.Empty() {
		t := v.Terms
		out.Terms = &t
	}
	return out
}

type userJSON struct {
	ID          int64        `json:"id"`
	Login       string       `json:"login"`
	DisplayName string       `json:"display_name"`
	Role        pitches.Role `json:"role"`
}

func toUserJSON(u *pitches.User) userJSON {
	return userJSON{ID: u.ID, Login: u.Login, DisplayName: u.DisplayName, Role: u.Role}
}

type tokenJSON struct {
	ID        int64      `json:"id"`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	LastUsed  *time.Time `json:"last_used"`
	// Secret is set only in the response that creates the token.
	Secret string `json:"token,omitempty"`
}

func toTokenJSON(t *pitches.Token) tokenJSON {
	return tokenJSON{ID: t.ID, Label: t.Label, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt, LastUsed: t.LastUsed}
}
