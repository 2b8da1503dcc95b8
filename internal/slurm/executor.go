package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// Target is a device that is a Slurm partition: what each run's batch job
// asks for. Every node a target's jobs may land on should have the same GPU
// model: the device fingerprint in each result says which one it was, and
// the comparability rules never pool a B200 run with an H100 run.
type Target struct {
	Name        string        // the device name runs ask for, e.g. "h100"
	Partition   string        // --partition; empty: the cluster's default
	Gres        string        // --gres, e.g. "gpu:h100:1"; empty for cpu runs
	Account     string        // --account
	TimeLimit   time.Duration // --time; zero: the runner's run time limit
	BenchDevice string        // bench's --device on the node: "0" (the allocated GPU) or "cpu"
	MaxJobs     int           // runs in flight (pending or running) at once
	SbatchArgs  []string      // more sbatch options, e.g. --qos=high, --constraint=h100
}

// Executor runs a Target's runs as batch jobs (runner.Executor). The job
// runs `web bench` from Web, a path every node sees, and writes its stdout,
// stderr and result document into Spool/run-ID, a directory the server and
// the nodes share; the server follows the stdout file for progress.
type Executor struct {
	Target Target
	Client *Client
	Poller *Poller // shared by the targets of one cluster
	Web    string  // the web binary's path on the nodes
	Spool  string  // the shared directory
	// Tail is how often the job's stdout file is read; default 500ms.
	Tail   time.Duration
	Logger *slog.Logger
}

var _ runner.Executor = (*Executor)(nil)

// Slots is the target's MaxJobs (at least 1).
func (e *Executor) Slots() int { return max(e.Target.MaxJobs, 1) }

// CPU reports whether bench runs with --device cpu on the target's nodes.
func (e *Executor) CPU() bool { return e.Target.BenchDevice == "cpu" }

// RunDir is where run id's job keeps its files.
func (e *Executor) RunDir(id int64) string {
	return filepath.Join(e.Spool, fmt.Sprintf("run-%d", id))
}

// Files in a run's directory.
const (
	fileScript = "job.sh"
	fileJobID  = "job-id"
	fileStdout = "stdout"
	fileStderr = "stderr"
	fileResult = "result.json"
)

// JobName is the batch job's name for run id.
func JobName(id int64) string { return fmt.Sprintf("pitchtank-run-%d", id) }

// Execute submits run as a batch job (or, resumed, finds the job an earlier
// server submitted), follows it to its end and says how it ended.
func (e *Executor) Execute(run *runner.Run, x *runner.Execution) runner.Outcome {
	dir := e.RunDir(run.ID)
	var id string
	if x.Resumed {
		var err error
		if id, err = e.findJob(run.ID, dir); err != nil {
			return runner.Outcome{Status: runner.StatusFailed, Reason: runner.ReasonInterrupted + ": " + err.Error()}
		}
		x.Note(fmt.Sprintf("slurm job %s: followed again after a server restart", id))
	} else {
		var o *runner.Outcome
		if id, o = e.submit(run, x, dir); o != nil {
			return *o
		}
	}
	return e.follow(run, x, dir, id)
}

// submit writes the job script and hands it to sbatch.
func (e *Executor) submit(run *runner.Run, x *runner.Execution, dir string) (string, *runner.Outcome) {
	fail := func(format string, a ...any) (string, *runner.Outcome) {
		return "", &runner.Outcome{Status: runner.StatusFailed, Reason: "could not submit to slurm: " + fmt.Sprintf(format, a...)}
	}
	// A directory left by an earlier database's run of the same number.
	if err := os.RemoveAll(dir); err != nil {
		return fail("clear %s: %v", dir, err)
	}
	// Private: an open round's per-shape results and a submitted kernel's
	// source are for the server to show, not for every cluster user.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail("create the run's directory: %v", err)
	}
	limit := e.Target.TimeLimit
	if limit <= 0 {
		limit = x.TimeLimit
	}
	resultPath := filepath.Join(dir, fileResult)
	if x.Stage != nil {
		if err := x.Stage(resultPath); err != nil {
			return fail("stage the run's inputs: %v", err)
		}
	}
	onNode := *run
	onNode.Device = e.Target.BenchDevice
	args := runner.BenchArgs(&onNode, resultPath, limit)
	script := Script(run.ID, e.Target.Name, e.Web, args)
	path := filepath.Join(dir, fileScript)
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		return fail("write the job script: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := e.Client.Submit(ctx, Job{
		Name: JobName(run.ID), Partition: e.Target.Partition, Gres: e.Target.Gres, Account: e.Target.Account,
		TimeLimit: limit, Comment: dir, Dir: dir, Script: path, Extra: e.Target.SbatchArgs,
		Stdout: filepath.Join(dir, fileStdout), Stderr: filepath.Join(dir, fileStderr),
	})
	if err != nil {
		// sbatch can fail after slurmctld took the job (a timeout, a lost
		// answer): failing the run would leave the job running unfollowed,
		// and a re-queue would submit it twice. Follow it if it is there.
		found, lerr := e.jobByName(run.ID, dir)
		switch {
		case found != "":
			x.Note(fmt.Sprintf("slurm job %s: sbatch failed (%v), but slurm had taken the job", found, err))
			id = found
		case lerr != nil:
			return fail("%v (and could not check whether slurm took the job anyway: %v)", err, lerr)
		default:
			return fail("%v", err)
		}
	}
	// The job id is what a restarted server follows; written at once (and
	// atomically), and the job's name and comment find it if this is lost.
	tmp := filepath.Join(dir, fileJobID+".tmp")
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err == nil {
		err = os.Rename(tmp, filepath.Join(dir, fileJobID))
	} else {
		e.log().Warn("could not record the slurm job id", "run", run.ID, "job", id, "err", err)
	}
	desc := fmt.Sprintf("slurm job %s submitted", id)
	if e.Target.Partition != "" {
		desc += " to partition " + e.Target.Partition
	}
	if e.Target.Gres != "" {
		desc += ", gres " + e.Target.Gres
	}
	x.Note(desc + ", --time " + FormatTime(limit))
	return id, nil
}

