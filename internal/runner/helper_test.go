package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// The stand-in child: the fault tests run this test binary again
// (os.Args[0] -test.run=^TestHelperChild$ -- <bench args>) with childEnv
// naming the behaviour, so a real process crashes, hangs or prints garbage.
const (
	childEnv     = "RUNNER_TEST_CHILD"
	fixtureEnv   = "RUNNER_TEST_FIXTURE" // a real result document to hand back
	pidFileEnv   = "RUNNER_TEST_PIDFILE" // where a child writes its grandchild's pid
	selfPidEnv   = "RUNNER_TEST_SELFPID" // where the "slow" child writes its own pid
	fixtureAA    = "testdata/cpu-tests-aa.json"
	groupProblem = "nvfp4_group_gemm"
)

// webBin is cmd/web built by TestMain; empty when it does not build, with
// webBuildErr saying why (the end-to-end tests then fail with it; the
// others, which do not start it, still run).
var webBin, webBuildErr string

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	// A prebuilt binary (a machine without the Go toolchain, such as the GPU
	// machine the GPU end-to-end test runs on).
	if bin := os.Getenv("RUNNER_TEST_WEB"); bin != "" {
		webBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "runner-test-web-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "web")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pitchtank/pitchtank/cmd/web").CombinedOutput()
	if err != nil {
		webBuildErr = fmt.Sprintf("cmd/web does not build: %v\n%s", err, out)
	} else {
		webBin = bin
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestHelperChild is the stand-in child program, not a test.
func TestHelperChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("stand-in child program for the fault tests; it runs only when they start it")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	os.Exit(helperChild(mode, args))
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func progress(i, n int) {
	fmt.Printf(`{"type":"progress","phase":"timing","shape":%d,"shapes":%d,"variant":"reference","role":"variant","samples":%d,"median_us":12.5}`+"\n", i, n, 10*i)
}

// startGrandchild starts `sleep 300` and records its pid, so the test can
// check that the process group kill reached it.
func startGrandchild() {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start grandchild:", err)
		os.Exit(70)
	}
	if f := os.Getenv(pidFileEnv); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	}
}

