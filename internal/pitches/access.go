package pitches

import (
	"fmt"
	"strconv"
	"strings"
)

// Action is something a user asks to do. Can decides every one of them from a
// single table, so the role x action matrix lives in one place and one test.
type Action string

const (
	ActReadRound     Action = "read round"                                // rounds, pitches, standings rows
	ActCreateRound   Action = "create round"                              // admin
	ActEditRound     Action = "edit round"                                // admin, rubric only while pitching
	ActAdvanceRound  Action = "advance round"                             // admin, one step forward
	ActManageUsers   Action = "manage users"                              // admin
	ActFilePitch     Action = "file pitch"                                // contestant, shark, admin; round pitching
	ActEditPitch     Action = "edit pitch"                                // owner; round pitching
	ActWithdrawPitch Action = "withdraw pitch"                            // owner or admin; round pitching or judging
	ActScore         Action = "score pitch"                               // shark; round judging, pitch active, not own
	ActSetWeights    Action = "set personal weights"                      // shark; before first scorecard; pitching or judging
	ActVote          Action = "vote"                                      // shark; round judging, pitch active, in round
	ActImportRun     Action = "import a run"                              // admin (not on a closed round); the pitch's contestant while pitching/judging if the round allows imports
	ActAcceptRun     Action = "accept a suspect run"                      // admin; not a run of a closed round's pitch
	ActUploadKernel  Action = "upload a kernel"                           // the pitch's contestant or an admin; round pitching, pitch active
	ActSetMeasure    Action = "set a round's measurement"                 // admin: problem, suite, baseline, device class, imports
	ActRepitch       Action = "re-pitch"                                  // the earlier pitch's contestant, or an admin
	ActRevokeToken   Action = "revoke a token"                            // the token's owner, or an admin
	ActLaunchRun     Action = "start a run"                               // shark, admin; a contestant on their own pitch or on none; not on a closed round's pitch
	ActCancelRun     Action = "cancel a run"                              // whoever asked for the run while it is queued (a pitch's) or not finished (others'), or an admin
	ActRepeatRun     Action = "repeat a run"                              // whoever may start runs; a run measured here that failed or was cancelled
	ActReadAudit     Action = "read the audit log"                        // admin
	ActManageAlerts  Action = "manage webhooks and regression thresholds" // admin
)

// Target is what an action is about. Fill what the action needs: Round for
// everything round-scoped, Pitch for pitch actions and votes, NextStatus for
// ActAdvanceRound (with InFlight, the round's pitches' queued and running
// runs), HasScored (the user already has a scorecard in the round) for
// ActSetWeights, Run for ActCancelRun and ActRepeatRun (Pitch and its Round
// too for ActLaunchRun on a pitch, and Round for ActAcceptRun on a pitch's
// run), the earlier pitch as Pitch for ActRepitch, and TokenOwner (the user
// who made the token) for ActRevokeToken.
type Target struct {
	Round      *Round
	Pitch      *Pitch
	NextStatus RoundStatus
	InFlight   []int64
	HasScored  bool
	Run        *RunFacts
	TokenOwner int64
}

// RunFacts is what the run rules need to know of a measurement run. Runs
// belong to package runner, which imports this package, so the caller
// copies these from its runner.Run.
type RunFacts struct {
	ID          int64
	Status      string // as the runner names it, for messages
	RequestedBy int64  // 0: nobody (an import or a run of the command line)
	Finished    bool   // no longer queued or running
	Imported    bool   // measured elsewhere
	Retryable   bool   // failed or cancelled: a repeat may succeed
	Running     bool   // its measurement has started
	OfPitch     bool   // it measures a pitch
}

type rule struct {
	roles []Role                         // who may; nil means everyone, anonymous included
	state func(u *User, t Target) *Error // the state check, after the role check
}

