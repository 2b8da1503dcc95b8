package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Executor runs the runs of one device somewhere other than this server's
// own child processes: a Slurm target (internal/slurm) hands each run to
// the cluster as a batch job. The runner keeps the queue, the statuses, the
// progress fan-out and the judging of bench's exit; the executor only
// starts the measurement, relays its output and says how it ended.
type Executor interface {
	// Slots is how many runs of the device may be in flight at once: one
	// worker each. A cluster queues and places them itself.
	Slots() int
	// CPU reports whether bench runs there with --device cpu, so that the
	// cpu device's rules (the reference variant only) apply to requests.
	CPU() bool
	// Execute takes run, already marked running, to its end and reports
	// how it ended. With x.Resumed the run was left running by an earlier
	// server: pick up what that server started, or report ReasonInterrupted
	// when nothing was.
	Execute(run *Run, x *Execution) Outcome
}

// Execution is what an Executor gets along with a run.
type Execution struct {
	// Resumed: the run was started by an earlier server (Runner.Start).
	Resumed bool
	// TimeLimit is the runner's limit for one run.
	TimeLimit time.Duration
	// Cancel receives the reason when the run is cancelled: stop it and
	// return Outcome{Status: StatusCancelled, Reason: reason}.
	Cancel <-chan string
	// Quit is closed when this server shuts down: leave the run going and
	// return Outcome{Detach: true}; the next server resumes it.
	Quit <-chan struct{}
	// Line hands the runner one line of bench's stdout, in order, each once
	// (a resumed run starts again from the first line).
	Line func(line []byte)
	// Note tells the run's watchers, and its log, what happened on the
	// executor's side ("slurm job 12 pending: Resources").
	Note func(msg string)
	// Stage writes what the run needs beside its result file before bench
	// starts (a submitted kernel's files: KernelDir(resultPath)). Call it
	// once with the result path the job will use, on storage it sees.
	Stage func(resultPath string) error
}

// Outcome is how an executed run ended.
type Outcome struct {
	// Detach: the server is shutting down and the run goes on without it;
	// nothing is stored.
	Detach bool
	// Exited: bench ended, with exit Code or killed by Signal (non-zero),
	// and left its document (if any) at ResultPath. The runner judges it
	// exactly as a local child's exit.
	Exited     bool
	Code       int
	Signal     int
	ResultPath string
	// Otherwise the executor decided: Status (StatusFailed or
	// StatusCancelled) with Reason.
	Status Status
	Reason string
	// Where is added to a failure's reason, e.g. "slurm job 12 on node gpu03".
	Where  string
	Stderr string // the tail of bench's stderr
}

// Remote is a device whose runs an Executor runs (Config.Remote).
type Remote struct {
	Name     string
	Executor Executor
}

// InterruptExceptStore is the store method a runner with remote devices
// needs: MarkInterrupted for every running run except those on the devices
// keep, whose runs go on without this server and are resumed.
type InterruptExceptStore interface {
	MarkInterruptedExcept(ctx context.Context, keep []string) ([]int64, error)
}

// checkRemote validates cfg.Remote against the local devices and appends the
// remote names to cfg.Devices.
func checkRemote(cfg *Config) error {
	if len(cfg.Remote) == 0 {
		return nil
	}
	if _, ok := cfg.Store.(InterruptExceptStore); !ok {
		return errors.New("runner: new: remote devices need a store that can spare their running runs at start (MarkInterruptedExcept)")
	}
	for _, rd := range cfg.Remote {
		if err := CheckRemoteName(rd.Name); err != nil {
			return fmt.Errorf("runner: new: %w", err)
		}
		if rd.Executor == nil {
			return fmt.Errorf("runner: new: remote device %q has no executor", rd.Name)
		}
		if rd.Executor.Slots() < 1 {
			return fmt.Errorf("runner: new: remote device %q has %d slots", rd.Name, rd.Executor.Slots())
		}
		if slices.Contains(cfg.Devices, rd.Name) {
			return fmt.Errorf("runner: new: device %q listed twice", rd.Name)
		}
		cfg.Devices = append(cfg.Devices, rd.Name)
	}
	return nil
}

// CheckRemoteName says why name cannot name a remote device: it must not
// look like a local one (a GPU ordinal or "cpu"), and it is shown in pages
// and URLs, so letters, digits, '-', '_' and '.' only, at most 64.
func CheckRemoteName(name string) error {
	switch {
	case name == "":
		return errors.New("a remote device needs a name")
	case len(name) > 64:
		return fmt.Errorf("remote device name %q is longer than 64 bytes", name)
	case name == "cpu":
		return errors.New(`remote device name "cpu" is the server's own CPU; pick another`)
	case strings.Trim(name, "0123456789") == "":
		return fmt.Errorf("remote device name %q looks like a GPU ordinal; pick a name with a letter", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("remote device name %q: only letters, digits, '-', '_' and '.'", name)
		}
	}
	return nil
}

// executor returns device's executor, or nil for a local device.
func (r *Runner) executor(device string) Executor {
	for _, rd := range r.cfg.Remote {
		if rd.Name == device {
			return rd.Executor
		}
	}
	return nil
}

// isCPU reports whether bench runs device's runs with --device cpu.
func (r *Runner) isCPU(device string) bool {
	if ex := r.executor(device); ex != nil {
		return ex.CPU()
	}
	return device == "cpu"
}

