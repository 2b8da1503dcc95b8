package tracking_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// A dismissal's reason is one short line, trimmed of the spaces around it;
// empty, a control character anywhere (a trailing newline included: it is
// refused, not cut) or more than MaxDismissReason bytes is EINVALID naming
// reason.
func TestCheckDismissReason(t *testing.T) {
	got, err := tracking.CheckDismissReason("  noisy machine: rerun on H100-3  ")
	if err != nil || got != "noisy machine: rerun on H100-3" {
		t.Fatalf("a good reason: %q, %v", got, err)
	}
	if _, err := tracking.CheckDismissReason(strings.Repeat("é", tracking.MaxDismissReason/2)); err != nil {
		t.Errorf("a reason of exactly %d bytes: %v", tracking.MaxDismissReason, err)
	}
	for name, reason := range map[string]string{
		"empty": "", "spaces": "   ", "a newline": "known\nslowdown", "a trailing newline": "known slowdown\n",
		"ESC": "known \u001b[2J slowdown", "C1": "known\u0085", "invalid UTF-8": "known \xff",
		"too long": strings.Repeat("a", tracking.MaxDismissReason+1),
	} {
		_, err := tracking.CheckDismissReason(reason)
		if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != "reason" {
			t.Errorf("%s: %v, want EINVALID naming reason", name, err)
		}
	}
}

// The state filter: empty is all; a wrong value is a 400 naming state.
func TestParseAlertState(t *testing.T) {
	for in, want := range map[string]tracking.AlertState{"": tracking.StateAll, "all": tracking.StateAll,
		"active": tracking.StateActive, " dismissed ": tracking.StateDismissed} {
		if got, err := tracking.ParseAlertState(in); err != nil || got != want {
			t.Errorf("ParseAlertState(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Active", "open", "silenced"} {
		if _, err := tracking.ParseAlertState(in); pitches.ErrorCode(err) != pitches.EBADREQUEST || pitches.ErrorField(err) != "state" {
			t.Errorf("ParseAlertState(%q): %v, want EBADREQUEST naming state", in, err)
		}
	}
}

// An alert is dismissed once and restored once: a second dismissal would
// overwrite the first one's reason (409 naming who and why); restoring an
// active alert is a 409 too. Its JSON carries the state it is in.
func TestAlertLifecycle(t *testing.T) {
	a := tracking.Alert{ID: 4, RunID: 9}
	if a.State() != tracking.StateActive || !a.In(tracking.StateActive) || a.In(tracking.StateDismissed) || !a.In(tracking.StateAll) {
		t.Fatalf("a new alert: state %s", a.State())
	}
	if err := a.CheckDismiss(); err != nil {
		t.Fatalf("dismiss an active alert: %v", err)
	}
	if err := a.CheckUndismiss(); pitches.ErrorCode(err) != pitches.ECONFLICT {
		t.Errorf("restore an active alert: %v, want ECONFLICT", err)
	}
	b, _ := json.Marshal(a)
	if !strings.Contains(string(b), `"state":"active"`) || strings.Contains(string(b), `"dismissed"`) {
		t.Errorf("an active alert's JSON: %s", b)
	}

	a.Dismissed = &tracking.Dismissal{By: 1, ByLogin: "admin", At: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Reason: "the card was hot"}
	if a.State() != tracking.StateDismissed || a.In(tracking.StateActive) || !a.In(tracking.StateDismissed) {
		t.Fatalf("a dismissed alert: state %s", a.State())
	}
	err := a.CheckDismiss()
	if pitches.ErrorCode(err) != pitches.ECONFLICT || !strings.Contains(pitches.ErrorMessage(err), "admin") ||
		!strings.Contains(pitches.ErrorMessage(err), "the card was hot") {
		t.Errorf("dismiss a dismissed alert: %v, want ECONFLICT naming who and why", err)
	}
	if err := a.CheckUndismiss(); err != nil {
		t.Errorf("restore a dismissed alert: %v", err)
	}
	b, _ = json.Marshal(a)
	var back struct {
		State     string              `json:"state"`
		Dismissed *tracking.Dismissal `json:"dismissed"`
		RunID     int64               `json:"run_id"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.State != "dismissed" || back.Dismissed == nil ||
		back.Dismissed.Reason != "the card was hot" || back.Dismissed.ByLogin != "admin" || back.RunID != 9 {
		t.Errorf("a dismissed alert's JSON: %s", b)
	}
}
