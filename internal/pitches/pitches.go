// Package pitches is the domain of pitchtank: users, rounds with their rubrics,
// pitches, scorecards, votes and standings, and the rules that govern them.
//
// It depends on nothing else in the module. Storage (internal/sqlite) and the
// HTTP layer (internal/httpserver) depend on it, never the other way round.
package pitches

import (
	"context"
	"time"
)

// Role is what a user may do. Roles are fixed; a user has exactly one.
type Role string

const (
	RoleAdmin      Role = "admin"
	RoleShark      Role = "shark"
	RoleContestant Role = "contestant"
	RoleViewer     Role = "viewer"
)

// User is a person who logs in (or calls the API with a token).
type User struct {
	ID          int64
	Login       string // unique, used to log in
	DisplayName string // e.g. "The Performance Oracle"
	Role        Role
	CreatedAt   time.Time
	// DeactivatedAt is set when an admin deactivated the user: they cannot
	// log in and their sessions and tokens no longer work.
	DeactivatedAt *time.Time
}

// RoundStatus moves one way only: pitching -> judging -> closed.
type RoundStatus string

const (
	RoundPitching RoundStatus = "pitching"
	RoundJudging  RoundStatus = "judging"
	RoundClosed   RoundStatus = "closed"
)

// Criterion is one line of a round's rubric.
type Criterion struct {
	Key         string // short identifier, [a-z0-9_]{1,32}, unique within the round
	Name        string
	Description string
	Weight      int // default integer weight; a round's weights sum to 100
}

// Round is one shark-tank round with its rubric.
type Round struct {
	ID        int64
	Number    int // unique, >= 1
	Title     string
	Rules     string // markdown
	Status    RoundStatus
	Baseline  string // kernel variant name the round's claims are measured against (may be empty)
	Criteria  []Criterion
	CreatedAt time.Time

	// Measurement is how the round's pitches are measured, with Baseline
	// (docs/api.md, "The round's measurement"): a pitch's result comes only
	// from its runs that match it.
	Measurement RoundMeasurement
}

// Range is a speedup prediction over the round's baseline, read as an 80%
// central interval. A single number is Lo == Hi. Both must be > 0 and Lo <= Hi.
type Range struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// PitchStatus is active or withdrawn.
type PitchStatus string

const (
	PitchActive    PitchStatus = "active"
	PitchWithdrawn PitchStatus = "withdrawn"
)

