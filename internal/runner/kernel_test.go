package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// Submitted kernels through the runner: the stored submission reaches the
// child as a folder (--kernel DIR --variant 'kernel?knobs'), and a bad
// kernel request is refused before anything is queued.

const kernelChildEnv = "RUNNER_TEST_KERNEL_CHILD" // the expected files, as JSON name -> bytes

// clearFiles reads the test submission (testdata/kernels/clear).
func clearFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range []string{"manifest.json", "clear.cu"} {
		b, err := os.ReadFile(filepath.Join("testdata", "kernels", "clear", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

// TestKernelChild is the stand-in `web bench --kernel` child, not a test:
// it checks that the submission folder holds exactly the stored files,
// then answers with the fixture document for the variant it was given.
func TestKernelChild(t *testing.T) {
	want := os.Getenv(kernelChildEnv)
	if want == "" {
		t.Skip("stand-in child program for the kernel run test; it runs only when that test starts it")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	os.Exit(kernelChild(want, args))
}

func kernelChild(want string, args []string) int {
	var files map[string][]byte
	if err := json.Unmarshal([]byte(want), &files); err != nil {
		fmt.Fprintln(os.Stderr, "expected files:", err)
		return 70
	}
	dir, variant, jsonPath := flagValue(args, "--kernel"), flagValue(args, "--variant"), flagValue(args, "--json")
	if dir == "" || !strings.HasPrefix(variant, "kernel") {
		fmt.Fprintf(os.Stderr, "not a kernel run: %q\n", args)
		return 2
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != len(files) {
		fmt.Fprintf(os.Stderr, "kernel folder %s: %d entries, want %d (%v)\n", dir, len(entries), len(files), err)
		return 70
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, data) {
			fmt.Fprintf(os.Stderr, "kernel file %s differs from the stored one (%v)\n", name, err)
			return 70
		}
	}
	raw, err := os.ReadFile(os.Getenv(fixtureEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "read fixture:", err)
		return 70
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		return 70
	}
	doc["variant"].(map[string]any)["spec"] = variant
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(jsonPath, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "write result:", err)
		return 70
	}
	fmt.Printf(`{"type":"result","path":%q,"status":"ok","exit_code":0}`+"\n", jsonPath)
	return 0
}

// kernelFixture makes a pitching round with a contestant's pitch and
// uploads the test submission to it.
func kernelFixture(t *testing.T, db *sqlite.DB) (*pitches.Pitch, *pitches.KernelUpload) {
	t.Helper()
	ctx := context.Background()
	p := contestantPitch(t, db, "Clear")
	alice, err := db.UserByID(ctx, p.ContestantID)
	if err != nil {
		t.Fatal(err)
	}
	up, err := (&runner.SubmissionChecker{}).Check(ctx, clearFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	up.Knobs = "unroll=2"
	if _, err := db.UploadKernel(ctx, alice, p.ID, *up); err != nil {
		t.Fatal(err)
	}
	if p, err = db.Pitch(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	return p, up
}

// The run of a pitch naming a submission gets --kernel DIR with the stored
// files and --variant kernel?knobs, and its result is stored under the
// pitch's variant (the hash recorded).
func TestKernelRunPassesTheSubmission(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	p, up := kernelFixture(t, db)
	if want := "kernel:" + up.Hash + "?unroll=2"; p.Variant != want {
		t.Fatalf("pitch variant = %q, want %q", p.Variant, want)
	}
	expected, _ := json.Marshal(up.Files)
	fixture, _ := filepath.Abs(fixtureAA)
	var gotArgs []string
	r := newRunner(t, runner.Config{Store: db, Kernels: db, Command: func(run *runner.Run, resultPath string) (*exec.Cmd, error) {
		gotArgs = runner.BenchArgs(run, resultPath, 0)
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestKernelChild$", "--"}, gotArgs...)...)
		// childEnv set: TestMain runs the tests at once (no cmd/web build).
		cmd.Env = append(os.Environ(), kernelChildEnv+"="+string(expected), fixtureEnv+"="+fixture, childEnv+"=kernel")
		return cmd, nil
	}})
	run, err := r.Submit(context.Background(), runner.Request{Problem: groupProblem, Suite: "tests", Variant: p.Variant,
		Baseline: "baseline", Device: "0", PitchID: p.ID})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	done := waitDone(t, r, run.ID, 30*time.Second)
	if done.Status != runner.StatusSucceeded {
		t.Fatalf("run %s: %s\nstderr: %s", done.Status, done.Reason, done.Stderr)
	}
	if done.Variant != p.Variant {
		t.Errorf("stored variant %q, want the pitch's %q (the hash recorded)", done.Variant, p.Variant)
	}
	args := strings.Join(gotArgs, " ")
	if !strings.Contains(args, "--variant kernel?unroll=2") || !strings.Contains(args, "--kernel ") || strings.Contains(args, up.Hash) {
		t.Errorf("child args %q: want --kernel DIR --variant kernel?unroll=2 and no hash", args)
	}
}

// Requests naming a submission are checked against it before anything is
// queued: unknown hash, another problem, undeclared knob or value, the cpu
// device, a submission as the baseline.
func TestKernelRequestRefused(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	p, up := kernelFixture(t, db)
	r := newRunner(t, runner.Config{Store: db, Kernels: db, Command: standIn(t, map[int64]string{}, "")})
	other := strings.Repeat("ab", 32)
	cases := []struct {
		name       string
		req        runner.Request
		field, msg string
	}{
		{"not stored", runner.Request{Problem: groupProblem, Variant: "kernel:" + other, Device: "0"}, "variant", "not stored"},
		{"bad hash", runner.Request{Problem: groupProblem, Variant: "kernel:xyz", Device: "0"}, "variant", "64 hex"},
		{"other problem", runner.Request{Problem: "nvfp4_dual_gemm", Variant: "kernel:" + up.Hash, Device: "0"}, "variant", "solves nvfp4_group_gemm"},
		{"unknown knob", runner.Request{Problem: groupProblem, Variant: "kernel:" + up.Hash + "?stages=3", Device: "0"}, "variant", `unknown knob "stages"`},
		{"bad value", runner.Request{Problem: groupProblem, Variant: "kernel:" + up.Hash + "?unroll=3", Device: "0"}, "variant", "allowed: 1, 2, 4"},
		{"cpu", runner.Request{Problem: groupProblem, Suite: "tests", Variant: "kernel:" + up.Hash, Device: "cpu"}, "", ""},
		{"as baseline", runner.Request{Problem: groupProblem, Variant: "baseline", Baseline: p.Variant, Device: "0"}, "baseline", "built-in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Submit(context.Background(), c.req)
			if pitches.ErrorCode(err) != pitches.EINVALID {
				t.Fatalf("err = %v, want invalid", err)
			}
			if c.field != "" && (pitches.ErrorField(err) != c.field || !strings.Contains(pitches.ErrorMessage(err), c.msg)) {
				t.Errorf("err = %v, want field %s with %q", err, c.field, c.msg)
			}
		})
	}
	runs, err := r.List(context.Background(), runner.Filter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs queued by refused requests (%v)", len(runs), err)
	}
	// Without a kernel store, a kernel run is refused with why.
	r2 := newRunner(t, runner.Config{Command: standIn(t, map[int64]string{}, "")})
	if _, err := r2.Submit(context.Background(), runner.Request{Problem: groupProblem, Variant: p.Variant, Device: "0"}); !strings.Contains(pitches.ErrorMessage(err), "stores no submitted kernels") {
		t.Errorf("without a store: %v", err)
	}
}

// A submission that fails in the child (here: the child exits 3, as bench
// does when a kernel does not compile) fails its own run only; the next run
// on the device proceeds.
func TestKernelRunFailureIsIsolated(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	p, _ := kernelFixture(t, db)
	fixture, _ := filepath.Abs(fixtureAA)
	r := newRunner(t, runner.Config{Store: db, Kernels: db, Command: func(run *runner.Run, resultPath string) (*exec.Cmd, error) {
		mode := "cudaerror"
		if run.Variant == "reference" {
			mode = "ok"
		}
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperChild$", "--"}, runner.BenchArgs(run, resultPath, 0)...)...)
		cmd.Env = append(os.Environ(), childEnv+"="+mode, fixtureEnv+"="+fixture)
		return cmd, nil
	}})
	bad, err := r.Submit(context.Background(), runner.Request{Problem: groupProblem, Suite: "tests", Variant: p.Variant, Baseline: "baseline", Device: "0", PitchID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	next, err := r.Submit(context.Background(), cpuRequest(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitDone(t, r, bad.ID, 30*time.Second); got.Status != runner.StatusFailed || !strings.Contains(got.Reason, "CUDA_ERROR") {
		t.Errorf("kernel run: %s %q, want failed naming the CUDA error", got.Status, got.Reason)
	}
	if got := waitDone(t, r, next.ID, 30*time.Second); got.Status != runner.StatusSucceeded {
		t.Errorf("next run: %s %q, want succeeded", got.Status, got.Reason)
	}
}
