package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Limits on what is kept of a child's output.
const (
	tailBytes    = 64 << 10 // stderr and non-JSON stdout kept per run
	maxLineBytes = 1 << 20  // a longer stdout line is cut (and kept as log)
	drainTimeout = 5 * time.Second
	reasonLimit  = 600 // bytes of stderr quoted in a failure reason
)

// BenchCommand returns a CommandFunc that runs the program exe (empty: this
// binary, os.Executable) with BenchArgs.
func BenchCommand(exe string, timeLimit time.Duration) CommandFunc {
	return func(run *Run, resultPath string) (*exec.Cmd, error) {
		path := exe
		if path == "" {
			var err error
			if path, err = os.Executable(); err != nil {
				return nil, fmt.Errorf("find own executable: %w", err)
			}
		}
		return exec.Command(path, BenchArgs(run, resultPath, timeLimit)...), nil
	}
}

// BenchArgs are the arguments of `web bench` for run, starting with "bench":
// bench --problem P --variant V [--baseline B] [--aa] --suite S --device D
// [--seed N] --max-time T --json FILE. A run of a submitted kernel
// (kernel:<hash>?knobs) gets --kernel DIR --variant 'kernel?knobs' instead
// of its variant, DIR being KernelDir(resultPath). A run whose baseline is its variant is
// an A/A run (--aa). --max-time is 90% of the runner's limit, so that bench
// normally stops on its own, reports why and releases the GPU before the
// runner has to kill it.
func BenchArgs(run *Run, resultPath string, timeLimit time.Duration) []string {
	args := []string{"bench", "--problem", run.Problem, "--variant", run.Variant}
	if _, knobs, ok := pitches.ParseKernelVariant(run.Variant); ok {
		// A submitted kernel: its files are in the run's kernel folder
		// (runChild writes them), and bench names it "kernel".
		args = []string{"bench", "--problem", run.Problem, "--kernel", KernelDir(resultPath), "--variant", pitches.KernelVariantSpec(knobs)}
	}
	if run.Baseline != "" {
		args = append(args, "--baseline", run.Baseline)
		if run.Baseline == run.Variant {
			args = append(args, "--aa")
		}
	}
	args = append(args, "--suite", run.Suite, "--device", run.Device)
	if run.Seed != 0 {
		args = append(args, "--seed", strconv.FormatInt(run.Seed, 10))
	}
	if timeLimit > 0 {
		args = append(args, "--max-time", (timeLimit * 9 / 10).Round(time.Millisecond).String())
	}
	return append(args, "--json", resultPath)
}

// execute takes a claimed run through its child process to a stored outcome.
func (r *Runner) execute(run *Run) {
	ex := r.executor(run.Device)
	a := &activeRun{cancel: make(chan string, 1), done: make(chan struct{}), remote: ex != nil}
	r.mu.Lock()
	if _, taken := r.active[run.ID]; taken {
		// A remote device's workers claim from one queue: another worker
		// took this run first and will mark it running.
		r.mu.Unlock()
		return
	}
	r.active[run.ID] = a
	r.mu.Unlock()
	defer r.release(run.ID, a)

	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	err := r.cfg.Store.MarkRunning(ctx, run.ID)
	cancel()
	if err != nil {
		if pitches.ErrorCode(err) != pitches.ECONFLICT {
			r.log.Error("mark run running", "run", run.ID, "err", err)
			time.Sleep(time.Second) // a failing store must not make the worker spin
		}
		return // cancelled while queued: nothing to run
	}
	run.Status = StatusRunning
	r.hub.publish(Event{RunID: run.ID, Type: "status", Status: StatusRunning})

	// A cancel that arrived between registration and MarkRunning.
	select {
	case reason := <-a.cancel:
		r.finish(run, StatusCancelled, nil, Finish{Reason: reason})
		return
	default:
	}

	if ex != nil {
		r.runRemote(run, a, ex, false)
		return
	}
	status, res, fin := r.runChild(run, a)
	r.finish(run, status, res, fin)
}