// workers is how many workers device gets: one for a local device (runs
// never share it), the executor's slots for a remote one.
func (r *Runner) workers(device string) int {
	if ex := r.executor(device); ex != nil {
		return ex.Slots()
	}
	return 1
}

// interruptLeftOver marks the runs a dead server left running as
// interrupted, except those on remote devices, and returns the remote ones
// to resume.
func (r *Runner) interruptLeftOver(ctx context.Context) ([]int64, []Run, error) {
	if len(r.cfg.Remote) == 0 {
		ids, err := r.cfg.Store.MarkInterrupted(ctx)
		return ids, nil, err
	}
	keep := make([]string, len(r.cfg.Remote))
	for i, rd := range r.cfg.Remote {
		keep[i] = rd.Name
	}
	ids, err := r.cfg.Store.(InterruptExceptStore).MarkInterruptedExcept(ctx, keep)
	if err != nil {
		return nil, nil, err
	}
	var resume []Run
	for _, d := range keep {
		for before := int64(0); ; {
			page, err := r.cfg.Store.List(ctx, Filter{Status: StatusRunning, Device: d, Imported: new(false), BeforeID: before, Limit: 1000})
			if err != nil {
				return nil, nil, fmt.Errorf("list running runs on %s: %w", d, err)
			}
			resume = append(resume, page...)
			if len(page) < 1000 {
				break
			}
			before = page[len(page)-1].ID
		}
	}
	return ids, resume, nil
}

// queueResumed hands the runs an earlier server left on remote devices to
// their devices' workers, which take them before new runs: a resumed run
// holds one of the device's slots like any other. They are active at once,
// so that a cancel waiting for a slot reaches the executor (scancel) when a
// worker takes the run, rather than only the store.
func (r *Runner) queueResumed(runs []Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resumed == nil {
		r.resumed = map[string][]*Run{}
	}
	for i := range runs {
		r.resumed[runs[i].Device] = append(r.resumed[runs[i].Device], &runs[i])
		r.active[runs[i].ID] = &activeRun{cancel: make(chan string, 1), done: make(chan struct{}), remote: true}
		r.hub.publish(Event{RunID: runs[i].ID, Type: "status", Status: StatusRunning})
	}
}

// nextResumed returns a run of device to resume, or nil.
func (r *Runner) nextResumed(device string) *Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.resumed[device]
	if len(q) == 0 {
		return nil
	}
	r.resumed[device] = q[1:]
	return q[0]
}

// resume takes over a run an earlier server left running on a remote device.
func (r *Runner) resume(run *Run) {
	ex := r.executor(run.Device)
	r.mu.Lock()
	a := r.active[run.ID] // registered by queueResumed
	r.mu.Unlock()
	defer r.release(run.ID, a)
	r.log.Info("resuming a run left running by an earlier server", "run", run.ID, "device", run.Device)
	r.runRemote(run, a, ex, true)
}

func (r *Runner) release(id int64, a *activeRun) {
	r.mu.Lock()
	delete(r.active, id)
	r.mu.Unlock()
	close(a.done)
}

// runRemote runs run through its executor and stores the outcome, unless
// the executor detached because the server is stopping.
func (r *Runner) runRemote(run *Run, a *activeRun, ex Executor, resumed bool) {
	out := &childOutput{log: tail{max: tailBytes}}
	x := &Execution{
		Resumed:   resumed,
		TimeLimit: r.cfg.TimeLimit,
		Cancel:    a.cancel,
		Quit:      r.quit,
		Line:      func(line []byte) { r.handleLine(run.ID, line, out) },
		Note: func(msg string) {
			out.mu.Lock()
			out.log.WriteLine([]byte("# " + msg))
			out.mu.Unlock()
			r.hub.publish(Event{RunID: run.ID, Type: "log", Line: msg})
		},
		Stage: func(resultPath string) error { return r.stage(run, resultPath) },
	}
	o := ex.Execute(run, x)
	if o.Detach {
		r.log.Info("run goes on without this server", "run", run.ID, "device", run.Device)
		return
	}
	out.mu.Lock()
	fin := Finish{Log: out.log.String(), Stderr: o.Stderr}
	status, res, reason := o.Status, (*Result)(nil), o.Reason
	if o.Exited {
		status, res, reason = r.judgeExit(run, o.Code, o.Signal, o.ResultPath, out, o.Stderr)
	}
	out.mu.Unlock()
	if status == "" || (!status.Measured() && status != StatusCancelled) {
		status = StatusFailed
	}
	if status == StatusFailed && o.Where != "" && reason != ReasonInterrupted {
		reason += " (" + o.Where + ")"
	}
	fin.Reason = reason
	r.finish(run, status, res, fin)
}

// stage writes a submitted kernel's files beside resultPath, as runChild
// does for a local child; other runs need nothing.
func (r *Runner) stage(run *Run, resultPath string) error {
	hash, _, ok := pitches.ParseKernelVariant(run.Variant)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return r.writeKernel(ctx, hash, KernelDir(resultPath))
}

// validate checks req with the runner's devices and their kinds.
func (r *Runner) validate(req *Request) error {
	return req.validate(r.cfg.Catalog, r.cfg.Devices, r.isCPU)
}