// Pitch is a contestant's proposal: an optimisation with a claimed speedup and
// the kernel variant that implements it.
type Pitch struct {
	ID           int64
	RoundNumber  int
	ContestantID int64
	Contestant   string // display name, filled on reads
	Title        string
	Category     string
	Body         string // markdown, rendered safely by the web layer
	Claim        Range
	Variant      string // kernel variant name (see kernels/ manifest); may carry knob overrides, e.g. "baseline?stages=3"
	Status       PitchStatus
	RepitchOf    int64   // 0 when not a re-pitch
	RepitchedBy  []int64 // filled on reads: pitches that re-pitch this one
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Scorecard is one shark's assessment of one pitch. Edits create versions; the
// latest version is the scorecard.
type Scorecard struct {
	ID         int64
	PitchID    int64
	SharkID    int64
	Shark      string             // display name, filled on reads
	Scores     map[string]float64 // criterion key -> 0..10 in steps of 0.5
	Notes      map[string]string  // criterion key -> note (optional per key)
	Estimate   Range              // the shark's own speedup estimate
	Verdict    string             // free text, e.g. "FUND", "CONDITIONAL", "REJECT"
	Weights    map[string]int     // the weights used for Total (personal or round default)
	Total      float64            // sum(weight*score)/100, computed by the app, never typed
	TypedTotal *float64           // a total a person typed (demo/import only); nil otherwise
	Version    int                // 1 for the first submission
	CreatedAt  time.Time          // when this version was stored
}

// Vote is one shark's vote in one round. Changeable until the round closes;
// every change is kept as a version.
type Vote struct {
	RoundNumber   int
	SharkID       int64
	Shark         string
	PitchID       int64
	Justification string
	Terms         DealTerms // the deal terms the shark sets on the pitch voted for; zero when none
	Version       int
	CreatedAt     time.Time
}

// PitchStanding is one row of a round's standings.
type PitchStanding struct {
	PitchID       int64
	Title         string
	Contestant    string
	Status        PitchStatus
	Scorecards    int     // number of sharks who scored it
	MeanTotal     float64 // mean weighted total across sharks
	Spread        float64 // max - min weighted total (disagreement flag)
	BiasCorrected float64 // mean of each shark's z-scored totals within the round
	Votes         int
	FiledAt       time.Time
	Hidden        bool  // figures withheld from this viewer (hidden-score rule)
	ContestantID  int64 // who filed it: a shark's own pitch is not theirs to score
	// Rank is the row's place by RankRule, shared by rows the rule cannot
	// separate (1, 2, 2, 4); 0 for a pitch that is not ranked: withdrawn,
	// not scored and not voted for yet, or ranks withheld from this viewer.
	Rank int
}

// TieRule names the rule that decided the winner, in the order scoring.md records.
type TieRule string

const (
	DecidedByVotes     TieRule = "most votes"
	DecidedByMeanTotal TieRule = "higher mean weighted total"
	DecidedBySpread    TieRule = "lower spread"
	DecidedByFiling    TieRule = "earlier filing"
	DecidedByNoVotes   TieRule = "no votes cast"
)

// Standings is a round's table, sorted best first, with the winner.
type Standings struct {
	RoundNumber int
	Pitches     []PitchStanding
	WinnerID    int64 // 0 when no active pitch has votes
	DecidedBy   TieRule
	// RanksShown is false when this viewer may not see the ranking yet
	// (CanSeeWinner): rows are then in filing order and every Rank is 0.
	RanksShown bool
	// BiasWithheld and VotesWithheld say that every row's BiasCorrected or
	// Votes is withheld from this viewer (ApplyVisibility), not zero.
	BiasWithheld, VotesWithheld bool
}

// RankRule says in words what decides a pitch's place, for the page.
const RankRule = "Ranked by most votes, then higher mean weighted total, then lower spread; pitches equal on all three share a place " +
	"(the winner among them is the earlier filed). Withdrawn pitches and pitches nobody has scored or voted for yet are not ranked."

// Token is a personal API token. The secret is shown once, at creation.
type Token struct {
	ID        int64
	UserID    int64
	Label     string
	CreatedAt time.Time
	RevokedAt *time.Time
	LastUsed  *time.Time
}

// Inputs of the mutating operations. They carry what a request carries; the
// service validates every field and returns *Error naming the field.

type RoundInput struct {
	Number   int
	Title    string
	Rules    string
	Baseline string
	Criteria []Criterion
	// Measurement, when not nil, sets the round's measurement; nil leaves
	// it as it is (a new round then declares none: no run counts until an
	// admin sets it).
	Measurement *RoundMeasurement
}

// RoundMeasurement is how a round's pitches are measured, besides the
// baseline: the kernel problem and suite, the device class (matched
// case-insensitively as a substring of a run's device name; empty means
// any device) and whether imported runs count. Whether problem and suite
// exist is the kernel catalogue's to say (runner.CheckMeasurement); the
// form is checked here (ValidateMeasurement).
type RoundMeasurement struct {
	Problem      string
	Suite        string
	DeviceClass  string
	AllowImports bool
}

type PitchInput struct {
	RoundNumber int
	Title       string
	Category    string
	Body        string
	Claim       Range
	Variant     string
	RepitchOf   int64
}

type ScorecardInput struct {
	Scores   map[string]float64
	Notes    map[string]string
	Estimate Range
	Verdict  string
}

type VoteInput struct {
	PitchID       int64
	Justification string
	Terms         DealTerms
}

// DealTerms are the acceptance criteria a shark attaches to a vote
// (scoring.md, "Deal terms"), each machine-checkable against a measured run.
// Nil pointers and a false Correct are terms not set.
type DealTerms struct {
	MinGeomean    *float64 `json:"min_geomean,omitempty"`    // lowest acceptable geomean speedup, e.g. 1.4
	MaxRegression *float64 `json:"max_regression,omitempty"` // largest slowdown of any one shape, a fraction: 0.10 = 10%
	MaxVariation  *float64 `json:"max_variation,omitempty"`  // largest run-to-run variation, a fraction: 0.05 = 5%
	Correct       bool     `json:"correct,omitempty"`        // every shape must pass the correctness check
}

// Empty reports whether no term is set.
func (t DealTerms) Empty() bool {
	return t.MinGeomean == nil && t.MaxRegression == nil && t.MaxVariation == nil && !t.Correct
}

// Service is everything the web layer may ask of the domain. Every method that
// acts on behalf of someone takes that user and enforces the role x action
// rules; every mutating method validates first and writes in one transaction,
// so a refused request changes nothing.
type Service interface {
	// Users and authentication.
	CreateUser(ctx context.Context, login, displayName string, role Role, password string) (*User, error)
	Authenticate(ctx context.Context, login, password string) (*User, error) // ErrUnauthorized on mismatch
	UserByID(ctx context.Context, id int64) (*User, error)
	Users(ctx context.Context) ([]User, error)
	SetUserRole(ctx context.Context, by *User, userID int64, role Role) error
	// ChangePassword sets by's own password, given the current one.
	ChangePassword(ctx context.Context, by *User, oldPassword, newPassword string) error
	// SetUserActive deactivates (active=false) or reactivates a user; admins only.
	SetUserActive(ctx context.Context, by *User, userID int64, active bool) error

	// Sessions (browser) and tokens (API): opaque random secrets, stored hashed.
	CreateSession(ctx context.Context, userID int64, ttl time.Duration) (secret string, err error)
	UserBySession(ctx context.Context, secret string) (*User, error)
	DeleteSession(ctx context.Context, secret string) error
	CreateToken(ctx context.Context, userID int64, label string) (secret string, tok *Token, err error)
	Tokens(ctx context.Context, userID int64) ([]Token, error)
	RevokeToken(ctx context.Context, by *User, tokenID int64) error
	UserByToken(ctx context.Context, secret string) (*User, error)

	// Rounds.
	Rounds(ctx context.Context) ([]Round, error)
	Round(ctx context.Context, number int) (*Round, error)
	CurrentRound(ctx context.Context) (*Round, error) // latest non-closed round, else latest; ErrNotFound if none
	CreateRound(ctx context.Context, by *User, in RoundInput) (*Round, error)
	UpdateRound(ctx context.Context, by *User, number int, in RoundInput) (*Round, error) // rubric only while pitching
	SetRoundStatus(ctx context.Context, by *User, number int, status RoundStatus) (*Round, error)

	// Personal weights of a shark for a round (before the shark's first scorecard in it).
	SetPersonalWeights(ctx context.Context, by *User, round int, weights map[string]int) error
	PersonalWeights(ctx context.Context, sharkID int64, round int) (map[string]int, error) // nil when none

	// Pitches.
	Pitches(ctx context.Context, round int) ([]Pitch, error)
	Pitch(ctx context.Context, id int64) (*Pitch, error)
	FilePitch(ctx context.Context, by *User, in PitchInput) (*Pitch, error)
	EditPitch(ctx context.Context, by *User, id int64, in PitchInput) (*Pitch, error)
	WithdrawPitch(ctx context.Context, by *User, id int64) (*Pitch, error)

	// Scorecards. Visible returns what viewer may see of a pitch's scorecards
	// (hidden-score rule); the viewer's own card is always included.
	SubmitScorecard(ctx context.Context, by *User, pitchID int64, in ScorecardInput) (*Scorecard, error)
	VisibleScorecards(ctx context.Context, viewer *User, pitchID int64) (cards []Scorecard, hidden int, err error)
	ScorecardHistory(ctx context.Context, viewer *User, pitchID, sharkID int64) ([]Scorecard, error)
	// FirstResultAt is when a result of what pitch pitchID predicts first
	// existed: a run of the pitch with a result, or one of its variant that
	// the pitch's round would take as its measurement, under no pitch or
	// another pitch (scoring.md: "Predictions are locked once a result for
	// that variant exists"). Zero when none.
	// Estimates and claims are scored as they stood then (PredictionAt).
	FirstResultAt(ctx context.Context, pitchID int64) (time.Time, error)

	// Votes.
	CastVote(ctx context.Context, by *User, round int, in VoteInput) (*Vote, error)
	VisibleVotes(ctx context.Context, viewer *User, round int) ([]Vote, error)
	// VoteHistory is every version of a shark's vote in the round, oldest
	// first, under the same visibility (CanSeeVotes; one's own always).
	VoteHistory(ctx context.Context, viewer *User, round int, sharkID int64) ([]Vote, error)

	// Standings, computed by ComputeStandings from the stored scorecards and
	// votes. Rows of pitches whose scores the viewer may not yet see (a shark
	// who has not scored them, in a round not closed) come back with Hidden set
	// and their figures zeroed; the winner is reported only once the round is closed
	// or to viewers who may see every row.
	Standings(ctx context.Context, viewer *User, round int) (*Standings, error)

	// Submitted kernels: see KernelService (kernels.go).
	KernelService
}
