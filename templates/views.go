// Package templates holds pitchtank's templ components. Components take
// plain view structs, filled by the HTTP handlers; they never reach the
// database or the service.
package templates

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Chrome is what the layout needs on every page.
type Chrome struct {
	User  *pitches.User // nil when not logged in
	Title string
	Nav   string // which nav entry is current: "home", "rounds", "tokens", "admin"
	// ReplaceURL, set on a page that answers a refused form post, is the
	// form's own GET address: app.js puts it in place of the POST's entry
	// (history.replaceState), so Back and Forward never offer to resubmit.
	ReplaceURL string
	// PublicRounds: anonymous visitors may read closed rounds
	// (--public-closed-rounds), so the nav offers them Rounds.
	PublicRounds bool
	// Admin: the viewer may use the admin pages, so the nav links them.
	Admin bool
	// Scorer: the viewer's role scores pitches, so hidden scores open to
	// them when they score (everyone else waits for the close).
	Scorer bool
}

// FormError is the one error a form submission came back with; Field names
// the input it is about (may be empty).
type FormError struct {
	Field   string
	Message string
}

// For returns the message when the error is about field (or a sub-field of
// it, e.g. "claim" matches "claim.lo"), else "".
// Text is the message as the form's summary shows it: naming the field
// when the message does not already, so that every refused post says which
// input is wrong even where the field has no inline slot.
func (e *FormError) Text() string {
	if e == nil {
		return ""
	}
	if e.Field == "" || strings.Contains(strings.ToLower(e.Message), strings.ToLower(fieldLabel(e.Field))) {
		return e.Message
	}
	return fieldLabel(e.Field) + ": " + e.Message
}

// fieldLabel turns a field path ("notes.speedup", "claim.lo",
// "criteria[1].weight") into words a form reader knows.
func fieldLabel(field string) string {
	r := strings.NewReplacer("_", " ", ".", " ", "[", " ", "]", "")
	return r.Replace(field)
}

func (e *FormError) For(field string) string {
	if e == nil || e.Field == "" {
		return ""
	}
	if e.Field == field || strings.HasPrefix(e.Field, field+".") {
		return e.Message
	}
	return ""
}

// ErrorView is the page shown for an error that is not a form's.
type ErrorView struct {
	Status  int
	Title   string
	Message string
}

type LoginView struct {
	Login string
	Next  string
	Err   *FormError
}

// HomeView is the landing page: the current round and its standings.
type HomeView struct {
	Round     *pitches.Round // nil when there are no rounds yet
	Standings *StandingsView
	Pitches   int
}

// StandingsView is a standings table with the titles it links to.
type StandingsView struct {
	S       *pitches.Standings
	Closed  bool
	Winner  string // title of the winning pitch, "" when none shown
	AnyHide bool
	Viewer  *pitches.User // nil: anonymous
	Scorer  bool          // the viewer's role scores pitches (Chrome.Scorer)
}

// hiddenUntil says when a hidden standings row opens to this viewer: sharks
// (scorer) see a pitch's scores once they score it, everyone else
// (contestants, viewers, anonymous visitors) when the round closes.
func hiddenUntil(scorer bool) string {
	if scorer {
		return "hidden until you score it"
	}
	return "hidden until the round closes"
}

// rankWithheld says when this viewer will see the ranking and the winner.
func rankWithheld(scorer bool) string {
	if scorer {
		return "Listed in filing order: the ranking and the winner are shown once you have scored every pitch but your own and cast your vote, or when the round closes (at the close, if a pitch of yours is in the round)."
	}
	return "Listed in filing order: the ranking and the winner are shown when the round closes."
}

type RoundsView struct {
	Rounds []pitches.Round
}

type RoundView struct {
	Round     pitches.Round
	RulesHTML string // sanitized HTML
	Pitches   []pitches.Pitch
	Titles    map[int64]string
	Standings *StandingsView
	Votes     []pitches.Vote
	CanFile   bool
	// Shark-only: personal weights for this round.
	IsShark         bool
	PersonalWeights map[string]int // nil when none set
	WeightsFrozen   bool           // the shark has scored in the round
	WeightsForm     map[string]string
	WeightsErr      *FormError
	Flash           string
	Recap           *RecapView     // predictions against measured results; nil without runs
	VoteHistory     []VoteVersions // every version of the votes the viewer may see
}