// rules is the role x action matrix. Reading it top to bottom is reading the
// permissions of the app.
var rules = map[Action]rule{
	ActReadRound:   {roles: nil},
	ActCreateRound: {roles: []Role{RoleAdmin}},
	ActManageUsers: {roles: []Role{RoleAdmin}},
	ActEditRound: {roles: []Role{RoleAdmin}, state: func(u *User, t Target) *Error {
		// Criteria and default weights freeze when the round leaves pitching
		// (scoring.md, "Rubrics and rounds").
		if t.Round.Status != RoundPitching {
			return Errorf(ECONFLICT, "", "round %d is %s: its rubric is frozen once pitching ends", t.Round.Number, t.Round.Status)
		}
		return nil
	}},
	ActAdvanceRound: {roles: []Role{RoleAdmin}, state: func(u *User, t Target) *Error {
		want := NextStatus(t.Round.Status)
		if want == "" {
			return Errorf(ECONFLICT, "status", "round %d is closed; it cannot change any more", t.Round.Number)
		}
		if t.NextStatus != want {
			return Errorf(ECONFLICT, "status", "round %d is %s; the only next status is %s", t.Round.Number, t.Round.Status, want)
		}
		// A closed round's results stay as they are, so a run that would
		// finish after the close must finish (or be cancelled) first.
		if want == RoundClosed && len(t.InFlight) > 0 {
			return Errorf(ECONFLICT, "status", "round %d has %s of its pitches queued or running: wait for %s or cancel %s before closing it",
				t.Round.Number, runList(t.InFlight), them(len(t.InFlight)), them(len(t.InFlight)))
		}
		return nil
	}},
	ActFilePitch: {roles: []Role{RoleContestant, RoleShark, RoleAdmin}, state: func(u *User, t Target) *Error {
		return needStatus(t.Round, "file pitches", RoundPitching)
	}},
	ActEditPitch: {roles: []Role{RoleContestant, RoleShark, RoleAdmin}, state: func(u *User, t Target) *Error {
		if t.Pitch.ContestantID != u.ID {
			return Errorf(EFORBIDDEN, "", "you can only edit your own pitches")
		}
		if err := needStatus(t.Round, "edit pitches", RoundPitching); err != nil {
			return err
		}
		return needActive(t.Pitch)
	}},
	ActWithdrawPitch: {roles: []Role{RoleContestant, RoleShark, RoleAdmin}, state: func(u *User, t Target) *Error {
		if t.Pitch.ContestantID != u.ID && u.Role != RoleAdmin {
			return Errorf(EFORBIDDEN, "", "you can only withdraw your own pitches")
		}
		if err := needStatus(t.Round, "withdraw pitches", RoundPitching, RoundJudging); err != nil {
			return err
		}
		return needActive(t.Pitch)
	}},
	ActScore: {roles: []Role{RoleShark}, state: func(u *User, t Target) *Error {
		if err := needStatus(t.Round, "score pitches", RoundJudging); err != nil {
			return err
		}
		if err := needActive(t.Pitch); err != nil {
			return err
		}
		if t.Pitch.ContestantID == u.ID {
			return Errorf(ECONFLICT, "", "you cannot score your own pitch")
		}
		return nil
	}},
	ActSetWeights: {roles: []Role{RoleShark}, state: func(u *User, t Target) *Error {
		if err := needStatus(t.Round, "set personal weights", RoundPitching, RoundJudging); err != nil {
			return err
		}
		if t.HasScored {
			return Errorf(ECONFLICT, "weights", "your weights for round %d are frozen: you have already submitted a scorecard in it", t.Round.Number)
		}
		return nil
	}},
	// An import is a result made elsewhere: it can decide a pitch, so only an
	// admin, or the pitch's own contestant while the round is open and
	// declares that imports count, may add one; nobody changes a closed
	// round's results. Sharks never: they predict the result. Without a
	// pitch (Target.Pitch nil) only an admin may import.
	ActImportRun: {roles: []Role{RoleAdmin, RoleContestant}, state: func(u *User, t Target) *Error {
		if t.Pitch == nil {
			if u.Role != RoleAdmin {
				return Errorf(EFORBIDDEN, "", "only an admin may import a run that measures no pitch")
			}
			return nil
		}
		if t.Round == nil {
			return Errorf(EINTERNAL, "", "permission check for %q is missing its round", ActImportRun)
		}
		if u.Role != RoleAdmin && t.Pitch.ContestantID != u.ID {
			return Errorf(EFORBIDDEN, "", "only the pitch's contestant or an admin may import a run for it")
		}
		if err := ResultsFrozen(t.Round.Number, t.Round.Status, "", "import runs into it"); err != nil {
			return err
		}
		if u.Role == RoleAdmin {
			return nil
		}
		if !t.Round.Measurement.AllowImports {
			return Errorf(EFORBIDDEN, "", "round %d does not allow imported runs: ask an admin", t.Round.Number)
		}
		return nil
	}},
	// Accepting a suspect run adds it to its pitch's result, so not once
	// the pitch's round is closed (Round is nil for a run of no pitch).
	ActAcceptRun: {roles: []Role{RoleAdmin}, state: func(u *User, t Target) *Error {
		if t.Round == nil {
			return nil
		}
		return ResultsFrozen(t.Round.Number, t.Round.Status, "", "accept runs into it")
	}},
	ActSetMeasure: {roles: []Role{RoleAdmin}},
	// The audit log shows every change with its before and after, and
	// webhooks send results out of the app: both are the admins'.
	ActReadAudit:    {roles: []Role{RoleAdmin}},
	ActManageAlerts: {roles: []Role{RoleAdmin}},
	// Uploading replaces a pitch's kernel, so it follows the pitch edit
	// rule (its contestant, while the round is pitching), with admins
	// allowed too: they fix a broken upload for a contestant.
	ActUploadKernel: {roles: []Role{RoleContestant, RoleShark, RoleAdmin}, state: func(u *User, t Target) *Error {
		if t.Pitch.ContestantID != u.ID && u.Role != RoleAdmin {
			return Errorf(EFORBIDDEN, "", "only the pitch's contestant or an admin may upload its kernel")
		}
		if err := needStatus(t.Round, "upload or replace kernels", RoundPitching); err != nil {
			return err
		}
		return needActive(t.Pitch)
	}},
	// A re-pitch carries an earlier pitch forward: its contestant's to do,
	// or an admin's on their behalf. (Filing itself is ActFilePitch.)
	ActRepitch: {state: func(u *User, t Target) *Error {
		if u == nil || (t.Pitch.ContestantID != u.ID && u.Role != RoleAdmin) {
			return Errorf(EFORBIDDEN, "repitch_of", "you can only re-pitch your own pitches")
		}
		return nil
	}},
	ActRevokeToken: {state: func(u *User, t Target) *Error {
		if u == nil {
			return Errorf(EUNAUTHORIZED, "", "log in to revoke tokens")
		}
		if t.TokenOwner != u.ID && u.Role != RoleAdmin {
			return Errorf(EFORBIDDEN, "", "you can only revoke your own tokens")
		}
		return nil
	}},
	// Runs: whoever may judge or file may measure, a contestant only their
	// own pitch (or no pitch); viewers only watch. The messages are the
	// ones the run endpoints have always given.
	ActLaunchRun: {state: func(u *User, t Target) *Error {
		switch {
		case u == nil:
			return ErrUnauthorized
		case u.Role == RoleViewer:
			return Errorf(EFORBIDDEN, "", "viewers may not start runs")
		case t.Pitch != nil && u.Role == RoleContestant && t.Pitch.ContestantID != u.ID:
			return Errorf(EFORBIDDEN, "", "only the pitch's contestant, sharks and admins may run a pitch")
		case t.Pitch != nil && t.Round == nil:
			return Errorf(EINTERNAL, "", "permission check for %q on a pitch is missing its round", ActLaunchRun)
		case t.Pitch != nil:
			return ResultsFrozen(t.Round.Number, t.Round.Status, "pitch", LaunchWhat)
		}
		return nil
	}},
	// Cancelling stops someone's measurement: theirs to stop, or an admin's.
	// A pitch's run that has started shows its running figures to whoever
	// watches it, and a cancelled run never counts: stopping the ones that
	// look bad would leave only good ones in the pitch's result. So once it
	// runs, only an admin stops it (the runner's time limit ends a hang).
	// Who may cancel comes before the run's state: a 409 "already
	// succeeded" would tell anyone a run's outcome (hidden while its
	// round is open, CanSeeResults).
	ActCancelRun: {state: func(u *User, t Target) *Error {
		if u == nil || (u.Role != RoleAdmin && (t.Run.RequestedBy == 0 || t.Run.RequestedBy != u.ID)) {
			return Errorf(EFORBIDDEN, "", "only the person who asked for the run or an admin may cancel it")
		}
		if t.Run.Finished {
			return Errorf(ECONFLICT, "", "run %d is already %s", t.Run.ID, t.Run.Status)
		}
		if u.Role != RoleAdmin && t.Run.OfPitch && t.Run.Running {
			return Errorf(EFORBIDDEN, "", "run %d of a pitch is measuring: only an admin may stop it now (a pitch's runs are cancelled by their requester only while queued, so no figure seen running decides whether a run counts)", t.Run.ID)
		}
		return nil
	}},
	// A repeat is a new run of the same request, so it needs what starting
	// a run needs; only a run that did not finish its measurement here is
	// worth repeating (an import has nothing to repeat).
	ActRepeatRun: {state: func(u *User, t Target) *Error {
		switch {
		case u == nil:
			return ErrUnauthorized
		case u.Role == RoleViewer:
			return Errorf(EFORBIDDEN, "", "viewers may not start runs")
		case t.Run.Imported:
			return Errorf(ECONFLICT, "", "run %d was imported: there is nothing here to repeat", t.Run.ID)
		case !t.Run.Retryable:
			return Errorf(ECONFLICT, "", "run %d is %s: only a failed or cancelled run is repeated", t.Run.ID, t.Run.Status)
		}
		return nil
	}},
	ActVote: {roles: []Role{RoleShark}, state: func(u *User, t Target) *Error {
		if err := needStatus(t.Round, "vote", RoundJudging); err != nil {
			return err
		}
		if t.Pitch.RoundNumber != t.Round.Number {
			return Errorf(EINVALID, "pitch", "pitch %d is not in round %d", t.Pitch.ID, t.Round.Number)
		}
		if err := needActive(t.Pitch); err != nil {
			return err
		}
		// Our rule, not the seeds': a shark who also filed a pitch may not
		// vote for it, for the same reason they may not score it.
		if t.Pitch.ContestantID == u.ID {
			return Errorf(ECONFLICT, "pitch", "you cannot vote for your own pitch")
		}
		return nil
	}},
}

