package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/kernels"
)

// Checking an upload before it is stored: the limits (pitches), the
// manifest and kind (the kernels package's contract), the architectures
// (code for a GPU this server or the project supports), then the compile
// report of `web kernel check --json`, run as a child process with a time
// limit. Nothing is compiled or loaded in the server process.

// DefaultCheckTimeout bounds one compile check.
const DefaultCheckTimeout = 2 * time.Minute

// SupportedArchs are the architectures the project builds for (sm_80,
// sm_90a, sm_100a, sm_120a): a submission must have code for one of them.
var SupportedArchs = []int{80, 90, 100, 120}

// CheckCommandFunc builds the compile check child for the submission
// folder dir: `web kernel check --json --problem P DIR`.
type CheckCommandFunc func(ctx context.Context, problem, dir string) *exec.Cmd

// CheckCommand runs exe (empty: this binary) `kernel check --json
// --problem P DIR`.
func CheckCommand(exe string) CheckCommandFunc {
	return func(ctx context.Context, problem, dir string) *exec.Cmd {
		path := exe
		if path == "" {
			if p, err := os.Executable(); err == nil {
				path = p
			}
		}
		return exec.CommandContext(ctx, path, CheckArgs(problem, dir)...)
	}
}

// CheckArgs are the compile check's arguments.
func CheckArgs(problem, dir string) []string {
	return []string{"kernel", "check", "--json", "--problem", problem, dir}
}

// SubmissionChecker checks uploads. The zero value checks the form, the
// manifest and the architectures against SupportedArchs and stores the
// report "not compiled here" (no compile check configured).
type SubmissionChecker struct {
	// Command builds the compile check; nil: none is run.
	Command CheckCommandFunc
	// Timeout bounds the compile check (default DefaultCheckTimeout).
	Timeout time.Duration
	// Archs are the sm numbers of this server's GPUs (90 for an H100);
	// empty when it has none (runs then go to GPUs elsewhere, and uploads
	// are checked against SupportedArchs).
	Archs []int
	// TempDir holds the submission folder during the check (default
	// os.TempDir()).
	TempDir string
}

// Check validates an upload's files and returns it ready to store, with
// its hash and compile report. A refused upload is a *pitches.Error naming
// the field (the file, or the manifest's field); nothing is kept.
func (c *SubmissionChecker) Check(ctx context.Context, files map[string][]byte) (*pitches.KernelUpload, error) {
	if err := pitches.ValidateKernelFiles(files); err != nil {
		return nil, err
	}
	sub, err := parseSubmission(files)
	if err != nil {
		return nil, err
	}
	if err := c.checkArchs(sub, files); err != nil {
		return nil, err
	}
	up := &pitches.KernelUpload{Hash: sub.hash, Manifest: sub.manifest, Raw: files["manifest.json"], Files: files}
	up.Report = c.compileReport(ctx, sub.manifest.Problem, files)
	return up, nil
}

// checkArchs refuses a submission no GPU here (or, without GPUs, no
// architecture the project supports) can run: min_arch above every one of
// them, or a cubin or PTX built only for others.
func (c *SubmissionChecker) checkArchs(sub *submission, files map[string][]byte) error {
	archs, where := c.Archs, "this server's GPUs"
	if len(archs) == 0 {
		archs, where = SupportedArchs, "the architectures pitchtank runs"
	}
	m := sub.manifest
	if m.MinArch > slices.Max(archs) {
		return pitches.Errorf(pitches.EINVALID, "manifest.min_arch", "min_arch %d (sm_%d) is above every GPU it could run on: %s are %s", m.MinArch, m.MinArch, where, archList(archs))
	}
	src := files[m.Source]
	switch m.Kind {
	case kernels.KindCubin:
		code, err := kernels.BinaryArchs(src)
		if err != nil {
			return pitches.Errorf(pitches.EINVALID, "files."+m.Source, "%s: %v", m.Source, err)
		}
		for _, d := range archs {
			if kernels.RunsOn(code, deviceArch(d)) {
				return nil
			}
		}
		return pitches.Errorf(pitches.EINVALID, "files."+m.Source, "%s holds code for %s only; none runs on %s (%s): build it for one of them", m.Source, kernels.BinaryArchList(code), where, archList(archs))
	case kernels.KindPTX:
		if t := ptxTarget(src); t > 0 && t > slices.Max(archs) {
			return pitches.Errorf(pitches.EINVALID, "files."+m.Source, "%s targets sm_%d, above every GPU it could run on: %s are %s", m.Source, t, where, archList(archs))
		}
	}
	return nil
}