// ScoreForm is the viewer's own scorecard form on a pitch page.
type ScoreForm struct {
	Criteria []pitches.Criterion
	Weights  map[string]int // what the server will use for the total
	Personal bool
	Scores   map[string]string
	Notes    map[string]string
	Lo, Hi   string
	Verdict  string
	Existing bool // the viewer has a scorecard already (the form edits it)
	Locked   bool // a result exists and the viewer has a card: the estimate can no longer change
	Late     bool // a result exists and the viewer has no card yet: a late card, not a prediction
	Err      *FormError
}

type VoteForm struct {
	Justification string
	Terms         TermsForm
	Current       *pitches.Vote // the viewer's current vote in the round, if any
	CurrentTitle  string
	Err           *FormError
}

type PitchView struct {
	Pitch       pitches.Pitch
	Round       pitches.Round
	BodyHTML    string // sanitized HTML
	Titles      map[int64]string
	Cards       []pitches.Scorecard
	Hidden      int
	CanEdit     bool
	CanWithdraw bool
	CanScore    bool
	ScoreForm   ScoreForm
	CanVote     bool
	VoteForm    VoteForm
	Flash       string
	ViewerID    int64
	Criteria    []pitches.Criterion
	CanRepitch  bool          // the viewer may file a re-pitch of this pitch in some open round
	Results     *PitchResults // measured results; nil when the server has no runs store
	// History of each visible card, by shark id, oldest version first.
	Histories map[int64][]CardVersion
	// ResultAt is when the pitch's first measured result existed ("" when
	// none): versions stored after it are marked.
	ResultAt string
	// Kernel is the pitch's submitted kernel and its upload form
	// (kernel.templ); nil when the server keeps no kernels.
	Kernel *KernelPanel
}

// CardVersion is one stored version of a scorecard in its history.
type CardVersion struct {
	Card         pitches.Scorecard
	ChangedAfter bool // stored after the pitch's first result existed
	Scored       bool // the version whose estimate is scored against the result
}

// VoteVersions is one shark's vote history in a round, oldest first.
type VoteVersions struct {
	Shark    string
	Versions []pitches.Vote
}

type PitchForm struct {
	Editing   bool
	ID        int64
	Round     string
	Rounds    []pitches.Round // rounds open for pitching
	Title     string
	Category  string
	Body      string
	Lo, Hi    string
	Variant   string
	RepitchOf string
	Repitch   string // title of the pitch being re-pitched
	Err       *FormError
}

type WithdrawView struct {
	Pitch pitches.Pitch
}

type TokensView struct {
	Tokens    []pitches.Token
	NewSecret string
	Label     string
	Err       *FormError
}

type CriterionRow struct {
	Key, Name, Description, Weight string
}

type RoundForm struct {
	Editing  bool
	Number   string
	Title    string
	Rules    string
	Baseline string
	Criteria []CriterionRow
	Err      *FormError
	// The round's measurement: problem (one of Problems), suite, device
	// class, whether imports count.
	Problem, Suite, DeviceClass string
	AllowImports                bool
	Problems                    []string
}

type AdminRoundsView struct {
	Rounds   []pitches.Round
	Problems []string // kernel problems a round's measurement may name
	Form     RoundForm
	Flash    string
}

type ConfirmStatusView struct {
	Round pitches.Round
	To    pitches.RoundStatus
}

type UserForm struct {
	Login, DisplayName, Role string
	Err                      *FormError
}

type AdminUsersView struct {
	Users   []pitches.User
	Form    UserForm
	RoleErr *FormError
	Flash   string
}

// Roles lists the roles in the order forms offer them.
var Roles = []pitches.Role{pitches.RoleViewer, pitches.RoleContestant, pitches.RoleShark, pitches.RoleAdmin}

// NextStatus is the status a round can move to, "" when closed.
func NextStatus(s pitches.RoundStatus) pitches.RoundStatus { return pitches.NextStatus(s) }

// Formatting helpers used by the components.