// needsRound and needsPitch say which actions need which parts of Target; a
// missing part is a programming error, reported instead of a nil dereference.
var (
	needsRound = map[Action]bool{ActEditRound: true, ActAdvanceRound: true, ActFilePitch: true, ActEditPitch: true,
		ActWithdrawPitch: true, ActScore: true, ActSetWeights: true, ActVote: true, ActUploadKernel: true}
	needsPitch = map[Action]bool{ActEditPitch: true, ActWithdrawPitch: true, ActScore: true, ActVote: true, ActUploadKernel: true, ActRepitch: true}
	needsRun   = map[Action]bool{ActCancelRun: true, ActRepeatRun: true}
)

// Can returns nil when user may do action on target, else an *Error:
// EUNAUTHORIZED when nobody is logged in and the action needs someone,
// EFORBIDDEN when the role (or ownership) forbids it, ECONFLICT when the
// state of the round or pitch does.
func Can(user *User, action Action, t Target) error {
	r, ok := rules[action]
	if !ok {
		return Errorf(EINTERNAL, "", "unknown action %q", action)
	}
	if err := r.roleAllows(user, action); err != nil {
		return err
	}
	if r.state == nil {
		return nil
	}
	if needsRound[action] && t.Round == nil || needsPitch[action] && t.Pitch == nil || needsRun[action] && t.Run == nil {
		return Errorf(EINTERNAL, "", "permission check for %q is missing its target", action)
	}
	if err := r.state(user, t); err != nil {
		return err
	}
	return nil
}

