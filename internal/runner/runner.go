package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Defaults of Config.
const (
	DefaultTimeLimit = 15 * time.Minute
	DefaultKillGrace = 10 * time.Second
	// pollInterval is how often an idle worker looks at the queue even when
	// nobody woke it: a safety net, since every enqueue in this process wakes
	// the device's worker at once.
	pollInterval = 5 * time.Second
	// storeTimeout bounds each store write made after a child finishes. It
	// uses a fresh context so that a shutdown still records the outcome.
	storeTimeout = 30 * time.Second
)

// CommandFunc builds the child process for a run: the command must write its
// result document to resultPath. The runner sets the process group, stdout and
// stderr itself; the function sets only the program, arguments, environment
// and directory.
type CommandFunc func(run *Run, resultPath string) (*exec.Cmd, error)

// Config is what a Runner is built from.
type Config struct {
	Store   Store
	Catalog Catalog
	// Devices are the devices runs may ask for, e.g. {"0", "1", "cpu"}: one
	// worker each, so runs never share a device.
	Devices []string
	// TimeLimit is the most a run may take, default 15 minutes.
	TimeLimit time.Duration
	// KillGrace is how long a child's process group has between SIGTERM and
	// SIGKILL, default 10 seconds.
	KillGrace time.Duration
	// Command builds the child; default BenchCommand("", TimeLimit): this
	// binary's `bench` subcommand.
	Command CommandFunc
	// TempDir holds the per-run result files; default os.TempDir().
	TempDir string
	Logger  *slog.Logger
	// Kernels holds the submitted kernels that `kernel:<hash>` variants
	// name (internal/sqlite); nil: such runs are refused.
	Kernels KernelStore
	// Remote are devices whose runs an Executor runs elsewhere (Slurm
	// targets); their names join Devices.
	Remote []Remote
}

// Runner is the durable run queue: runs live in the Store, one worker per
// device executes them one at a time as child processes.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	hub  *hub
	wake map[string]chan struct{}

	mu      sync.Mutex // guards active, resumed and the check-then-cancel of queued runs
	active  map[int64]*activeRun
	resumed map[string][]*Run // per remote device: runs to resume (Start), taken by its workers
	started bool
	closed  bool

	importMu sync.Mutex // serializes imports onto a pitch: refuseRepeat's check, then the store

	quit chan struct{}
	wg   sync.WaitGroup
}

// activeRun is a run a worker has taken: cancel asks its worker to stop it.
type activeRun struct {
	cancel chan string   // receives the cancellation reason; buffered 1
	done   chan struct{} // closed once its outcome is stored
	remote bool          // run by an Executor: a shutdown leaves it going
}

// New checks cfg and returns a Runner that has not started yet.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil {
		return nil, errors.New("runner: new: no store")
	}
	if cfg.Catalog == nil {
		return nil, errors.New("runner: new: no kernel catalog")
	}
	seen := map[string]bool{}
	for _, d := range cfg.Devices {
		if d != "cpu" {
			if n, err := strconv.Atoi(d); err != nil || n < 0 || strconv.Itoa(n) != d {
				return nil, fmt.Errorf("runner: new: device %q is neither a GPU ordinal nor \"cpu\"", d)
			}
		}
		if seen[d] {
			return nil, fmt.Errorf("runner: new: device %q listed twice", d)
		}
		seen[d] = true
	}
	if err := checkRemote(&cfg); err != nil {
		return nil, err
	}
	if cfg.TimeLimit <= 0 {
		cfg.TimeLimit = DefaultTimeLimit
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.Command == nil {
		cfg.Command = BenchCommand("", cfg.TimeLimit)
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Runner{
		cfg:    cfg,
		log:    cfg.Logger.With("component", "runner"),
		hub:    newHub(),
		wake:   map[string]chan struct{}{},
		active: map[int64]*activeRun{},
		quit:   make(chan struct{}),
	}
	for _, d := range cfg.Devices {
		r.wake[d] = make(chan struct{}, 1)
	}
	return r, nil
}

// Devices returns the devices runs may ask for.
func (r *Runner) Devices() []string { return slices.Clone(r.cfg.Devices) }

// Start marks runs left "running" by a previous server as failed
// ("interrupted"), then starts one worker per device. Call it once.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.started || r.closed {
		r.mu.Unlock()
		return errors.New("runner: start: already started or closed")
	}
	r.started = true
	r.mu.Unlock()
	ids, resume, err := r.interruptLeftOver(ctx)
	if err != nil {
		return fmt.Errorf("runner: start: mark interrupted runs: %w", err)
	}
	for _, id := range ids {
		r.log.Warn("run was interrupted by a previous shutdown or crash", "run", id)
	}
	// Queued runs for a device this server no longer has would wait forever.
	queued, err := r.cfg.Store.List(ctx, Filter{Status: StatusQueued, Imported: new(false), Limit: 1000})
	if err != nil {
		return fmt.Errorf("runner: start: list queued runs: %w", err)
	}
	for _, q := range queued {
		if slices.Contains(r.cfg.Devices, q.Device) {
			continue
		}
		reason := fmt.Sprintf("device %q does not exist on this server (have %s)", q.Device, strings.Join(r.cfg.Devices, ", "))
		if err := r.cfg.Store.MarkFailed(ctx, q.ID, Finish{Reason: reason}); err != nil && pitches.ErrorCode(err) != pitches.ECONFLICT {
			return fmt.Errorf("runner: start: fail run %d on a missing device: %w", q.ID, err)
		}
		r.log.Warn("queued run failed: its device is gone", "run", q.ID, "device", q.Device)
	}
	r.queueResumed(resume)
	for _, d := range r.cfg.Devices {
		for range r.workers(d) {
			r.wg.Add(1)
			go r.worker(d)
		}
	}
	return nil
}

