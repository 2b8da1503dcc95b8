// Package slurm hands pitchtank's runs to a Slurm cluster: a Client drives
// the cluster's own command-line tools (sbatch, squeue, sacct, scancel)
// through os/exec and parses what they print, and an Executor is the
// runner's way to run a run as a batch job on a compute node
// (runner.Executor). Progress and the result come back through a directory
// that the server and the compute nodes share (docs/scale.md says why).
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Client runs the Slurm commands. The zero value finds them on PATH.
type Client struct {
	// BinDir holds sbatch, squeue, sacct and scancel; empty means PATH.
	BinDir string
	// Timeout bounds each command; default 30 seconds. slurmctld answers in
	// milliseconds when healthy, and a hung command must not hold a worker.
	Timeout time.Duration
}

// Job is what Submit asks sbatch for.
type Job struct {
	Name      string        // --job-name
	Partition string        // --partition; empty: the cluster's default
	Gres      string        // --gres, e.g. "gpu:h100:1"; empty: none
	Account   string        // --account; empty: the user's default
	TimeLimit time.Duration // --time, rounded up to whole seconds; zero: the partition's default
	Comment   string        // --comment: what a later lookup by name checks
	Dir       string        // --chdir, and where stdout and stderr go
	Stdout    string        // --output (absolute path)
	Stderr    string        // --error (absolute path)
	Script    string        // the batch script's path (on storage the nodes see)
	Extra     []string      // more sbatch options, verbatim (e.g. --qos=high)
	// Env is the job's environment (NAME=value): sbatch runs with only
	// these and exports them by name (--export), Slurm adding its SLURM_*
	// ones on the node. Nil: JobEnv(os.Environ()).
	Env []string
}

// JobEnv picks from environ (NAME=value) what a job may see: what bench
// needs on the node (PATH, HOME, the locale, TMPDIR, CUDA_HOME and
// LD_LIBRARY_PATH to find the CUDA libraries) and the SLURM_* settings
// sbatch itself reads (SLURM_CONF, ...). Nothing else of the server's
// environment, which holds its secrets (PITCHTANK_SMTP_PASSWORD), reaches
// the nodes: sbatch's default is --export=ALL.
func JobEnv(environ []string) []string {
	env := []string{} // never nil: a nil Env would pass on the whole environment
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case name == "PATH", name == "HOME", name == "USER", name == "LOGNAME", name == "LANG", name == "TZ", name == "TMPDIR",
			name == "CUDA_HOME", name == "LD_LIBRARY_PATH",
			strings.HasPrefix(name, "LC_"), strings.HasPrefix(name, "SLURM_"):
			env = append(env, kv)
		}
	}
	return env
}

// exportOption is sbatch's --export for env: its names (their values come
// from sbatch's own environment, so commas in values need no quoting);
// SLURM_* go without saying. NONE when there are none.
func exportOption(env []string) string {
	var names []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && !strings.HasPrefix(name, "SLURM_") && !strings.Contains(name, ",") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "--export=NONE"
	}
	return "--export=" + strings.Join(names, ",")
}

// State is a Slurm job state as squeue and sacct print it (JOB_STATE_CODES
// in squeue(1)), without sacct's " by UID" suffix.
type State string

// The job states pitchtank tells apart. Others (CONFIGURING, COMPLETING,
// SUSPENDED, REQUEUED, RESIZING, SIGNALING, STAGE_OUT, ...) are states of a
// job that has not ended.
const (
	Pending     State = "PENDING"
	Running     State = "RUNNING"
	Completed   State = "COMPLETED"
	Failed      State = "FAILED"
	NodeFail    State = "NODE_FAIL"
	Timeout     State = "TIMEOUT"
	Cancelled   State = "CANCELLED"
	Preempted   State = "PREEMPTED"
	OutOfMemory State = "OUT_OF_MEMORY"
	BootFail    State = "BOOT_FAIL"
	Deadline    State = "DEADLINE"
)

// Ended reports whether a job in state s will not change again.
func (s State) Ended() bool {
	switch s {
	case Completed, Failed, NodeFail, Timeout, Cancelled, Preempted, OutOfMemory, BootFail, Deadline,
		"REVOKED", "SPECIAL_EXIT":
		return true
	}
	return false
}

// Info is what squeue or sacct know about a job.
type Info struct {
	ID     string
	Name   string
	State  State
	Reason string // squeue's reason (PENDING: Resources, Priority, ...; ended: NonZeroExitCode, ...); empty from sacct
	By     string // sacct's "CANCELLED by UID": who cancelled
	Node   string // the node list; empty while pending
	// ExitCode and Signal are the batch script's (sacct's and scontrol's
	// ExitCode "code:signal"); known once the job ended, and only from
	// sacct (squeue does not print them).
	ExitCode int
	Signal   int
	HasExit  bool
	Comment  string
}