// CanRole returns nil when user's role may do action on some target: the
// role column of the table alone, for refusing a request before reading
// what it is about (an import's body, say). Can still decides the request.
func CanRole(user *User, action Action) error {
	r, ok := rules[action]
	if !ok {
		return Errorf(EINTERNAL, "", "unknown action %q", action)
	}
	if err := r.roleAllows(user, action); err != nil {
		return err // a nil *Error would make a non-nil error
	}
	return nil
}

func (r rule) roleAllows(user *User, action Action) *Error {
	if r.roles != nil {
		if user == nil {
			return Errorf(EUNAUTHORIZED, "", "log in to %s", action)
		}
		allowed := false
		for _, role := range r.roles {
			if user.Role == role {
				allowed = true
				break
			}
		}
		if !allowed {
			return Errorf(EFORBIDDEN, "", "a %s may not %s", user.Role, action)
		}
	}
	return nil
}

// DemotesAdmin reports whether giving u the role to takes an admin away;
// CheckRoleChange then needs the number of admins.
func DemotesAdmin(u *User, to Role) bool {
	return u.Role == RoleAdmin && to != RoleAdmin
}

// CheckRoleChange says whether u may be given the role to, admins being how
// many admins there are (counted only when DemotesAdmin): demoting the last
// admin would leave nobody able to run rounds. Who may change roles at all
// is ActManageUsers.
func CheckRoleChange(u *User, to Role, admins int) error {
	if DemotesAdmin(u, to) && admins <= 1 {
		return Errorf(ECONFLICT, "role", "%s is the last admin; make someone else admin first", u.Login)
	}
	return nil
}

