package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/slurm"
)

// writeBin replaces one of the fake's commands.
func (f *fakeSlurm) writeBin(name, body string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// A command that hangs while a child of its own holds its stdout (a site's
// wrapper script) still returns at the client's timeout.
func TestClientTimeoutIsHard(t *testing.T) {
	f := newFakeSlurm(t)
	f.writeBin("squeue", "sleep 5 &\nsleep 5")
	c := &slurm.Client{BinDir: f.bin, Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := c.Queue(context.Background(), []string{"1"})
	if took := time.Since(start); err == nil || took > 2*time.Second {
		t.Errorf("squeue that hangs: %v after %s; want an error at the timeout", err, took.Round(time.Millisecond))
	}
}

// sbatch that times out after slurmctld took the job: the run follows the
// job it finds by name and comment instead of failing and leaving the job
// to run unfollowed (which a re-queue would have submitted again).
func TestExecutorAdoptsJobAfterSbatchTimeout(t *testing.T) {
	g := newRigWith(t, func(ex *slurm.Executor) { ex.Client.Timeout = 300 * time.Millisecond })
	s := g.fake.state
	// Slurm takes the job (squeue knows it), then sbatch hangs.
	g.fake.writeBin("sbatch", `printf '%s\n' "$@" >> `+s+`/sbatch.args
for a; do case "$a" in --job-name=*) n=${a#--job-name=};; --comment=*) c=${a#--comment=};; esac; done
echo "840|$n|PENDING|Priority||$c" > `+s+`/squeue
sleep 5 &
sleep 5`)
	run, err := g.r.Submit(context.Background(), runnerRequest())
	if err != nil {
		t.Fatal(err)
	}
	dir := g.runDir(run.ID)
	g.fake.waitFile("squeue", "840|")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(dir, "job-id")); string(b) == "840\n" {
			break
		}
		if time.Now().After(deadline) {
			got, _ := g.r.Get(context.Background(), run.ID)
			t.Fatalf("job 840 was not recorded as the run's: run %s %q", got.Status, got.Reason)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.writeResult(run.ID)
	g.fake.set("squeue", "840|"+slurm.JobName(run.ID)+"|COMPLETED|None|node7|"+dir+"\n")
	got := g.wait(run.ID)
	if got.Status != runner.StatusSucceeded || !strings.Contains(got.Log, "slurm job 840: sbatch failed") {
		t.Errorf("adopted run: %s %q\n%s", got.Status, got.Reason, got.Log)
	}
	if n := strings.Count(g.fake.read("sbatch.args"), slurm.JobName(run.ID)+"\n"); n != 1 {
		t.Errorf("sbatch ran %d times for the run", n)
	}
}

func runnerRequest() runner.Request {
	return runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cluster"}
}

// A run's directory on the spool is the server user's alone: it holds an
// open round's per-shape results and a submitted kernel's source, and other
// cluster users may read the shared filesystem.
func TestExecutorRunDirectoryIsPrivate(t *testing.T) {
	g := newRig(t)
	run := g.submit("850")
	dir := g.runDir(run.ID)
	deadline := time.Now().Add(5 * time.Second)
	for _, err := os.Stat(filepath.Join(dir, "job-id")); err != nil; _, err = os.Stat(filepath.Join(dir, "job-id")) {
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for name, want := range map[string]os.FileMode{"": 0o700, "job.sh": 0o700, "job-id": 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Join(filepath.Base(dir), name), got, want)
		}
	}
}

// The server's environment holds its secrets; a job sees only what bench
// needs: sbatch runs with a minimal environment and exports it by name
// instead of its default --export=ALL.
func TestExecutorJobEnvironment(t *testing.T) {
	t.Setenv("PITCHTANK_SMTP_PASSWORD", "hunter2")
	t.Setenv("CUDA_HOME", "/usr/local/cuda-12")
	t.Setenv("SLURM_CONF", "/etc/slurm/slurm.conf")
	g := newRig(t)
	g.submit("860")
	env := g.fake.read("sbatch.env")
	for _, want := range []string{"PATH=", "CUDA_HOME=/usr/local/cuda-12", "SLURM_CONF=/etc/slurm/slurm.conf"} {
		if !strings.Contains(env, want) {
			t.Errorf("sbatch's environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "hunter2") {
		t.Errorf("sbatch was given the server's secrets:\n%s", env)
	}
	var export string
	for _, a := range strings.Split(g.fake.read("sbatch.args"), "\n") {
		if strings.HasPrefix(a, "--export=") {
			export = a
		}
	}
	names := strings.Split(strings.TrimPrefix(export, "--export="), ",")
	if !slices.Contains(names, "PATH") || !slices.Contains(names, "CUDA_HOME") || slices.Contains(names, "ALL") || slices.Contains(names, "PITCHTANK_SMTP_PASSWORD") {
		t.Errorf("sbatch's %q: want PATH and CUDA_HOME by name, not ALL", export)
	}
}

// A cancel whose scancel fails (slurmctld busy) is sent again at each poll,
// and the run keeps its slot until Slurm reports the job's end: recording
// it cancelled while the job ran on would let the target exceed max_jobs.
func TestExecutorCancelRetriesScancel(t *testing.T) {
	g := newRig(t)
	s := g.fake.state
	g.fake.writeBin("scancel", `echo "$@" >> `+s+`/scancel
if [ -f `+s+`/scancel.fail ]; then echo "scancel: error: Kill job error on job id $1: Socket timed out on send/recv operation" >&2; exit 1; fi`)
	g.fake.set("scancel.fail", "")
	run := g.submit("870")
	name := slurm.JobName(run.ID)
	g.fake.set("squeue", "870|"+name+"|RUNNING|None|node7|x\n")
	events, stop := g.r.Subscribe(run.ID)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- g.r.Cancel(context.Background(), run.ID) }()
	g.fake.waitFile("scancel", "870\n870\n870\n") // sent again at later polls
	if got, err := g.r.Get(context.Background(), run.ID); err != nil || got.Status != runner.StatusRunning {
		t.Fatalf("run while its job runs on: %s %q (%v); want still running", got.Status, got.Reason, err)
	}
	if err := removeState(g.fake, "scancel.fail"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(5 * time.Second)
	for sent := false; !sent; {
		select {
		case ev := <-events:
			sent = strings.Contains(ev.Line, "scancel sent")
		case <-timeout:
			t.Fatal("scancel never went through")
		}
	}
	g.fake.set("squeue", "870|"+name+"|CANCELLED|None|node7|x\n")
	g.fake.set("sacct", "870|"+name+"|CANCELLED by 0|0:15|node7\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := g.wait(run.ID); got.Status != runner.StatusCancelled || got.Reason != "cancelled by user" {
		t.Errorf("cancelled run: %s %q\n%s", got.Status, got.Reason, got.Log)
	}
}
