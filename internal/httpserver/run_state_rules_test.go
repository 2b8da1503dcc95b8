package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// finishedRun stores a run of alice's measured here and finished with
// status (by hand: no worker runs).
func (a *app) finishedRun(status runner.Status) *runner.Run {
	a.t.Helper()
	ctx := context.Background()
	run, err := a.db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Device: "cpu",
		RequestedBy: a.users["alice"].ID})
	if err != nil {
		a.t.Fatalf("enqueue: %v", err)
	}
	if err := a.db.MarkRunning(ctx, run.ID); err != nil {
		a.t.Fatalf("mark running: %v", err)
	}
	res := &runner.Result{Doc: json.RawMessage(`{"schema_version":2,"status":"ok"}`), Speedup: runner.Interval{Value: 1.2}, Correct: true,
		Shapes: []runner.Shape{{Index: 0, Label: "s", BaselineMedianUs: 12, VariantMedianUs: 10, Speedup: runner.Interval{Value: 1.2}, Correct: true}}}
	if status == runner.StatusFailed {
		err = a.db.MarkFailed(ctx, run.ID, runner.Finish{Reason: "crashed"})
	} else {
		err = a.db.MarkMeasured(ctx, run.ID, status, res, runner.Finish{})
	}
	if err != nil {
		a.t.Fatalf("finish run as %s: %v", status, err)
	}
	return run
}

// Only a failed or cancelled run is re-queued (docs/api.md): one that
// measured something has its answer, and repeating it would shop for a
// better figure. The refusal names the status.
func TestRequeueOnlyFailedOrCancelled(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	before := a.runCount()
	for _, st := range []runner.Status{runner.StatusSucceeded, runner.StatusIncorrect, runner.StatusSuspect} {
		run := a.finishedRun(st)
		r := a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", run.ID), "alice", nil)
		r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
		wantContains(t, r.body, string(st))
		before++
	}
	if n := a.runCount(); n != before {
		t.Fatalf("%d runs, want %d: a refused requeue stored one", n, before)
	}
	failed := a.finishedRun(runner.StatusFailed)
	a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", failed.ID), "alice", nil).wantStatus(t, http.StatusCreated)
}

// Who may cancel is checked before the run's state: a viewer or another
// contestant learns nothing of a run's outcome from the refusal.
func TestCancelChecksPermissionBeforeState(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	run := a.finishedRun(runner.StatusSucceeded)
	path := fmt.Sprintf("/api/runs/%d/cancel", run.ID)
	for _, login := range []string{"vera", "bob", "oracle"} {
		r := a.api("POST", path, login, nil)
		r.wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
		if strings.Contains(r.body, "succeeded") {
			t.Fatalf("%s's refusal tells the run's status: %s", login, r.body)
		}
	}
	r := a.browser().login("vera").post(fmt.Sprintf("/runs/%d/cancel", run.ID), url.Values{})
	r.wantStatus(t, http.StatusForbidden)
	wantNotContains(t, r.body, "already succeeded")
	a.api("POST", path, "alice", nil).wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	a.api("POST", path, "admin", nil).wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
}
