package slurm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/slurm"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// fakeSlurm is a directory of sbatch, squeue, sacct and scancel scripts
// that answer from files the test writes: every job state Slurm can report,
// NODE_FAIL and PREEMPTED included, which a single test node cannot
// produce. The runner, the store (SQLite), the executor, the poller, the
// spool files and the processes are real.
type fakeSlurm struct {
	t     *testing.T
	bin   string
	state string
}

func newFakeSlurm(t *testing.T) *fakeSlurm {
	dir := t.TempDir()
	f := &fakeSlurm{t: t, bin: filepath.Join(dir, "bin"), state: filepath.Join(dir, "state")}
	for _, d := range []string{f.bin, f.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := f.state
	scripts := map[string]string{
		// sbatch waits while sbatch.hold exists, so a test can set what
		// squeue and sacct will say of a job before the job exists.
		"sbatch": `[ -f ` + s + `/sbatch.hold ] && echo held >> ` + s + `/sbatch.held
while [ -f ` + s + `/sbatch.hold ]; do sleep 0.01; done
printf '%s\n' "$@" >> ` + s + `/sbatch.args
env > ` + s + `/sbatch.env
if [ -f ` + s + `/sbatch.fail ]; then cat ` + s + `/sbatch.fail >&2; exit 1; fi
cat ` + s + `/next-id`,
		// squeue fails when it knows none of the jobs asked about, as the real one does.
		"squeue": `if [ -s ` + s + `/squeue ]; then cat ` + s + `/squeue; else echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; fi`,
		// sacct fails while sacct.fail exists (slurmdbd down).
		"sacct": `if [ -f ` + s + `/sacct.fail ]; then cat ` + s + `/sacct.fail >&2; exit 1; fi
[ -f ` + s + `/sacct ] && cat ` + s + `/sacct; exit 0`,
		"scancel": `echo "$@" >> ` + s + `/scancel`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// set writes a state file atomically (the poller may be reading it).
func (f *fakeSlurm) set(name, content string) {
	f.t.Helper()
	tmp := filepath.Join(f.state, name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.state, name)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeSlurm) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(f.state, name))
	return string(b)
}

// waitFile waits until the state file name holds want.
func (f *fakeSlurm) waitFile(name, want string) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(f.read(name), want) {
		if time.Now().After(deadline) {
			f.t.Fatalf("%s never held %q: %q", name, want, f.read(name))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type rig struct {
	fake  *fakeSlurm
	r     *runner.Runner
	spool string
}

func newRig(t *testing.T) *rig { return newRigWith(t, nil) }

// newRigWith is newRig with the executor changed by setup before the
// runner starts.
func newRigWith(t *testing.T, setup func(*slurm.Executor)) *rig {
	fake := newFakeSlurm(t)
	spool := filepath.Join(t.TempDir(), "spool")
	if err := os.MkdirAll(spool, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	client := &slurm.Client{BinDir: fake.bin}
	ex := &slurm.Executor{
		Target: slurm.Target{Name: "cluster", Partition: "debug", BenchDevice: "cpu", MaxJobs: 2},
		Client: client, Poller: &slurm.Poller{Client: client, Interval: 20 * time.Millisecond, Grace: 200 * time.Millisecond},
		Web: "/opt/pitchtank/web", Spool: spool, Tail: 20 * time.Millisecond,
	}
	if setup != nil {
		setup(ex)
	}
	r, err := runner.New(runner.Config{Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}, TimeLimit: 10 * time.Minute,
		Remote: []runner.Remote{{Name: "cluster", Executor: ex}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return &rig{fake: fake, r: r, spool: spool}
}

// submit queues a cpu run whose sbatch answers job.
func (g *rig) submit(job string) *runner.Run {
	g.fake.t.Helper()
	g.fake.set("next-id", job+"\n")
	run, err := g.r.Submit(context.Background(), runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cluster"})
	if err != nil {
		g.fake.t.Fatal(err)
	}
	g.fake.waitFile("sbatch.args", slurm.JobName(run.ID)+"\n")
	return run
}

// submitWith submits a run as job, and lets prepare set the fake's state
// for it (it is given the run, whose folder the executor has staged) while
// sbatch is held: the poller then never sees the job with the state of an
// earlier case.
func (g *rig) submitWith(job string, prepare func(run *runner.Run)) *runner.Run {
	g.fake.t.Helper()
	g.fake.set("sbatch.hold", "")
	g.fake.set("next-id", job+"\n")
	run, err := g.r.Submit(context.Background(), runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cluster"})
	if err != nil {
		g.fake.t.Fatal(err)
	}
	g.fake.waitFile("sbatch.held", "held\n")
	prepare(run)
	for _, f := range []string{"sbatch.hold", "sbatch.held"} {
		if err := os.Remove(filepath.Join(g.fake.state, f)); err != nil {
			g.fake.t.Fatal(err)
		}
	}
	g.fake.waitFile("sbatch.args", slurm.JobName(run.ID)+"\n")
	return run
}

func (g *rig) runDir(id int64) string { return filepath.Join(g.spool, fmt.Sprintf("run-%d", id)) }

func (g *rig) wait(id int64) *runner.Run {
	g.fake.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := g.r.Get(context.Background(), id)
		if err != nil {
			g.fake.t.Fatal(err)
		}
		if run.Status.Finished() {
			return run
		}
		if time.Now().After(deadline) {
			g.fake.t.Fatalf("run %d still %s", id, run.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A run's life on Slurm as its watchers see it: submitted with the
// target's options, PENDING with its reason, RUNNING on a node, progress
// from the job's stdout on the spool, COMPLETED with bench's exit code 0
// and its document: succeeded, the result stored.
func TestExecutorRunLife(t *testing.T) {
	g := newRig(t)
	run := g.submit("101")
	events, stop := g.r.Subscribe(run.ID)
	defer stop()
	args := g.fake.read("sbatch.args")
	for _, want := range []string{"--partition=debug", "--time=0-00:10:00", "--no-requeue", "--output=" + g.runDir(run.ID) + "/stdout", "--comment=" + g.runDir(run.ID)} {
		if !strings.Contains(args, want+"\n") {
			t.Errorf("sbatch was not given %s:\n%s", want, args)
		}
	}
	script, err := os.ReadFile(filepath.Join(g.runDir(run.ID), "job.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "exec '/opt/pitchtank/web' 'bench' '--problem' 'nvfp4_group_gemm'") || !strings.Contains(string(script), "'--device' 'cpu'") ||
		!strings.Contains(string(script), "'--max-time' '9m0s'") {
		t.Errorf("job script:\n%s", script)
	}

	comment := g.runDir(run.ID)
	next := func(want string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if strings.Contains(ev.Line, want) || (ev.Type == "progress" && want == "progress") {
					return
				}
			case <-timeout:
				t.Fatalf("no event with %q", want)
			}
		}
	}
	g.fake.set("squeue", "101|"+slurm.JobName(run.ID)+"|PENDING|Resources||"+comment+"\n")
	next("slurm job 101 pending: Resources")
	g.fake.set("squeue", "101|"+slurm.JobName(run.ID)+"|RUNNING|None|node7|"+comment+"\n")
	next("slurm job 101 running on node7")
	stdout := `{"type":"progress","phase":"timing","shape":2,"shapes":9,"samples":40,"median_us":12.5}` + "\n"
	if err := os.WriteFile(filepath.Join(g.runDir(run.ID), "stdout"), []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	next("progress")
	doc, err := os.ReadFile("../runner/testdata/cpu-tests-aa.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.runDir(run.ID), "result.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	g.fake.set("sacct", "101|"+slurm.JobName(run.ID)+"|COMPLETED|0:0|node7\n")
	g.fake.set("squeue", "101|"+slurm.JobName(run.ID)+"|COMPLETED|None|node7|"+comment+"\n")
	got := g.wait(run.ID)
	if got.Status != runner.StatusSucceeded || len(got.Shapes) != 9 {
		t.Fatalf("run: %s %q shapes %d", got.Status, got.Reason, len(got.Shapes))
	}
	for _, want := range []string{"# slurm job 101 submitted to partition debug, --time 0-00:10:00", "# slurm job 101 pending: Resources", "# slurm job 101 running on node7"} {
		if !strings.Contains(got.Log, want) {
			t.Errorf("the run's log lacks %q:\n%s", want, got.Log)
		}
	}
}

// Every way a job ends, mapped to the run's status and reason.
func TestExecutorJobStates(t *testing.T) {
	cases := []struct {
		squeue, sacct string // state columns: "STATE|REASON" and "STATE|EXIT"
		status        runner.Status
		reason        []string
	}{
		{"FAILED|NonZeroExitCode", "FAILED|0:9", runner.StatusFailed, []string{"crashed: killed by signal 9", "(slurm job 200 FAILED on node7)"}},
		{"FAILED|NonZeroExitCode", "FAILED|3:0", runner.StatusFailed, []string{"could not run (exit 3)", "no CUDA device", "(slurm job 201 FAILED on node7)"}},
		{"NODE_FAIL|NodeDown", "NODE_FAIL|0:0", runner.StatusFailed, []string{"node failure: slurm lost the node", "slurm job 202 NODE_FAIL on node7, reason NodeDown"}},
		{"TIMEOUT|TimeLimit", "TIMEOUT|0:15", runner.StatusFailed, []string{"timed out: slurm ended the job at its time limit", "reason TimeLimit"}},
		{"PREEMPTED|None", "PREEMPTED|0:15", runner.StatusFailed, []string{"preempted", "re-queue the run", "slurm job 204 PREEMPTED"}},
		{"CANCELLED|None", "CANCELLED by 1000|0:15", runner.StatusFailed, []string{"cancelled outside pitchtank by uid 1000 (scancel)", "slurm job 205 CANCELLED on node7"}},
		{"OUT_OF_MEMORY|OutOfMemory", "OUT_OF_MEMORY|0:125", runner.StatusFailed, []string{"out of memory"}},
		// squeue forgot the job (MinJobAge) but sacct has its record.
		{"", "COMPLETED|1:0", runner.StatusFailed, []string{"no valid result: exit 1 without a result document", "slurm job 207 COMPLETED on node7"}},
		// Nobody knows the job any more.
		{"", "", runner.StatusFailed, []string{"lost: slurm job 208 is known neither to squeue nor to sacct"}},
	}
	g := newRig(t)
	for i, c := range cases {
		job := fmt.Sprint(200 + i)
		run := g.submitWith(job, func(run *runner.Run) {
			name := slurm.JobName(run.ID)
			if err := os.WriteFile(filepath.Join(g.runDir(run.ID), "stderr"), []byte("bench: no CUDA device\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.sacct, "|3:0") {
				if err := os.WriteFile(filepath.Join(g.runDir(run.ID), "stdout"), []byte(`{"type":"error","phase":"device","message":"no CUDA device"}`+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sq, sa := "", ""
			if c.squeue != "" {
				sq = job + "|" + name + "|" + c.squeue + "|node7|" + g.runDir(run.ID) + "\n"
			}
			if c.sacct != "" {
				sa = job + "|" + name + "|" + c.sacct + "|node7\n"
			}
			g.fake.set("squeue", sq)
			g.fake.set("sacct", sa)
		})
		got := g.wait(run.ID)
		if got.Status != c.status {
			t.Errorf("%s / %s: %s %q, want %s", c.squeue, c.sacct, got.Status, got.Reason, c.status)
			continue
		}
		for _, want := range c.reason {
			if !strings.Contains(got.Reason, want) {
				t.Errorf("%s / %s: reason %q lacks %q", c.squeue, c.sacct, got.Reason, want)
			}
		}
	}
}

// A cancel reaches scancel with the run's job; the run is cancelled with
// the user's reason once Slurm reports the job ended.
func TestExecutorCancel(t *testing.T) {
	g := newRig(t)
	run := g.submit("300")
	name := slurm.JobName(run.ID)
	g.fake.set("squeue", "300|"+name+"|RUNNING|None|node7|x\n")
	done := make(chan error, 1)
	go func() { done <- g.r.Cancel(context.Background(), run.ID) }()
	g.fake.waitFile("scancel", "300\n")
	g.fake.set("sacct", "300|"+name+"|CANCELLED by 0|0:15|node7\n")
	g.fake.set("squeue", "300|"+name+"|CANCELLED|None|node7|x\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := g.wait(run.ID); got.Status != runner.StatusCancelled || got.Reason != "cancelled by user" || !strings.Contains(got.Log, "scancel sent") {
		t.Errorf("cancelled run: %s %q\n%s", got.Status, got.Reason, got.Log)
	}
}

// sbatch's refusal fails the run with sbatch's message.
func TestExecutorSubmitRefused(t *testing.T) {
	g := newRig(t)
	g.fake.set("sbatch.fail", "sbatch: error: invalid partition specified: debug\n")
	run, err := g.r.Submit(context.Background(), runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Device: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	got := g.wait(run.ID)
	if got.Status != runner.StatusFailed || !strings.Contains(got.Reason, "could not submit to slurm") || !strings.Contains(got.Reason, "invalid partition specified: debug") {
		t.Errorf("refused submission: %s %q", got.Status, got.Reason)
	}
}

func removeState(f *fakeSlurm, name string) error { return os.Remove(filepath.Join(f.state, name)) }