func helperChild(mode string, args []string) int {
	jsonPath := flagValue(args, "--json")
	switch mode {
	case "ok": // what a healthy bench does: progress, a real result document, exit 0
		for i := 0; i < 3; i++ {
			progress(i, 9)
		}
		fmt.Println("a line that is not JSON")
		doc, err := os.ReadFile(os.Getenv(fixtureEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "read fixture:", err)
			return 70
		}
		if err := os.WriteFile(jsonPath, doc, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write result:", err)
			return 70
		}
		fmt.Printf(`{"type":"result","path":%q,"status":"ok","exit_code":0,"geomean_speedup":0.99,"geomean_median_us":3109.9}`+"\n", jsonPath)
		return 0
	case "crash": // dies of a signal half way (Go's crash traceback ends in SIGABRT)
		progress(0, 9)
		fmt.Fprintln(os.Stderr, "launching kernel 3 of 8")
		debug.SetTraceback("crash")
		var m map[string]int
		m["boom"]++ // nil map write: a runtime panic
		return 0
	case "exit": // exits with a code bench never uses
		progress(0, 9)
		fmt.Fprintln(os.Stderr, "fatal: out of host memory")
		return 42
	case "hang": // a grandchild, SIGTERM ignored, never ends: only SIGKILL to the group works
		signal.Ignore(syscall.SIGTERM)
		startGrandchild()
		progress(0, 9)
		select {}
	case "slow": // keeps making progress until cancelled
		if f := os.Getenv(selfPidEnv); f != "" {
			os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		startGrandchild()
		for i := 0; ; i++ {
			progress(i%9, 9)
			time.Sleep(50 * time.Millisecond)
		}
	case "garbage": // prints nonsense and a result file that is not a result
		fmt.Println("Segmentation fault? no: just noise")
		fmt.Println(`{"type":`)
		fmt.Println(`{"type":"progress","shape":"three"}`)
		fmt.Println(strings.Repeat("x", 2<<20)) // a 2 MiB line
		os.WriteFile(jsonPath, []byte(`{"schema_version":1,"hello":"world"}`), 0o644)
		return 0
	case "cudaerror": // what bench prints for a CUDA error: an error line, exit 3
		progress(0, 9)
		fmt.Println(`{"type":"error","phase":"timing","shape":0,"message":"CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (cuStreamSynchronize)","exit_code":3}`)
		fmt.Fprintln(os.Stderr, "web bench: CUDA error")
		return 3
	case "server": // the crash-recovery test's server process
		return serverChild()
	case "panic": // a Go panic: the runtime prints the panic and exits 2, with no usage line
		progress(0, 9)
		var shapes []int
		_ = shapes[3] // index out of range
		return 0
	case "usage": // bench refusing its input: the usage error line, exit 2
		fmt.Println(`{"type":"error","phase":"usage","message":"--variant: unknown knob \"stagez\"","exit_code":2}`)
		fmt.Fprintln(os.Stderr, "web bench: --variant: unknown knob \"stagez\"")
		return 2
	}
	// "doc:PATH:CODE": write the document at PATH as the result and exit CODE
	// (the status tests' documents: incorrect, suspect, ...).
	if rest, ok := strings.CutPrefix(mode, "doc:"); ok {
		i := strings.LastIndexByte(rest, ':')
		code, err := strconv.Atoi(rest[i+1:])
		if i < 0 || err != nil {
			fmt.Fprintln(os.Stderr, "bad doc mode", mode)
			return 70
		}
		doc, err := os.ReadFile(rest[:i])
		if err != nil {
			fmt.Fprintln(os.Stderr, "read document:", err)
			return 70
		}
		progress(0, 9)
		if err := os.WriteFile(jsonPath, doc, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write result:", err)
			return 70
		}
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown stand-in mode", mode)
	return 70
}

// standIn returns a CommandFunc that starts the stand-in child with the
// behaviour modes[run.Seed] (the tests pick behaviours by seed).
func standIn(t testing.TB, modes map[int64]string, pidFile string) runner.CommandFunc {
	fixture, err := filepath.Abs(fixtureAA)
	if err != nil {
		t.Fatal(err)
	}
	return func(run *runner.Run, resultPath string) (*exec.Cmd, error) {
		mode, ok := modes[run.Seed]
		if !ok {
			return nil, fmt.Errorf("no stand-in behaviour for seed %d", run.Seed)
		}
		args := append([]string{"-test.run=^TestHelperChild$", "--"}, runner.BenchArgs(run, resultPath, 0)...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), childEnv+"="+mode, fixtureEnv+"="+fixture, pidFileEnv+"="+pidFile)
		if pidFile != "" {
			cmd.Env = append(cmd.Env, selfPidEnv+"="+pidFile+".self")
		}
		return cmd, nil
	}
}

func openDB(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newRunner starts a runner over a fresh database with the given command.
func newRunner(t testing.TB, cfg runner.Config) *runner.Runner {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	}
	if cfg.Catalog == nil {
		cfg.Catalog = runner.KernelsCatalog{}
	}
	if cfg.Devices == nil {
		cfg.Devices = []string{"0", "cpu"}
	}
	if cfg.TempDir == "" {
		cfg.TempDir = t.TempDir()
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("close runner: %v", err)
		}
	})
	return r
}

// cpuRequest is a request the stand-in answers with behaviour seed.
func cpuRequest(seed int64) runner.Request {
	return runner.Request{Problem: groupProblem, Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu", Seed: seed}
}

// waitDone polls until run id is finished.
func waitDone(t testing.TB, r *runner.Runner, id int64, limit time.Duration) *runner.Run {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		run, err := r.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("get run %d: %v", id, err)
		}
		if run.Status.Finished() {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s after %v", id, run.Status, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs (gone, or a zombie nobody
// has reaped yet: it holds nothing).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

func readPid(t testing.TB, path string, limit time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile(path)
		if err == nil && len(data) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no grandchild pid in %s after %v", path, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
