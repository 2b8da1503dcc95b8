package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/slurm"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// requireSlurm checks for a Slurm that takes jobs. Missing, the test fails
// when PITCHTANK_REQUIRE_SLURM=1 (CI starts one with ci/slurm/setup.sh)
// and skips saying why otherwise.
func requireSlurm(t *testing.T) {
	t.Helper()
	miss := func(what string) {
		msg := "needs a running Slurm (sbatch, squeue, sacct, scancel, slurmctld, slurmd, munge; `sudo bash ci/slurm/setup.sh` starts one on this host): " + what
		if os.Getenv("PITCHTANK_REQUIRE_SLURM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, c := range []string{"sbatch", "squeue", "sacct", "scancel", "sinfo"} {
		if _, err := exec.LookPath(c); err != nil {
			miss(c + " is not on PATH")
		}
	}
	out, err := exec.Command("sinfo", "--noheader", "--format=%T").CombinedOutput()
	if err != nil {
		miss(fmt.Sprintf("sinfo: %v: %s", err, strings.TrimSpace(string(out))))
	}
	if s := string(out); !strings.Contains(s, "idle") && !strings.Contains(s, "mixed") && !strings.Contains(s, "allocated") {
		miss(fmt.Sprintf("no node takes jobs (sinfo says %q)", strings.TrimSpace(s)))
	}
}

func script(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitEnded polls until squeue shows job ended and sacct (or sacct -c) has
// its record with the exit code.
func waitEnded(t *testing.T, c *slurm.Client, job string) slurm.Info {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		acct, err := c.Accounting(context.Background(), []string{job})
		if err != nil {
			t.Fatal(err)
		}
		if in, ok := acct[job]; ok && in.State.Ended() {
			return in
		}
		if time.Now().After(deadline) {
			q, _ := c.Queue(context.Background(), []string{job})
			t.Fatalf("job %s has not ended after a minute: squeue %+v, sacct %+v", job, q[job], acct[job])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The client against the real slurmctld: sbatch, squeue (a job it knows,
// one it does not), sacct's record with the exit code, and scancel.
func TestClientAgainstSlurm(t *testing.T) {
	requireSlurm(t)
	c := &slurm.Client{}
	ctx := context.Background()
	dir := t.TempDir()
	id, err := c.Submit(ctx, slurm.Job{Name: "pitchtank-client-test", Script: script(t, dir, "echo out; echo err >&2; sleep 1; exit 3"), Dir: dir,
		Stdout: filepath.Join(dir, "stdout"), Stderr: filepath.Join(dir, "stderr"), TimeLimit: 2 * time.Minute, Comment: dir})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Queue(ctx, []string{id, "999999999"})
	if err != nil {
		t.Fatal(err)
	}
	if in := q[id]; in.Name != "pitchtank-client-test" || in.Comment != dir || (in.State != slurm.Pending && in.State != slurm.Running && !in.State.Ended()) {
		t.Errorf("squeue: %+v", in)
	}
	if _, ok := q["999999999"]; ok {
		t.Error("squeue reported a job that does not exist")
	}
	if q, err := c.Queue(ctx, []string{"999999999"}); err != nil || len(q) != 0 {
		t.Errorf("squeue of an unknown job alone: %v %v", q, err)
	}
	byName, err := c.QueueByName(ctx, "pitchtank-client-test")
	if err != nil || len(byName) == 0 {
		t.Errorf("squeue by name: %v %v", byName, err)
	}
	in := waitEnded(t, c, id)
	if in.State != slurm.Failed || in.ExitCode != 3 || in.Signal != 0 || in.Node == "" {
		t.Errorf("sacct of a job that exited 3: %+v", in)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stdout")); string(b) != "out\n" {
		t.Errorf("the job's stdout on the spool: %q", b)
	}

	long, err := c.Submit(ctx, slurm.Job{Name: "pitchtank-client-test", Script: script(t, dir, "sleep 120"), Dir: dir, Stdout: "/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, long); err != nil {
		t.Fatal(err)
	}
	// (Who cancelled is in slurmdbd's record, "CANCELLED by UID"; the
	// completion log of a cluster without slurmdbd does not keep it.)
	if in := waitEnded(t, c, long); in.State != slurm.Cancelled {
		t.Errorf("sacct of a cancelled job: %+v", in)
	}
	if err := c.Cancel(ctx, long); err != nil {
		t.Errorf("a second scancel of an ended job: %v", err)
	}
	if err := c.Cancel(ctx, "x; rm -rf /"); err == nil {
		t.Error("Cancel took a job id that is not a number")
	}
}

// TestScale measures, against the real slurmctld, what docs/scale.md
// quotes: sbatch throughput, the poller's cost for N jobs in flight, sacct
// for N ended jobs, and the store's write rate for a run's life. It runs
// only with PITCHTANK_SLURM_SCALE=N (e.g. 1000): it fills the queue.
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PITCHTANK_SLURM_SCALE"))
	if n <= 0 {
		t.Skip("measures Slurm at scale for docs/scale.md; set PITCHTANK_SLURM_SCALE=1000 to run it")
	}
	requireSlurm(t)
	c := &slurm.Client{}
	ctx := context.Background()
	dir := t.TempDir()
	path := script(t, dir, "exit 0")
	// Held jobs stay PENDING (JobHeldUser): the queue fills without running.
	job := slurm.Job{Name: "pitchtank-scale", Script: path, Dir: dir, Stdout: "/dev/null", Extra: []string{"--hold"}}
	ids := make([]string, 0, n)
	var mu sync.Mutex
	submit := func(count, workers int) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		per := count / workers
		for w := range workers {
			k := per
			if w == workers-1 {
				k = count - per*(workers-1)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range k {
					id, err := c.Submit(ctx, job)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	defer func() {
		// One scancel for every job left.
		for i := 0; i < len(ids); i += 500 {
			exec.Command("scancel", ids[i:min(i+500, len(ids))]...).Run()
		}
	}()
	half := n / 2
	d1 := submit(half, 1)
	t.Logf("sbatch, one at a time: %d jobs in %s = %.0f jobs/s", half, d1.Round(time.Millisecond), float64(half)/d1.Seconds())
	d8 := submit(n-half, 8)
	t.Logf("sbatch, 8 in parallel: %d jobs in %s = %.0f jobs/s", n-half, d8.Round(time.Millisecond), float64(n-half)/d8.Seconds())

	for _, k := range []int{10, 100, len(ids)} {
		k = min(k, len(ids))
		start := time.Now()
		const reps = 5
		for range reps {
			got, err := c.Queue(ctx, ids[:k])
			if err != nil || len(got) != k {
				t.Fatalf("squeue of %d jobs: %d answered, %v", k, len(got), err)
			}
		}
		t.Logf("one squeue call for %d jobs: %s", k, (time.Since(start) / reps).Round(100*time.Microsecond))
	}
	// The poller as the executors use it: every job watched, one poll.
	p := &slurm.Poller{Client: c, Interval: time.Hour}
	var stops []func()
	for _, id := range ids {
		_, stop := p.Watch(id)
		stops = append(stops, stop)
	}
	deadline := time.Now().Add(time.Minute)
	for p.Stats().Polls == 0 || p.Stats().LastJobs < len(ids) {
		if time.Now().After(deadline) {
			t.Fatalf("the poller did not poll: %+v", p.Stats())
		}
		p.Kick()
		time.Sleep(50 * time.Millisecond)
	}
	st := p.Stats()
	t.Logf("poller: one poll of %d jobs in flight took %s (%d squeue, %d sacct calls)", st.LastJobs, st.Last.Round(100*time.Microsecond), st.Polls, st.Accountings)
	for _, s := range stops {
		s()
	}

	// End them all, then read them back from the accounting.
	start := time.Now()
	for i := 0; i < len(ids); i += 500 {
		if out, err := exec.Command("scancel", ids[i:min(i+500, len(ids))]...).CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v %s", err, out)
		}
	}
	t.Logf("scancel of %d jobs (500 per call): %s", len(ids), time.Since(start).Round(time.Millisecond))
	deadline = time.Now().Add(2 * time.Minute)
	for {
		start = time.Now()
		acct, err := c.Accounting(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(acct) == len(ids) {
			t.Logf("one sacct call for %d ended jobs: %s", len(ids), time.Since(start).Round(100*time.Microsecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sacct knows %d of %d ended jobs", len(acct), len(ids))
		}
		time.Sleep(time.Second)
	}

	// The store's side: a run's life is three writes (queue, running, the
	// result with its shapes), on a real SQLite file.
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	doc, err := os.ReadFile("../runner/testdata/cpu-tests-aa.json")
	if err != nil {
		t.Fatal(err)
	}
	req := runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cluster"}
	res, err := runner.ParseResult(doc, &runner.Run{Problem: req.Problem, Suite: req.Suite, Variant: req.Variant, Baseline: req.Baseline})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for range n {
		run, err := db.Enqueue(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.MarkRunning(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkMeasured(ctx, run.ID, runner.StatusSucceeded, res, runner.Finish{Log: strings.Repeat("x", 4096)}); err != nil {
			t.Fatal(err)
		}
	}
	d := time.Since(start)
	t.Logf("SQLite: %d runs' lives (enqueue, running, result with 9 shapes) in %s = %.0f runs/s, %.2f ms per run", n, d.Round(time.Millisecond), float64(n)/d.Seconds(), float64(d.Microseconds())/1000/float64(n))
}
