package slurm

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Poller asks the cluster about every job pitchtank watches with one squeue
// call per interval (and one sacct call for those squeue no longer shows),
// whatever the number of jobs: a worker per job polling on its own would
// load slurmctld with one RPC per job and interval (docs/scale.md).
type Poller struct {
	Client   *Client
	Interval time.Duration // default 2 seconds
	// Grace is how long a job that squeue shows ended, or no longer shows,
	// may lack sacct's record before it is settled without one (the record
	// comes a moment after the end, later when slurmdbd is busy); default
	// 30 seconds or 3 intervals, whichever is longer. It counts from the
	// first poll at which sacct answered without the record: a failed sacct
	// call says nothing about it.
	Grace  time.Duration
	Logger *slog.Logger

	mu      sync.Mutex
	watches map[string]map[*watch]struct{}
	started bool
	kick    chan struct{}
	stats   PollStats
}

// PollStats counts the poller's calls, for docs/scale.md's figures.
type PollStats struct {
	Polls       int           // squeue calls
	Accountings int           // sacct calls
	Errors      int           // failed calls
	Last        time.Duration // the last poll's time, squeue and sacct together
	LastJobs    int           // jobs asked about in the last poll
}

type watch struct {
	ch chan Info // latest wins: holds at most one Info
	// unsettled is when sacct first answered without the record this job
	// needs; zero while it needs none.
	unsettled time.Time
}

// Watch returns a channel that receives job id's state whenever a poll sees
// it (only the latest is kept), and a function to stop watching. A job that
// neither squeue nor sacct knows for longer than the grace is reported with
// an empty State.
func (p *Poller) Watch(id string) (<-chan Info, func()) {
	w := &watch{ch: make(chan Info, 1)}
	p.mu.Lock()
	if p.watches == nil {
		p.watches = map[string]map[*watch]struct{}{}
		p.kick = make(chan struct{}, 1)
	}
	if p.watches[id] == nil {
		p.watches[id] = map[*watch]struct{}{}
	}
	p.watches[id][w] = struct{}{}
	if !p.started {
		p.started = true
		go p.loop()
	}
	p.mu.Unlock()
	p.Kick()
	return w.ch, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.watches[id], w)
		if len(p.watches[id]) == 0 {
			delete(p.watches, id)
		}
	}
}

// Kick makes the poller poll now rather than at the next interval.
func (p *Poller) Kick() {
	p.mu.Lock()
	k := p.kick
	p.mu.Unlock()
	if k != nil {
		select {
		case k <- struct{}{}:
		default:
		}
	}
}

// Stats returns the poller's counters.
func (p *Poller) Stats() PollStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func (p *Poller) loop() {
	t := time.NewTicker(p.interval())
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-p.kick:
		}
		p.poll()
	}
}

// Poll asks once about every watched job and delivers what it learns.
func (p *Poller) poll() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.watches))
	for id := range p.watches {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	start := time.Now()
	ctx := context.Background()
	got, err := p.Client.Queue(ctx, ids)
	p.count(func(s *PollStats) { s.Polls++ })
	if err != nil {
		p.count(func(s *PollStats) { s.Errors++ })
		p.log().Warn("squeue failed; trying again next poll", "err", err)
		return
	}
	// Jobs squeue no longer shows, and ended ones (squeue prints no exit
	// code): sacct has the record. Not COMPLETED ones: Slurm records
	// COMPLETED only for a batch script that exited 0, so sacct would add
	// nothing, and its being slow or down must not hold up their result.
	var ask []string
	for _, id := range ids {
		if in, ok := got[id]; !ok || (in.State.Ended() && in.State != Completed) {
			ask = append(ask, id)
		}
	}
	acct := map[string]Info{}
	acctAnswered := true
	if len(ask) > 0 {
		p.count(func(s *PollStats) { s.Accountings++ })
		a, err := p.Client.Accounting(ctx, ask)
		switch {
		case err == nil:
			acct = a
		case errors.Is(err, ErrAccountingDisabled):
			// No record will ever come: as good as an answer without them.
		default:
			// Not a miss: the jobs that need sacct wait for it to answer.
			acctAnswered = false
			p.count(func(s *PollStats) { s.Errors++ })
			p.log().Warn("sacct failed; the jobs that need its record wait for the next poll", "err", err)
		}
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Last, p.stats.LastJobs = time.Since(start), len(ids)
	for _, id := range ids {
		in, inQueue := got[id]
		a, inAcct := acct[id]
		switch {
		case inQueue && in.State == Completed:
			// Exit code 0 without sacct: Executor.outcome fills it in.
		case inQueue && in.State.Ended() && inAcct && a.State.Ended():
			// squeue's reason with sacct's exit code and canceller.
			in.ExitCode, in.Signal, in.HasExit, in.By = a.ExitCode, a.Signal, a.HasExit, a.By
			if in.Node == "" {
				in.Node = a.Node
			}
		case inQueue && in.State.Ended():
			// The completion record is written a moment after squeue shows
			// the end: wait for the exit code, then go without.
			if !acctAnswered || !p.overdue(id, now) {
				continue
			}
		case inQueue:
		case inAcct:
			in = a
		default:
			if !acctAnswered || !p.overdue(id, now) {
				continue
			}
			in = Info{ID: id}
		}
		for w := range p.watches[id] {
			w.unsettled = time.Time{}
			select {
			case <-w.ch:
			default:
			}
			w.ch <- in
		}
	}
}

// overdue reports whether job id has lacked sacct's record for longer than
// the grace, counting from the first poll at which sacct answered without
// it. The grace is wall time, not polls: every new watch kicks a poll, so
// polls come as fast as runs are submitted.
func (p *Poller) overdue(id string, now time.Time) bool {
	late := false
	for w := range p.watches[id] {
		if w.unsettled.IsZero() {
			w.unsettled = now
		}
		if now.Sub(w.unsettled) >= p.grace() {
			late = true
		}
	}
	return late
}

func (p *Poller) grace() time.Duration {
	if p.Grace > 0 {
		return p.Grace
	}
	return max(30*time.Second, 3*p.interval())
}

func (p *Poller) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return 2 * time.Second
}

func (p *Poller) count(f func(*PollStats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

func (p *Poller) log() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}
