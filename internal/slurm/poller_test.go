package slurm_test

import (
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/slurm"
)

// pollOnce makes the poller poll and waits until that poll has delivered
// what it learnt: Polls counts squeue calls, at a poll's start, so the poll
// is over once the next one has started.
func pollOnce(t *testing.T, p *slurm.Poller) {
	t.Helper()
	for range 2 {
		n := p.Stats().Polls
		p.Kick()
		deadline := time.Now().Add(5 * time.Second)
		for p.Stats().Polls == n {
			if time.Now().After(deadline) {
				t.Fatal("the poller did not poll")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// The grace for sacct's late record is wall time: polls that come fast
// (every new watch kicks one, so a round's submissions bring many) do not
// use it up, and the exit code that arrives within it is delivered.
func TestPollerGraceIsWallTime(t *testing.T) {
	f := newFakeSlurm(t)
	p := &slurm.Poller{Client: &slurm.Client{BinDir: f.bin}, Interval: time.Hour, Grace: time.Hour}
	f.set("squeue", "900|pitchtank-run-1|FAILED|NonZeroExitCode|node7|/spool/run-1\n")
	states, stop := p.Watch("900")
	defer stop()
	for range 6 {
		pollOnce(t, p)
	}
	select {
	case in := <-states:
		t.Fatalf("delivered %+v before sacct's record, within the grace", in)
	default:
	}
	f.set("sacct", "900|pitchtank-run-1|FAILED|3:0|node7\n")
	pollOnce(t, p)
	select {
	case in := <-states:
		if in.State != slurm.Failed || !in.HasExit || in.ExitCode != 3 {
			t.Errorf("delivered %+v, want FAILED with exit code 3", in)
		}
	default:
		t.Fatal("nothing delivered once sacct had the record")
	}
}

// Past the grace, a job squeue shows ended is delivered without the exit
// code it never got; a failed sacct call neither starts nor ends the wait.
func TestPollerGraceEnds(t *testing.T) {
	f := newFakeSlurm(t)
	grace := 300 * time.Millisecond
	p := &slurm.Poller{Client: &slurm.Client{BinDir: f.bin}, Interval: time.Hour, Grace: grace}
	f.set("squeue", "901|pitchtank-run-2|FAILED|NonZeroExitCode|node7|/spool/run-2\n")
	f.set("sacct.fail", "sacct: error: Problem talking to the database\n")
	states, stop := p.Watch("901")
	defer stop()
	time.Sleep(grace + 50*time.Millisecond)
	pollOnce(t, p)
	if len(states) != 0 {
		t.Fatalf("delivered %+v while sacct failed", <-states)
	}
	f.set("sacct", "")
	if err := removeState(f, "sacct.fail"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pollOnce(t, p) // sacct answers without the record: the grace starts
	if len(states) != 0 && time.Since(start) < grace {
		t.Fatalf("delivered %+v as soon as sacct answered", <-states)
	}
	time.Sleep(grace)
	pollOnce(t, p)
	select {
	case in := <-states:
		if in.State != slurm.Failed || in.HasExit {
			t.Errorf("delivered %+v, want FAILED without an exit code", in)
		}
	default:
		t.Fatal("nothing delivered after the grace")
	}
}