// NextStatus is the only status a round may move to, "" once closed.
func NextStatus(s RoundStatus) RoundStatus {
	switch s {
	case RoundPitching:
		return RoundJudging
	case RoundJudging:
		return RoundClosed
	}
	return ""
}

// ValidStatus reports whether s is one of the three round statuses.
func ValidStatus(s RoundStatus) bool {
	return s == RoundPitching || s == RoundJudging || s == RoundClosed
}

// LaunchWhat is what a closed round refuses on its pitches' runs (starting
// or repeating one), with the way to measure the variant anyway.
const LaunchWhat = "start a run of its pitches; run the variant without a pitch to measure it again"

// ResultsFrozen refuses, once round number is closed, what would change its
// results (what: "import runs into it"): nil while it is open. The access
// rules apply it, and the store again in the transaction that writes, so a
// round closed meanwhile is seen (field names the input that points at the
// round, "" for none).
func ResultsFrozen(number int, status RoundStatus, field, what string) *Error {
	if status != RoundClosed {
		return nil
	}
	return Errorf(ECONFLICT, field, "round %d is closed: its results stay as they are, and nobody (admins neither) may %s", number, what)
}

// runList names run ids for a message: "run 4", "runs 4, 7 and 9".
func runList(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("run %d", ids[0])
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return "runs " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// them is "it" or "them" for n runs.
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func needStatus(r *Round, what string, allowed ...RoundStatus) *Error {
	for _, s := range allowed {
		if r.Status == s {
			return nil
		}
	}
	if r.Status == RoundClosed {
		return Errorf(ECONFLICT, "", "round %d is closed: you can no longer %s", r.Number, what)
	}
	return Errorf(ECONFLICT, "", "round %d is %s: you cannot %s now", r.Number, r.Status, what)
}

func needActive(p *Pitch) *Error {
	if p.Status != PitchActive {
		return Errorf(ECONFLICT, "", "pitch %d has been withdrawn", p.ID)
	}
	return nil
}