// finish stores the outcome and tells the subscribers.
func (r *Runner) finish(run *Run, status Status, res *Result, fin Finish) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var err error
	switch status {
	case StatusSucceeded, StatusIncorrect, StatusSuspect:
		err = r.cfg.Store.MarkMeasured(ctx, run.ID, status, res, fin)
		if err != nil {
			// A result that cannot be stored fails the run rather than
			// leaving it "running".
			fin.Reason = "could not store the result: " + err.Error()
			status = StatusFailed
			err = r.cfg.Store.MarkFailed(ctx, run.ID, fin)
		}
	case StatusCancelled:
		err = r.cfg.Store.MarkCancelled(ctx, run.ID, fin)
	default:
		status = StatusFailed
		err = r.cfg.Store.MarkFailed(ctx, run.ID, fin)
	}
	if err != nil {
		r.log.Error("store run outcome", "run", run.ID, "status", status, "err", err)
	}
	r.log.Info("run finished", "run", run.ID, "device", run.Device, "status", status, "reason", fin.Reason)
	r.hub.publish(Event{RunID: run.ID, Type: "status", Status: status, Reason: fin.Reason})
}

// childOutput is what the stdout reader saw.
type childOutput struct {
	mu       sync.Mutex
	log      tail
	errorMsg string // message of the last {"type":"error"} line
	// usageError: bench printed its usage error line (phase "usage" or
	// exit_code 2), which is what tells a refused input from a panic.
	usageError bool
	result     *resultLine
}

type resultLine struct {
	Type     string          `json:"type"`
	Path     *string         `json:"path"`
	Status   string          `json:"status"`
	ExitCode int             `json:"exit_code"`
	Document json.RawMessage `json:"document"`
}

// runChild starts the child in its own process group and waits for it to
// exit, to be cancelled, or to run out of time. It returns the run's status,
// its result when it succeeded, and what is kept of the output.
func (r *Runner) runChild(run *Run, a *activeRun) (Status, *Result, Finish) {
	dir, err := os.MkdirTemp(r.cfg.TempDir, fmt.Sprintf("run-%d-", run.ID))
	if err != nil {
		return StatusFailed, nil, Finish{Reason: "could not start: create result directory: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	resultPath := filepath.Join(dir, "result.json")
	if hash, _, ok := pitches.ParseKernelVariant(run.Variant); ok {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := r.writeKernel(ctx, hash, KernelDir(resultPath))
		cancel()
		if err != nil {
			return StatusFailed, nil, Finish{Reason: "could not start: " + err.Error()}
		}
	}

	cmd, err := r.cfg.Command(run, resultPath)
	if err != nil {
		return StatusFailed, nil, Finish{Reason: "could not start: " + err.Error()}
	}
	// Our own pipes rather than cmd's: a grandchild that inherits them must
	// not make Wait hang, and the readers must be able to finish after the
	// process group is gone.
	outR, outW, err := os.Pipe()
	if err != nil {
		return StatusFailed, nil, Finish{Reason: "could not start: stdout pipe: " + err.Error()}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return StatusFailed, nil, Finish{Reason: "could not start: stderr pipe: " + err.Error()}
	}
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = outW, errW
	// Its own process group, so that a timeout or cancel kills the bench and
	// anything it started (kill(-pgid, ...)). Pdeathsig kills the bench if
	// this server dies without the chance to (SIGKILL, OOM): an orphan would
	// keep the GPU busy under the next server. Pdeathsig fires when the
	// creating OS thread exits, so this goroutine stays locked to its thread
	// until the child is gone (golang/go#27505).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return StatusFailed, nil, Finish{Reason: "could not start: " + err.Error()}
	}
	pgid := cmd.Process.Pid

	out := &childOutput{log: tail{max: tailBytes}}
	stderr := &tail{max: tailBytes}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); r.readStdout(run.ID, outR, out) }()
	go func() { defer readers.Done(); io.Copy(stderr, errR) }()

	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	timer := time.NewTimer(r.cfg.TimeLimit)
	defer timer.Stop()
	var (
		waitErr      error
		timedOut     bool
		cancelReason string
	)
	select {
	case waitErr = <-waitCh:
	case <-timer.C:
		timedOut = true
		waitErr = r.killGroup(pgid, waitCh)
	case cancelReason = <-a.cancel:
		waitErr = r.killGroup(pgid, waitCh)
	}
	// The leader is gone; whatever it left behind in its group goes too, so
	// that no orphan holds the GPU or the pipes.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		// Something outside the group still holds the pipes open.
		r.log.Warn("child output did not close; dropping the rest", "run", run.ID)
	}
	outR.Close()
	errR.Close()
	<-drained

	out.mu.Lock()
	defer out.mu.Unlock()
	fin := Finish{Log: out.log.String(), Stderr: stderr.String()}
	switch {
	case cancelReason != "":
		fin.Reason = cancelReason
		return StatusCancelled, nil, fin
	case timedOut:
		fin.Reason = fmt.Sprintf("timed out after %s (time limit); the process group was killed", r.cfg.TimeLimit)
		return StatusFailed, nil, fin
	}
	status, res, reason := r.judge(run, waitErr, resultPath, out, fin.Stderr)
	fin.Reason = reason
	return status, res, fin
}

