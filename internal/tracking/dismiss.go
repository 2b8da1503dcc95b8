package tracking

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// An alert's lifecycle, as Bencher's: an alert is active until someone
// dismisses it with a written reason (a known slowdown, a noisy machine, a
// bound since raised); a dismissed alert stays stored and listed with who
// dismissed it, when and why, and the dismissal can be undone. Only admins
// dismiss (pitches.ActManageAlerts, as for thresholds): a run's requester
// is the contestant or shark whose kernel regressed, and an alert they
// could clear themselves would stop warning the others who judge it.

// AlertState filters alerts: StateAll (the default, as Bencher's alert
// list shows every alert with its status), StateActive or StateDismissed.
type AlertState string

const (
	StateAll       AlertState = "all"
	StateActive    AlertState = "active"
	StateDismissed AlertState = "dismissed"
)

// ParseAlertState reads the state parameter of an alert listing: empty is
// StateAll; anything but all, active or dismissed is EBADREQUEST naming
// "state", as every malformed query parameter is.
func ParseAlertState(s string) (AlertState, error) {
	switch st := AlertState(strings.TrimSpace(s)); st {
	case "", StateAll:
		return StateAll, nil
	case StateActive, StateDismissed:
		return st, nil
	}
	return "", pitches.Errorf(pitches.EBADREQUEST, "state", "state must be active, dismissed or all, not %q", s)
}

// Dismissal is who dismissed an alert, when and why. By is 0 once the
// user is deleted; the alert stays dismissed (At and Reason stay).
type Dismissal struct {
	By      int64     `json:"by,omitzero"`
	ByLogin string    `json:"by_login,omitempty"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason"`
}

// AlertFilter selects alerts: those of RunID (> 0) or every run's, in
// State (default all), with ids below Before (> 0), at most Limit.
type AlertFilter struct {
	RunID  int64
	State  AlertState
	Before int64
	Limit  int
}

// MaxDismissReason bounds a dismissal's reason: a short line for lists and
// the run page, not an essay (the discussion belongs elsewhere).
const MaxDismissReason = 500

// CheckDismissReason checks a dismissal's reason and returns it trimmed of
// the spaces around it: one line of text (no control characters, so that
// nothing can break the lists it is shown in), at most MaxDismissReason
// bytes, and not empty, since a dismissal without a why leaves the next
// reader guessing. Checked before trimming, so that a trailing newline is
// refused rather than cut. Errors are EINVALID naming "reason".
func CheckDismissReason(reason string) (string, error) {
	if err := pitches.CheckLine("reason", reason, MaxDismissReason); err != nil {
		return "", err
	}
	reason = pitches.TrimLine(reason)
	if reason == "" {
		return "", pitches.Errorf(pitches.EINVALID, "reason", "dismissing an alert needs a written reason (why the slowdown is not a regression)")
	}
	return reason, nil
}

// State is the alert's lifecycle state: StateDismissed or StateActive.
func (a Alert) State() AlertState {
	if a.Dismissed != nil {
		return StateDismissed
	}
	return StateActive
}

// In reports whether the alert is in state st (StateAll: always).
func (a Alert) In(st AlertState) bool {
	return st == "" || st == StateAll || a.State() == st
}

// CheckDismiss refuses to dismiss an alert already dismissed (ECONFLICT
// naming who did and why): a second dismissal would overwrite the first's
// reason without a word; undo it first.
func (a Alert) CheckDismiss() error {
	if d := a.Dismissed; d != nil {
		who := d.ByLogin
		if who == "" {
			who = "a deleted user"
		}
		return pitches.Errorf(pitches.ECONFLICT, "", "alert %d was already dismissed by %s on %s: %s", a.ID, who, d.At.UTC().Format("2006-01-02 15:04"), d.Reason)
	}
	return nil
}

// CheckUndismiss refuses to undo the dismissal of an active alert
// (ECONFLICT).
func (a Alert) CheckUndismiss() error {
	if a.Dismissed == nil {
		return pitches.Errorf(pitches.ECONFLICT, "", "alert %d is not dismissed", a.ID)
	}
	return nil
}

// MarshalJSON writes the alert with its "state" (active or dismissed),
// derived from Dismissed so that the two can never disagree.
func (a Alert) MarshalJSON() ([]byte, error) {
	type plain Alert
	return json.Marshal(struct {
		plain
		State AlertState `json:"state"`
	}{plain(a), a.State()})
}