func num(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func score(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func speed(f float64) string {
	if f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', 1, 64) + "x"
	}
	return strconv.FormatFloat(f, 'f', -1, 64) + "x"
}

func rangeText(r pitches.Range) string {
	if r.Lo == 0 && r.Hi == 0 {
		return "—"
	}
	if r.Lo == r.Hi {
		return speed(r.Lo)
	}
	return speed(r.Lo) + " – " + speed(r.Hi)
}

func itoa(n int) string        { return strconv.Itoa(n) }
func i64(n int64) string       { return strconv.FormatInt(n, 10) }
func pitchURL(id int64) string { return "/pitches/" + i64(id) }
func roundURL(n int) string    { return "/rounds/" + itoa(n) }

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// totalText shows the app's total and, where a person typed a different
// one (seed documents), both: "7.85 (document said 8.05)".
func totalText(c pitches.Scorecard) string {
	t := num(c.Total)
	if c.TypedTotal != nil && num(*c.TypedTotal) != t {
		return fmt.Sprintf("%s (document said %s)", t, num(*c.TypedTotal))
	}
	return t
}

func weightsText(crit []pitches.Criterion, w map[string]int) string {
	var parts []string
	for _, c := range crit {
		if v, ok := w[c.Key]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", c.Name, v))
		}
	}
	if len(parts) == 0 {
		for k, v := range w {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	return strings.Join(parts, " · ")
}

// scoresText is one version's scores on one line, in rubric order:
// "Expected speedup 7 · Feasibility 9".
func scoresText(crit []pitches.Criterion, scores map[string]float64) string {
	var parts []string
	for _, c := range crit {
		if v, ok := scores[c.Key]; ok {
			parts = append(parts, c.Name+" "+score(v))
		}
	}
	return strings.Join(parts, " · ")
}

// termsText is a vote's deal terms on one line, "—" when none.
func termsText(t pitches.DealTerms) string {
	var parts []string
	if t.MinGeomean != nil {
		parts = append(parts, "geomean ≥ "+strconv.FormatFloat(*t.MinGeomean, 'f', -1, 64)+"x")
	}
	if t.MaxRegression != nil {
		parts = append(parts, "no shape over "+strconv.FormatFloat(100**t.MaxRegression, 'f', -1, 64)+"% slower")
	}
	if t.MaxVariation != nil {
		parts = append(parts, "run-to-run variation ≤ "+strconv.FormatFloat(100**t.MaxVariation, 'f', -1, 64)+"%")
	}
	if t.Correct {
		parts = append(parts, "every shape correct")
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " · ")
}

// changedAfter says whether any version of a card history was stored after
// the result.
func changedAfter(h []CardVersion) bool {
	for _, v := range h {
		if v.ChangedAfter {
			return true
		}
	}
	return false
}

func criterionName(crit []pitches.Criterion, key string) string {
	for _, c := range crit {
		if c.Key == key {
			return c.Name
		}
	}
	return key
}

func statusClass(s string) string { return "badge badge-" + s }

func titleOr(titles map[int64]string, id int64) string {
	if t, ok := titles[id]; ok && t != "" {
		return t
	}
	return "pitch #" + i64(id)
}

// scoreSteps are the values a criterion score may take: 0 to 10 by 0.5.
func scoreSteps() []string {
	out := make([]string, 0, 21)
	for i := 0; i <= 20; i++ {
		out = append(out, score(float64(i)/2))
	}
	return out
}

func weightFor(w map[string]int, key string) string {
	if v, ok := w[key]; ok {
		return itoa(v)
	}
	return "0"
}

// roundHeading is "Round 5: wild cards" whether or not the title already
// starts with "Round 5".
func roundHeading(n int, title string) string {
	prefix := "round " + itoa(n)
	if t := strings.ToLower(title); strings.HasPrefix(t, prefix) && (len(t) == len(prefix) || !strings.ContainsAny(t[len(prefix):len(prefix)+1], "0123456789")) {
		return title
	}
	return "Round " + itoa(n) + ": " + title
}

// TermsForm is the vote form's optional deal terms, as typed: a speedup and
// two percentages.
type TermsForm struct {
	MinGeomean, MaxRegression, MaxVariation string
	Correct                                 bool
}

// AccountView is the account page: password change.
type AccountView struct {
	Flash string
	Err   *FormError
}

// LandingView is the home page of a visitor who is not logged in.
type LandingView struct {
	Demo   bool            // the demo's logins work here (README lists them)
	Public bool            // closed rounds are readable without a login
	Closed []pitches.Round // the closed rounds, when Public
}
