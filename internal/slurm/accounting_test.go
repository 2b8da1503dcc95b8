package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/slurm"
)

// writeResult puts a valid bench document (cpu, tests suite, 9 shapes)
// where the run's job would have written it.
func (g *rig) writeResult(id int64) {
	g.fake.t.Helper()
	doc, err := os.ReadFile("../runner/testdata/cpu-tests-aa.json")
	if err != nil {
		g.fake.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.runDir(id), "result.json"), doc, 0o600); err != nil {
		g.fake.t.Fatal(err)
	}
}

const sacctDown = "sacct: error: Problem talking to the database: Connection refused\n"

// A job squeue shows COMPLETED exited 0 (Slurm records COMPLETED for no
// other exit): with slurmdbd down, its run is judged from its result
// document, not failed for want of sacct's exit code.
func TestExecutorCompletedWhileSacctDown(t *testing.T) {
	g := newRig(t)
	g.fake.set("sacct.fail", sacctDown)
	run := g.submitWith("700", func(run *runner.Run) {
		g.writeResult(run.ID)
		g.fake.set("squeue", "700|"+slurm.JobName(run.ID)+"|COMPLETED|None|node7|"+g.runDir(run.ID)+"\n")
	})
	got := g.wait(run.ID)
	if got.Status != runner.StatusSucceeded || len(got.Shapes) != 9 {
		t.Errorf("run: %s %q, %d shapes; want succeeded with 9", got.Status, got.Reason, len(got.Shapes))
	}
}

// COMPLETED with no valid document still fails as a local child's exit 0
// without one would: squeue's state gives the exit code, not the result.
func TestExecutorCompletedWithoutResultWhileSacctDown(t *testing.T) {
	g := newRig(t)
	g.fake.set("sacct.fail", sacctDown)
	run := g.submitWith("701", func(run *runner.Run) {
		g.fake.set("squeue", "701|"+slurm.JobName(run.ID)+"|COMPLETED|None|node7|"+g.runDir(run.ID)+"\n")
	})
	got := g.wait(run.ID)
	if got.Status != runner.StatusFailed || !strings.Contains(got.Reason, "no valid result") || strings.Contains(got.Reason, "exit code is unknown") {
		t.Errorf("run: %s %q; want failed for its missing document", got.Status, got.Reason)
	}
}

// A job squeue has forgotten while slurmdbd is down is not lost: its run
// waits for sacct to answer, however long past the grace, and is then
// judged from the record.
func TestExecutorForgottenJobWaitsForSacct(t *testing.T) {
	g := newRig(t) // grace 200ms
	g.fake.set("sacct.fail", sacctDown)
	run := g.submitWith("702", func(run *runner.Run) {
		g.writeResult(run.ID)
		g.fake.set("squeue", "")
	})
	time.Sleep(600 * time.Millisecond) // three graces of failed sacct calls
	if got, err := g.r.Get(context.Background(), run.ID); err != nil || got.Status != runner.StatusRunning {
		t.Fatalf("run while sacct is down: %s %q (%v); want still running", got.Status, got.Reason, err)
	}
	g.fake.set("sacct", "702|"+slurm.JobName(run.ID)+"|COMPLETED|0:0|node7\n")
	if err := os.Remove(filepath.Join(g.fake.state, "sacct.fail")); err != nil {
		t.Fatal(err)
	}
	if got := g.wait(run.ID); got.Status != runner.StatusSucceeded {
		t.Errorf("run once sacct answers: %s %q; want succeeded", got.Status, got.Reason)
	}
}

// A job known to neither squeue nor a working sacct for longer than the
// grace is still lost.
func TestExecutorLostAfterGrace(t *testing.T) {
	g := newRig(t)
	run := g.submitWith("703", func(*runner.Run) { g.fake.set("squeue", ""); g.fake.set("sacct", "") })
	got := g.wait(run.ID)
	if got.Status != runner.StatusFailed || !strings.Contains(got.Reason, "lost: slurm job 703") {
		t.Errorf("run: %s %q; want lost", got.Status, got.Reason)
	}
}