// Script is the batch script of a run: bench replaces the shell (exec), so
// the job's exit code and signal are bench's own. umask 077: what bench
// writes (the result document) is as private as the run's directory.
func Script(runID int64, target, web string, args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# pitchtank run %d on Slurm target %s, written by the server.\numask 077\nexec %s", runID, target, shellQuote(web))
	for _, a := range args {
		b.WriteString(" ")
		b.WriteString(shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// findJob returns the job an earlier server submitted for run id: from the
// recorded job id, else by the job's name and comment (the server died
// between sbatch and writing the id down).
func (e *Executor) findJob(runID int64, dir string) (string, error) {
	if b, err := os.ReadFile(filepath.Join(dir, fileJobID)); err == nil {
		if id := strings.TrimSpace(string(b)); validID(id) {
			return id, nil
		}
	}
	id, err := e.jobByName(runID, dir)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", errors.New("the server stopped before its slurm job was submitted")
	}
	return id, nil
}

// jobByName returns the job that squeue knows by run id's job name and
// comment, the newest if there are several; "" if there is none.
func (e *Executor) jobByName(runID int64, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobs, err := e.Client.QueueByName(ctx, JobName(runID))
	if err != nil {
		return "", fmt.Errorf("look for its slurm job: %w", err)
	}
	var id uint64
	for _, j := range jobs {
		n, err := strconv.ParseUint(j.ID, 10, 64)
		if err == nil && j.Comment == dir && n > id {
			id = n
		}
	}
	if id == 0 {
		return "", nil
	}
	return strconv.FormatUint(id, 10), nil
}

// follow relays the job's stdout and states until it ends.
func (e *Executor) follow(run *runner.Run, x *runner.Execution, dir, id string) runner.Outcome {
	states, stop := e.Poller.Watch(id)
	defer stop()
	tailEvery := e.Tail
	if tailEvery <= 0 {
		tailEvery = 500 * time.Millisecond
	}
	tick := time.NewTicker(tailEvery)
	defer tick.Stop()
	out := &lineReader{path: filepath.Join(dir, fileStdout), line: x.Line}

	var (
		last      Info
		cancelled string
		// unsent: scancel failed; it is sent again at each poll until it
		// goes through or the job ends. The run keeps its slot until Slurm
		// reports the end: recording it cancelled while the job still ran
		// would let the target run more than max_jobs jobs.
		unsent   bool
		cancelCh = x.Cancel
	)
	scancel := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := e.Client.Cancel(ctx, id)
		cancel()
		switch {
		case err != nil && !unsent:
			x.Note(fmt.Sprintf("slurm job %s: scancel failed, sending it again at each poll: %v", id, err))
		case err != nil:
			e.log().Warn("scancel failed again; sending it again at the next poll", "job", id, "err", err)
		default:
			x.Note(fmt.Sprintf("slurm job %s: scancel sent (%s)", id, cancelled))
		}
		// Poll now to see the end soon; not after a failure, which the next
		// poll's delivery would retry at once, and so on.
		if unsent = err != nil; !unsent {
			e.Poller.Kick()
		}
	}
	for {
		select {
		case <-x.Quit:
			out.read(false)
			return runner.Outcome{Detach: true}
		case reason := <-cancelCh:
			cancelCh = nil
			cancelled = reason
			scancel()
		case <-tick.C:
			out.read(false)
		case in := <-states:
			if in.State != last.State || in.Reason != last.Reason || in.Node != last.Node {
				if msg := describe(id, in); msg != "" && !in.State.Ended() {
					x.Note(msg)
				}
			}
			last = in
			if in.State == "" || in.State.Ended() {
				out.read(true)
				return e.outcome(id, in, cancelled, dir)
			}
			if unsent {
				scancel()
			}
		}
	}
}

// describe says what a job's state means for the run's watchers.
func describe(id string, in Info) string {
	switch in.State {
	case Pending:
		if in.Reason != "" {
			return fmt.Sprintf("slurm job %s pending: %s", id, in.Reason)
		}
		return fmt.Sprintf("slurm job %s pending", id)
	case Running:
		return fmt.Sprintf("slurm job %s running on %s", id, in.Node)
	case "":
		return ""
	}
	s := fmt.Sprintf("slurm job %s %s", id, in.State)
	if in.Reason != "" {
		s += ": " + in.Reason
	}
	return s
}

// outcome maps an ended job to the run's outcome. A job that ran bench to
// an exit (COMPLETED, or FAILED with bench's exit code or signal) is judged
// by the runner like a local child; the states in which Slurm itself ended
// the job fail the run with Slurm's reason.
func (e *Executor) outcome(id string, in Info, cancelled, dir string) runner.Outcome {
	o := runner.Outcome{Stderr: readTail(filepath.Join(dir, fileStderr), 64<<10)}
	where := fmt.Sprintf("slurm job %s %s", id, in.State)
	if in.Node != "" {
		where += " on " + in.Node
	}
	if in.Reason != "" && in.Reason != "NonZeroExitCode" {
		where += ", reason " + in.Reason
	}
	o.Where = where
	if cancelled != "" {
		o.Status, o.Reason = runner.StatusCancelled, cancelled
		return o
	}
	o.Status = runner.StatusFailed
	switch in.State {
	case Completed, Failed:
		if in.State == Completed && !in.HasExit {
			// Slurm records COMPLETED only for a batch script that exited
			// 0: squeue's word is enough when sacct is slow or down. The
			// result document still decides the run.
			in.HasExit, in.ExitCode, in.Signal = true, 0, 0
		}
		if !in.HasExit {
			o.Reason = fmt.Sprintf("no valid result: slurm job %s ended %s but its exit code is unknown (no accounting record)", id, in.State)
			return o
		}
		o.Exited, o.Code, o.Signal, o.ResultPath = true, in.ExitCode, in.Signal, filepath.Join(dir, fileResult)
		return o
	case Timeout:
		o.Reason = "timed out: slurm ended the job at its time limit (--time)"
	case NodeFail:
		o.Reason = "node failure: slurm lost the node the job ran on (NODE_FAIL)"
	case Preempted:
		o.Reason = "preempted: slurm ended the job for a higher-priority one (PREEMPTED); re-queue the run"
	case Cancelled:
		o.Reason = "cancelled outside pitchtank"
		if in.By != "" {
			o.Reason += " by uid " + in.By
		}
		o.Reason += " (scancel)"
	case OutOfMemory:
		o.Reason = "out of memory: slurm killed the job (OUT_OF_MEMORY)"
	case BootFail:
		o.Reason = "node boot failure (BOOT_FAIL)"
	case Deadline:
		o.Reason = "slurm ended the job at its deadline (DEADLINE)"
	case "":
		o.Where = ""
		o.Reason = fmt.Sprintf("lost: slurm job %s is known neither to squeue nor to sacct", id)
	default:
		o.Reason = fmt.Sprintf("slurm ended the job: %s", in.State)
	}
	if last := lastLine(o.Stderr); last != "" {
		o.Reason += " (stderr: " + clip(last, 300) + ")"
	}
	return o
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// maxLineBytes caps a line of the job's stdout, as the runner caps a local
// child's: the rest of a longer line is dropped, so a job that prints
// without newlines cannot grow the server's memory.
const maxLineBytes = 1 << 20

// readBytes bounds what one read takes from the file (the rest waits for
// the next), and readChunk is the buffer it reads through.
const (
	readBytes = 16 << 20
	readChunk = 64 << 10
)

// lineReader follows a growing file and hands over each complete line once,
// cut at maxLineBytes. It holds at most maxLineBytes of a line plus one
// readChunk buffer, whatever the file holds.
type lineReader struct {
	path    string
	line    func([]byte)
	off     int64
	partial []byte // the current line so far, at most maxLineBytes
	buf     []byte
}

// read hands over the lines written since the last read; final also hands
// over a last line without its newline.
func (l *lineReader) read(final bool) {
	f, err := os.Open(l.path)
	if err != nil {
		return // not created yet: the job has not started
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return
	}
	if l.buf == nil {
		l.buf = make([]byte, readChunk)
	}
	for taken := 0; taken < readBytes; {
		n, err := f.Read(l.buf)
		l.off += int64(n)
		taken += n
		l.take(l.buf[:n])
		if err != nil || n == 0 {
			break
		}
	}
	if final && len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = l.partial[:0]
	}
}

// take splits data into lines, keeping the start of an unfinished one.
func (l *lineReader) take(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if room := maxLineBytes - len(l.partial); room > 0 {
			l.partial = append(l.partial, part[:min(len(part), room)]...)
		}
		if i < 0 {
			return
		}
		if len(l.partial) > 0 {
			l.line(l.partial)
		}
		l.partial = l.partial[:0]
		data = data[i+1:]
	}
}

// readTail returns the last n bytes of a file, or "" when it cannot be read.
func readTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (e *Executor) log() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}