// Submit validates req and queues it, a built-in kernel's variant in the
// catalogue's spelling (VariantSpelling). A bad request returns a
// *pitches.Error with code EINVALID naming the field, and queues nothing.
func (r *Runner) Submit(ctx context.Context, req Request) (*Run, error) {
	req.Normalize()
	if err := r.validate(&req); err != nil {
		return nil, err
	}
	if err := r.checkKernelRequest(ctx, &req); err != nil {
		return nil, err
	}
	// One kernel, one spelling (VariantSpelling); an A/A run's baseline is
	// its variant, so it is spelled the same and the run stays A/A (--aa).
	// Bench resolves the spelling to the kernel the request named.
	canon := VariantSpelling(r.cfg.Catalog, req.Problem, req.Variant)
	if req.Baseline == req.Variant {
		req.Baseline = canon
	}
	req.Variant = canon
	if r.isClosed() {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "the server is shutting down; runs are not taken")
	}
	run, err := r.cfg.Store.Enqueue(ctx, req)
	if err != nil {
		return nil, err
	}
	r.hub.publish(Event{RunID: run.ID, Type: "status", Status: StatusQueued})
	r.poke(run.Device)
	return run, nil
}

// Requeue queues a new run with the parameters of failed or cancelled run
// id (an interrupted one, typically), requested by user by; any other
// status is ECONFLICT naming it (Status.Retryable, checked again in the
// store's transaction).
func (r *Runner) Requeue(ctx context.Context, id, by int64) (*Run, error) {
	if r.isClosed() {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "the server is shutting down; runs are not taken")
	}
	old, err := r.cfg.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !old.Imported && !old.Status.Retryable() {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "run %d is %s: only a failed or cancelled run is re-queued", id, old.Status)
	}
	if !slices.Contains(r.cfg.Devices, old.Device) && !old.Imported {
		return nil, pitches.Errorf(pitches.EINVALID, "device", "device %q of run %d does not exist on this server", old.Device, id)
	}
	run, err := r.cfg.Store.Requeue(ctx, id, by)
	if err != nil {
		return nil, err
	}
	r.hub.publish(Event{RunID: run.ID, Type: "status", Status: StatusQueued})
	r.poke(run.Device)
	return run, nil
}

// Import validates an import document and stores it as an imported run
// (succeeded, incorrect or suspect: ImportResult); a bad document stores
// nothing, and neither does a measurement its pitch already has a run of
// (refuseRepeat, ECONFLICT). Who may import where is
// pitches.Can(ActImportRun), the caller's.
func (r *Runner) Import(ctx context.Context, req *ImportRequest, by int64) (*Run, error) {
	if err := req.Validate(r.cfg.Catalog); err != nil {
		return nil, err
	}
	run, res, err := req.ImportResult(by)
	if err != nil {
		return nil, err
	}
	if run.PitchID > 0 {
		r.importMu.Lock()
		defer r.importMu.Unlock()
		if err := r.refuseRepeat(ctx, run, res, req.docID); err != nil {
			return nil, err
		}
	}
	return r.cfg.Store.Import(ctx, run, res)
}

// MaxAcceptReason bounds an acceptance's written reason.
const MaxAcceptReason = 2000