// killGroup sends SIGTERM to the process group, then SIGKILL after the grace
// period, and returns the leader's exit.
func (r *Runner) killGroup(pgid int, waitCh <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	grace := time.NewTimer(r.cfg.KillGrace)
	defer grace.Stop()
	select {
	case err := <-waitCh:
		return err
	case <-grace.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waitCh
	}
}

// judge turns an exited child into the run's outcome. Exit codes of
// `web bench`: 0 ok, 1 kernel incorrect, 4 suspect (all three finished a
// measurement: the document is stored, Classify says which status), 2
// usage/invalid input (bench prints a {"type":"error","phase":"usage"} line
// first), 3 could not run. Anything else is a crash: a signal, another code,
// or exit 2 without the usage line (the Go runtime exits 2 on a panic).
func (r *Runner) judge(run *Run, waitErr error, resultPath string, out *childOutput, stderr string) (Status, *Result, string) {
	code, sig := 0, 0
	if waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return StatusFailed, nil, "could not wait for the child: " + waitErr.Error()
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = int(ws.Signal())
		}
		code = ee.ExitCode()
	}
	return r.judgeExit(run, code, sig, resultPath, out, stderr)
}

// judgeExit is judge for a child that exited with code, or was killed by
// signal sig (non-zero): here or on a remote device (Outcome.Exited).
func (r *Runner) judgeExit(run *Run, code, sig int, resultPath string, out *childOutput, stderr string) (Status, *Result, string) {
	if sig != 0 {
		return StatusFailed, nil, withStderr(fmt.Sprintf("crashed: killed by signal %d (%v)", sig, syscall.Signal(sig)), out.errorMsg, stderr)
	}
	switch code {
	case exitOK, exitIncorrect, exitSuspect:
	case exitUsage:
		if out.usageError {
			return StatusFailed, nil, withStderr("bench refused its input (exit 2)", out.errorMsg, stderr)
		}
		return StatusFailed, nil, withStderr("crashed: exit status 2 without bench's usage error (a Go panic exits 2)", out.errorMsg, stderr)
	case exitCouldNot:
		return StatusFailed, nil, withStderr("could not run (exit 3)", out.errorMsg, stderr)
	default:
		return StatusFailed, nil, withStderr(fmt.Sprintf("crashed: exit status %d", code), out.errorMsg, stderr)
	}
	if out.errorMsg != "" {
		return StatusFailed, nil, withStderr(fmt.Sprintf("bench reported an error but exited %d", code), out.errorMsg, stderr)
	}
	doc, err := os.ReadFile(resultPath)
	if err != nil {
		if out.result != nil && len(out.result.Document) > 0 && string(out.result.Document) != "null" {
			doc, err = out.result.Document, nil
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return StatusFailed, nil, withStderr(fmt.Sprintf("no valid result: exit %d without a result document", code), "", stderr)
		}
		return StatusFailed, nil, "no valid result: read result document: " + err.Error()
	}
	res, err := ParseResult(doc, run)
	if err != nil {
		return StatusFailed, nil, withStderr("no valid result: "+err.Error(), "", stderr)
	}
	status, reason := Classify(code, res)
	if !status.Measured() {
		return status, nil, reason
	}
	return status, res, reason
}