// deviceArch names a device of compute capability sm the way NVRTC and
// kernels.RunsOn do: the arch-specific target where one exists.
func deviceArch(sm int) string {
	switch sm {
	case 90, 100, 120:
		return fmt.Sprintf("sm_%da", sm)
	}
	return fmt.Sprintf("sm_%d", sm)
}

func archList(archs []int) string {
	s := make([]string, len(archs))
	for i, a := range archs {
		s[i] = "sm_" + strconv.Itoa(a)
	}
	return strings.Join(s, ", ")
}

// ptxTarget reads ".target sm_XY[a]" of a PTX text; 0 when absent.
func ptxTarget(b []byte) int {
	i := bytes.Index(b, []byte(".target"))
	if i < 0 {
		return 0
	}
	rest := strings.TrimSpace(string(b[i+len(".target") : min(len(b), i+len(".target")+40)]))
	rest, ok := strings.CutPrefix(rest, "sm_")
	if !ok {
		return 0
	}
	n := 0
	for _, r := range rest {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// compileReport runs the compile check child on the submission written to
// a temporary folder, within the time limit, and keeps what it says.
func (c *SubmissionChecker) compileReport(ctx context.Context, problem string, files map[string][]byte) pitches.CompileReport {
	if c.Command == nil {
		return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: this server runs no compile check"}
	}
	tmp := c.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	dir, err := os.MkdirTemp(tmp, "kernel-check-")
	if err != nil {
		return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	sub := filepath.Join(dir, KernelDirName)
	if err := os.Mkdir(sub, 0o755); err != nil {
		return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: " + err.Error()}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(sub, name), data, 0o644); err != nil {
			return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: " + err.Error()}
		}
	}
	limit := c.Timeout
	if limit <= 0 {
		limit = DefaultCheckTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := c.Command(ctx, problem, sub)
	stdout, stderr := &capped{max: 1 << 20}, &tail{max: tailBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own process group, killed whole at the deadline (NVRTC may have
	// started nothing else, but a stand-in or a wrapper could have).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return pitches.CompileReport{Status: "failed", Message: fmt.Sprintf("the compile check did not finish within %s", limit)}
	}
	out, errText := bytes.TrimSpace(stdout.buf), strings.TrimSpace(stderr.String())
	var raw json.RawMessage
	if json.Valid(out) && len(out) > 0 && out[0] == '{' {
		raw = out
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return pitches.CompileReport{Status: "compiled", Report: raw}
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		// NVRTC refused it: the messages (file:line) are the point.
		msg := errText
		if msg == "" {
			msg = reportMessage(raw)
		}
		return pitches.CompileReport{Status: "failed", Message: lastBytes(msg, 8<<10), Report: raw}
	case errors.As(err, &ee):
		msg := errText
		if m := reportMessage(raw); m != "" {
			msg = m
		}
		// Exit 3 is `web kernel check`'s "no NVRTC here".
		if ee.ExitCode() == 3 || strings.Contains(strings.ToLower(msg), "nvrtc") {
			return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: NVRTC unavailable (" + lastBytes(msg, 500) + ")", Report: raw}
		}
		return pitches.CompileReport{Status: "not compiled", Message: fmt.Sprintf("not compiled here: the compile check exited %d: %s", ee.ExitCode(), lastBytes(msg, 2000)), Report: raw}
	default:
		return pitches.CompileReport{Status: "not compiled", Message: "not compiled here: " + err.Error()}
	}
}

// reportMessage is a check report's "message" or "error", when it has one.
func reportMessage(raw json.RawMessage) string {
	var m struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	if m.Message != "" {
		return m.Message
	}
	return m.Error
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// capped keeps the first max bytes written to it (a report cut short is
// not JSON, and is then not kept).
type capped struct {
	max int
	buf []byte
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