// ErrAccountingDisabled is returned by Accounting when the cluster keeps no
// accounting (no slurmdbd and no job completion log).
var ErrAccountingDisabled = errors.New("slurm: accounting is disabled (no slurmdbd, no jobcomp log)")

func (c *Client) cmd(ctx context.Context, name string, args ...string) ([]byte, error) {
	return c.cmdEnv(ctx, nil, name, args...)
}

// cmdEnv runs a Slurm command with environment env (nil: this process's).
func (c *Client) cmdEnv(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	path := name
	if c.BinDir != "" {
		path = filepath.Join(c.BinDir, name)
	}
	to := c.Timeout
	if to <= 0 {
		to = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	// The timeout is a hard limit: without WaitDelay, a child the command
	// left holding its stdout (a wrapper script's background process)
	// would keep Run waiting after the command itself was killed.
	cmd.WaitDelay = min(to/4, 5*time.Second)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if msg != "" {
			return out.Bytes(), fmt.Errorf("slurm: %s: %w: %s", name, err, firstLine(msg))
		}
		return out.Bytes(), fmt.Errorf("slurm: %s: %w", name, err)
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// SbatchArgs are sbatch's arguments for j (without the program name).
func SbatchArgs(j Job) []string {
	args := []string{"--parsable", "--no-requeue", "--job-name=" + j.Name}
	if j.Partition != "" {
		args = append(args, "--partition="+j.Partition)
	}
	if j.Gres != "" {
		args = append(args, "--gres="+j.Gres)
	}
	if j.Account != "" {
		args = append(args, "--account="+j.Account)
	}
	if j.TimeLimit > 0 {
		args = append(args, "--time="+FormatTime(j.TimeLimit))
	}
	if j.Comment != "" {
		args = append(args, "--comment="+j.Comment)
	}
	if j.Dir != "" {
		args = append(args, "--chdir="+j.Dir)
	}
	if j.Stdout != "" {
		args = append(args, "--output="+j.Stdout)
	}
	if j.Stderr != "" {
		args = append(args, "--error="+j.Stderr)
	}
	args = append(args, exportOption(j.Env))
	args = append(args, j.Extra...)
	return append(args, j.Script)
}

// FormatTime writes d as sbatch's --time: days-hours:minutes:seconds,
// rounded up to a whole second (Slurm itself enforces whole minutes on
// most clusters; the run's own limit is the finer one).
func FormatTime(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	days, s := s/86400, s%86400
	return fmt.Sprintf("%d-%02d:%02d:%02d", days, s/3600, s/60%60, s%60)
}

// Submit runs sbatch for j and returns the job ID.
func (c *Client) Submit(ctx context.Context, j Job) (string, error) {
	if j.Name == "" || j.Script == "" {
		return "", errors.New("slurm: submit: a job needs a name and a script")
	}
	if j.Env == nil {
		j.Env = JobEnv(os.Environ())
	}
	out, err := c.cmdEnv(ctx, j.Env, "sbatch", SbatchArgs(j)...)
	if err != nil {
		return "", err
	}
	id, err := ParseSubmit(string(out))
	if err != nil {
		return "", fmt.Errorf("slurm: submit %s: %w", j.Name, err)
	}
	return id, nil
}

// ParseSubmit reads `sbatch --parsable`'s answer: "ID" or "ID;CLUSTER".
func ParseSubmit(out string) (string, error) {
	s := strings.TrimSpace(out)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:]) // warnings may come first
	}
	id, _, _ := strings.Cut(s, ";")
	if !validID(id) {
		return "", fmt.Errorf("sbatch answered %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

func validID(id string) bool {
	n, err := strconv.ParseUint(id, 10, 64)
	return err == nil && n > 0 && strconv.FormatUint(n, 10) == id
}

// squeueFormat is squeue's output: ID|name|state|reason|nodes|comment.
// The comment comes last because it is free text and may hold "|".
const squeueFormat = "%i|%j|%T|%r|%N|%k"

// Queue asks squeue about jobs ids, finished ones included (slurmctld keeps
// them MinJobAge seconds, 300 by default). Jobs squeue no longer knows are
// missing from the map: ask Accounting. One call whatever len(ids) is.
func (c *Client) Queue(ctx context.Context, ids []string) (map[string]Info, error) {
	if len(ids) == 0 {
		return map[string]Info{}, nil
	}
	out, err := c.cmd(ctx, "squeue", "--noheader", "--states=all", "--jobs="+strings.Join(ids, ","), "--format="+squeueFormat)
	if err != nil {
		// Every id unknown: squeue fails instead of printing nothing.
		if strings.Contains(err.Error(), "Invalid job id") {
			return map[string]Info{}, nil
		}
		return nil, err
	}
	return ParseSqueue(string(out))
}

// QueueByName asks squeue for this user's jobs named name (a run whose job
// ID was never recorded: the server died right after sbatch).
func (c *Client) QueueByName(ctx context.Context, name string) ([]Info, error) {
	out, err := c.cmd(ctx, "squeue", "--noheader", "--states=all", "--me", "--name="+name, "--format="+squeueFormat)
	if err != nil {
		return nil, err
	}
	m, err := ParseSqueue(string(out))
	if err != nil {
		return nil, err
	}
	var list []Info
	for _, in := range m {
		list = append(list, in)
	}
	return list, nil
}

// ParseSqueue reads lines of squeueFormat.
func ParseSqueue(out string) (map[string]Info, error) {
	m := map[string]Info{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "|", 6)
		if len(f) < 5 || !validID(f[0]) {
			return nil, fmt.Errorf("slurm: squeue: unexpected line %q", line)
		}
		in := Info{ID: f[0], Name: f[1], State: State(f[2]), Reason: f[3], Node: f[4]}
		if len(f) == 6 && f[5] != "(null)" {
			in.Comment = f[5]
		}
		if in.Reason == "None" {
			in.Reason = ""
		}
		m[in.ID] = in
	}
	return m, nil
}

// sacctFields is what Accounting reads, in this order.
const sacctFields = "JobID,JobName,State,ExitCode,NodeList"

// Accounting asks sacct about ended jobs ids. It reads slurmdbd's records
// where the cluster has them, and the job completion log (`sacct -c`,
// jobcomp/filetxt) where it has only that (ci/slurm/setup.sh's single node).
// Jobs sacct does not know are missing from the map.
func (c *Client) Accounting(ctx context.Context, ids []string) (map[string]Info, error) {
	if len(ids) == 0 {
		return map[string]Info{}, nil
	}
	args := []string{"--noheader", "--parsable2", "--allocations", "--jobs=" + strings.Join(ids, ","), "--format=" + sacctFields}
	out, err := c.cmd(ctx, "sacct", args...)
	if err == nil && !bytes.Contains(out, []byte("accounting storage is disabled")) {
		return ParseSacct(string(out))
	}
	if err != nil && !strings.Contains(err.Error(), "accounting storage is disabled") {
		return nil, err
	}
	// No slurmdbd: the completion log. --starttime: sacct -c otherwise reads
	// only today's records.
	out, err = c.cmd(ctx, "sacct", append([]string{"--completion", "--starttime=2000-01-01"}, args...)...)
	if err != nil {
		if strings.Contains(err.Error(), "disabled") {
			return nil, ErrAccountingDisabled
		}
		return nil, err
	}
	return ParseSacct(string(out))
}

// ParseSacct reads `sacct --parsable2` lines of sacctFields. A job listed
// twice (a requeued one) keeps its last line.
func ParseSacct(out string) (map[string]Info, error) {
	m := map[string]Info{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 5 {
			return nil, fmt.Errorf("slurm: sacct: unexpected line %q", line)
		}
		id := f[0]
		if strings.ContainsAny(id, ".+_") || !validID(id) {
			continue // a step or an array/het component: the allocation's line says it
		}
		in := Info{ID: id, Name: f[1], Node: f[4]}
		in.State, in.By = parseSacctState(f[2])
		if code, sig, ok := parseExit(f[3]); ok {
			in.ExitCode, in.Signal, in.HasExit = code, sig, true
		}
		if in.Node == "None assigned" || in.Node == "(null)" {
			in.Node = ""
		}
		m[id] = in
	}
	return m, nil
}

// parseSacctState splits "CANCELLED by 1000" into the state and who.
func parseSacctState(s string) (State, string) {
	s = strings.TrimSpace(s)
	if st, by, ok := strings.Cut(s, " by "); ok {
		return State(st), strings.TrimSpace(by)
	}
	return State(strings.TrimSuffix(s, "+")), ""
}

// parseExit reads "code:signal".
func parseExit(s string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, false
	}
	code, err1 := strconv.Atoi(a)
	sig, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return code, sig, true
}

// Cancel runs scancel for job id. A job that already ended is not an error.
func (c *Client) Cancel(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("slurm: cancel: %q is not a job id", id)
	}
	_, err := c.cmd(ctx, "scancel", id)
	if err != nil && strings.Contains(err.Error(), "already completing or completed") {
		return nil
	}
	return err
}