// withStderr builds a failure reason from what happened, the child's own
// error message, and the last line of its stderr.
func withStderr(what, msg, stderr string) string {
	var b strings.Builder
	b.WriteString(what)
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(clip(msg))
	}
	if last := keyLine(stderr); last != "" && last != msg {
		b.WriteString(" (stderr: ")
		b.WriteString(clip(last))
		b.WriteString(")")
	}
	return b.String()
}

// keyLine picks the stderr line that says most: a panic or fatal error line
// when there is one (a crash's traceback ends in noise), else the last line.
func keyLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"panic: ", "fatal error: ", "terminate called", "Segmentation fault", "Aborted"} {
			if strings.HasPrefix(line, p) {
				return line
			}
		}
	}
	return lastLine(s)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func clip(s string) string {
	if len(s) <= reasonLimit {
		return s
	}
	return s[:reasonLimit] + "..."
}

// readStdout reads the child's stdout line by line: progress lines go to the
// subscribers, an error line is remembered for the failure reason, the
// result line is kept, anything else is log.
func (r *Runner) readStdout(runID int64, rd io.Reader, out *childOutput) {
	br := bufio.NewReaderSize(rd, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			r.handleLine(runID, line, out)
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line without its newline, cut at maxLineBytes
// (the rest of an over-long line is read and dropped).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line) < maxLineBytes {
			room := maxLineBytes - len(line)
			if len(chunk) > room {
				chunk = chunk[:room]
			}
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			return line, err
		}
	}
}

func (r *Runner) handleLine(runID int64, line []byte, out *childOutput) {
	var head struct {
		Type     string `json:"type"`
		Message  string `json:"message"`
		Phase    string `json:"phase"`
		ExitCode int    `json:"exit_code"`
	}
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &head) != nil || head.Type == "" {
		out.mu.Lock()
		out.log.WriteLine(line)
		out.mu.Unlock()
		r.hub.publish(Event{RunID: runID, Type: "log", Line: string(line)})
		return
	}
	switch head.Type {
	case "progress":
		var p Progress
		if err := json.Unmarshal(line, &p); err != nil {
			out.mu.Lock()
			out.log.WriteLine(line)
			out.mu.Unlock()
			return
		}
		p.Raw = append(json.RawMessage(nil), line...)
		r.hub.publish(Event{RunID: runID, Type: "progress", Progress: &p})
	case "error":
		msg := head.Message
		if msg == "" {
			msg = string(line)
		}
		out.mu.Lock()
		out.errorMsg = msg
		if head.Phase == "usage" || head.ExitCode == exitUsage {
			out.usageError = true
		}
		out.log.WriteLine(line)
		out.mu.Unlock()
		r.hub.publish(Event{RunID: runID, Type: "log", Line: "error: " + msg})
	case "result":
		var rl resultLine
		out.mu.Lock()
		if json.Unmarshal(line, &rl) == nil {
			out.result = &rl
		}
		out.mu.Unlock()
	default:
		out.mu.Lock()
		out.log.WriteLine(line)
		out.mu.Unlock()
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// WriteLine appends line and a newline.
func (t *tail) WriteLine(line []byte) {
	t.Write(line)
	t.Write([]byte{'\n'})
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.buf), "\uFFFD")
	if t.cut {
		// The first line was cut mid-way; drop it so the log starts clean.
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = "[earlier output dropped]\n" + s
	}
	return s
}
