package runner_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// faultCase: a child misbehaves in one way; its run must end with the right
// status and reason, and the run queued after it must still succeed.
type faultCase struct {
	mode       string
	status     runner.Status
	reason     []string // substrings of the reason
	grandchild bool     // the child starts `sleep 300`, which must be dead afterwards
}

func TestFaults(t *testing.T) {
	cases := []faultCase{
		{mode: "crash", status: runner.StatusFailed, reason: []string{"crashed: killed by signal"}},
		{mode: "exit", status: runner.StatusFailed, reason: []string{"crashed: exit status 42", "out of host memory"}},
		{mode: "hang", status: runner.StatusFailed, reason: []string{"timed out after 2s"}, grandchild: true},
		{mode: "garbage", status: runner.StatusFailed, reason: []string{"no valid result", "result: validate"}},
		{mode: "cudaerror", status: runner.StatusFailed, reason: []string{"could not run (exit 3)", "CUDA_ERROR_ILLEGAL_ADDRESS"}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
			r := newRunner(t, runner.Config{
				Command:   standIn(t, map[int64]string{1: tc.mode, 2: "ok"}, pidFile),
				TimeLimit: 2 * time.Second,
				KillGrace: 300 * time.Millisecond,
			})
			ctx := context.Background()
			bad, err := r.Submit(ctx, cpuRequest(1))
			if err != nil {
				t.Fatal(err)
			}
			good, err := r.Submit(ctx, cpuRequest(2))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got := waitDone(t, r, bad.ID, 20*time.Second)
			t.Logf("reason: %s", got.Reason)
			if got.Status != tc.status {
				t.Fatalf("status %s (reason %q), want %s", got.Status, got.Reason, tc.status)
			}
			for _, want := range tc.reason {
				if !strings.Contains(got.Reason, want) {
					t.Errorf("reason %q does not contain %q", got.Reason, want)
				}
			}
			if got.HasResult || len(got.Shapes) != 0 {
				t.Errorf("a failed run stored a result: %+v", got)
			}
			if tc.mode == "hang" {
				if d := time.Since(start); d < 2*time.Second || d > 10*time.Second {
					t.Errorf("the hanging run took %v; want the 2s limit plus the grace period", d)
				}
			}
			if tc.grandchild {
				pid := readPid(t, pidFile, 5*time.Second)
				deadline := time.Now().Add(3 * time.Second)
				for !processGone(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("grandchild %d (sleep 300) survived the process group kill", pid)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			ok := waitDone(t, r, good.ID, 20*time.Second)
			checkOK(t, ok)
		})
	}
}

// checkOK checks a run the "ok" stand-in answered with the A/A fixture.
func checkOK(t *testing.T, run *runner.Run) {
	t.Helper()
	if run.Status != runner.StatusSucceeded {
		t.Fatalf("the run after the fault: %s (%s), want succeeded; stderr:\n%s", run.Status, run.Reason, run.Stderr)
	}
	// The stand-in child writes the fixture: its geomean is the stored one.
	want := fixtureGeomean(t)
	if !run.HasResult || len(run.Shapes) != 9 || !run.Correct || math.Abs(run.Speedup.Value-want) > 1e-9 {
		t.Fatalf("stored result: has %v, %d shapes, correct %v, speedup %v", run.HasResult, len(run.Shapes), run.Correct, run.Speedup)
	}
	if !strings.Contains(run.Log, "a line that is not JSON") {
		t.Errorf("log %q misses the child's non-JSON line", run.Log)
	}
	s := run.Shapes[0]
	if s.Label != "M=1 N=64 K=128" || !(s.VariantMedianUs > 0) || !(s.Speedup.Lo < s.Speedup.Value && s.Speedup.Value < s.Speedup.Hi) || s.VariantSamples < 10 {
		t.Errorf("shape 0 = %+v", s)
	}
	if run.StartedAt.IsZero() || run.FinishedAt.Before(run.StartedAt) {
		t.Errorf("times: started %v finished %v", run.StartedAt, run.FinishedAt)
	}
}

// fixtureGeomean reads summary.geomean_speedup of the fixture, so that a
// fixture rewritten with -update-fixture (when the result schema grows)
// needs no edit here.
func fixtureGeomean(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile(fixtureAA)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Summary struct {
			GeomeanSpeedup float64 `json:"geomean_speedup"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b, &d); err != nil || !(d.Summary.GeomeanSpeedup > 0) {
		t.Fatalf("fixture %s: geomean %v, %v", fixtureAA, d.Summary.GeomeanSpeedup, err)
	}
	return d.Summary.GeomeanSpeedup
}

func TestCancelMidRun(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	r := newRunner(t, runner.Config{
		Command:   standIn(t, map[int64]string{1: "slow", 2: "ok"}, pidFile),
		KillGrace: time.Second,
	})
	ctx := context.Background()
	run, err := r.Submit(ctx, cpuRequest(1))
	if err != nil {
		t.Fatal(err)
	}
	events, stop := r.Subscribe(run.ID)
	defer stop()
	next, err := r.Submit(ctx, cpuRequest(2))
	if err != nil {
		t.Fatal(err)
	}
	// Wait for live progress: the child is really running.
	timeout := time.After(10 * time.Second)
	for seen := 0; seen < 3; {
		select {
		case ev := <-events:
			if ev.Type == "progress" {
				if ev.Progress.Shapes != 9 || ev.Progress.Phase != "timing" {
					t.Fatalf("progress event %+v", ev.Progress)
				}
				seen++
			}
		case <-timeout:
			t.Fatal("no progress from the running child")
		}
	}
	pid := readPid(t, pidFile, 5*time.Second)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.Cancel(cctx, run.ID); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusCancelled || got.Reason != "cancelled by user" {
		t.Fatalf("after Cancel the run is %s (%q)", got.Status, got.Reason)
	}
	// The subscriber sees the terminal status, then the channel closes.
	var last runner.Event
	for ev := range events {
		last = ev
	}
	if last.Type != "status" || last.Status != runner.StatusCancelled {
		t.Fatalf("last event %+v", last)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived the cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Cancelling again is a conflict; the next run goes on.
	if err := r.Cancel(ctx, run.ID); err == nil {
		t.Fatal("cancelling a finished run: want an error")
	}
	checkOK(t, waitDone(t, r, next.ID, 20*time.Second))
}

func TestCancelQueued(t *testing.T) {
	// A runner that has not started has no workers: the run stays queued.
	r, err := runner.New(runner.Config{
		Store:   openDB(t, filepath.Join(t.TempDir(), "pitchtank.db")),
		Catalog: runner.KernelsCatalog{},
		Devices: []string{"cpu"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := r.Submit(ctx, cpuRequest(1))
	if err != nil {
		t.Fatal(err)
	}
	events, stop := r.Subscribe(run.ID)
	defer stop()
	if err := r.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, run.ID)
	if err != nil || got.Status != runner.StatusCancelled || got.Reason != "cancelled by user" || !got.StartedAt.IsZero() {
		t.Fatalf("cancelled queued run = %+v, %v", got, err)
	}
	var evs []runner.Event
	for ev := range events {
		evs = append(evs, ev)
	}
	if len(evs) != 2 || evs[0].Status != runner.StatusQueued || evs[1].Status != runner.StatusCancelled {
		t.Fatalf("events %+v; want queued then cancelled", evs)
	}
	if err := r.Cancel(ctx, run.ID); err == nil {
		t.Fatal("cancelling twice: want a conflict")
	}
}