// Accept records admin by's acceptance of suspect run id as a result, with
// a written reason (non-empty, at most MaxAcceptReason bytes). Only an
// admin may (403 otherwise); a run that is not suspect, or already
// accepted, is ECONFLICT naming why; nothing changes on refusal.
func (r *Runner) Accept(ctx context.Context, id int64, by *pitches.User, reason string) (*Run, error) {
	if err := pitches.Can(by, pitches.ActAcceptRun, pitches.Target{}); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return nil, pitches.Errorf(pitches.EINVALID, "reason", "accepting a suspect run needs a written reason (why the figure is real)")
	case len(reason) > MaxAcceptReason:
		return nil, pitches.Errorf(pitches.EINVALID, "reason", "the reason is longer than %d bytes", MaxAcceptReason)
	case !utf8.ValidString(reason) || strings.IndexFunc(reason, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0:
		// Shown on the run page and sent in the audit log: text, lines and
		// tabs, no terminal escapes or other control characters.
		return nil, pitches.Errorf(pitches.EINVALID, "reason", "the reason must be UTF-8 text without control characters (line breaks and tabs are fine)")
	}
	return r.cfg.Store.Accept(ctx, id, by.ID, reason)
}

// Get returns a run with its result, shapes and logs.
func (r *Runner) Get(ctx context.Context, id int64) (*Run, error) { return r.cfg.Store.Get(ctx, id) }

// List returns runs matching f, newest first. A variant that spells a
// built-in kernel of f's problem is looked up in the catalogue's spelling
// as well as as given (Filter.CanonicalLookup).
func (r *Runner) List(ctx context.Context, f Filter) ([]Run, error) {
	return r.cfg.Store.List(ctx, f.CanonicalLookup(r.cfg.Catalog))
}

// Subscribe returns the events of run id, starting with its latest status
// and progress as this process knows them. The channel closes after the
// terminal status, or when cancel is called; a run that finished before this
// process started (or long ago) yields no events, so callers read the run
// with Get first and subscribe only while it is queued or running.
func (r *Runner) Subscribe(id int64) (<-chan Event, func()) { return r.hub.subscribe(id) }

// Cancel stops run id: a queued run is cancelled at once; a running one has
// its process group killed (SIGTERM, then SIGKILL after the grace period),
// and Cancel waits until that is recorded or ctx ends. A finished run is an
// ECONFLICT error.
func (r *Runner) Cancel(ctx context.Context, id int64) error {
	return r.cancel(ctx, id, "cancelled by user")
}

func (r *Runner) cancel(ctx context.Context, id int64, reason string) error {
	r.mu.Lock()
	a, ok := r.active[id]
	if !ok {
		// Held under mu: a worker registers a run as active (under mu)
		// before it marks it running, so either it sees this cancellation
		// as a conflict or this sees it active.
		err := r.cfg.Store.MarkCancelled(ctx, id, Finish{Reason: reason})
		r.mu.Unlock()
		if err != nil {
			return err
		}
		r.hub.publish(Event{RunID: id, Type: "status", Status: StatusCancelled, Reason: reason})
		return nil
	}
	select {
	case a.cancel <- reason:
	default: // already being cancelled
	}
	r.mu.Unlock()
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runner: cancel run %d: %w", id, ctx.Err())
	}
}

// Close stops taking runs, cancels the running children (their runs end
// "cancelled", reason "server shutting down") and waits for the workers, at
// most until ctx ends. Queued runs stay queued for the next start.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.quit)
	for _, a := range r.active {
		if a.remote {
			continue // it goes on without this server (Execution.Quit)
		}
		select {
		case a.cancel <- "server shutting down":
		default:
		}
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runner: close: workers still running: %w", ctx.Err())
	}
}

func (r *Runner) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// poke wakes device's worker without blocking.
func (r *Runner) poke(device string) {
	if ch, ok := r.wake[device]; ok {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// worker runs device's queue one run at a time until Close.
func (r *Runner) worker(device string) {
	defer r.wg.Done()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.quit:
			return
		default:
		}
		// Runs an earlier server left on a remote device take a slot first.
		if run := r.nextResumed(device); run != nil {
			r.resume(run)
			continue
		}
		run, err := r.cfg.Store.ClaimNext(context.Background(), device)
		if err != nil {
			r.log.Error("claim next run", "device", device, "err", err)
		}
		if run == nil {
			select {
			case <-r.quit:
				return
			case <-r.wake[device]:
			case <-tick.C:
			}
			continue
		}
		r.execute(run)
	}
}
