package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// The real binary, built once for the tests that start it (TestMain
// removes it).
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// builtWeb builds this package's binary on first use and returns its path.
// A build failure fails the calling test with the compiler's output.
func builtWeb(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "web-test-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "web")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build ./cmd/web: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// cli runs the CLI in-process.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// emptyDB creates a migrated, empty database file.
func emptyDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pitchtank.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return path
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"user"},
		{"user", "delete"},
		{"user", "add", "--db", "x.db"},
		{"token", "create", "--db", "x.db"},
		{"backup", "--db", "x.db"},
		{"serve", "--no-such-flag"},
		{"serve", "stray"},
		{"serve", "--devices", "gpu0"},
		{"serve", "--devices", "0,0"},
		{"serve", "--devices", " , "},
		{"serve", "--devices", "cpu,4096"}, // no machine has GPU 4096: refused at start, not at the first run
		{"serve", "--run-timeout", "0s"},
		{"serve", "--memory-limit", "lots"},
		{"serve", "--memory-limit", "-5MiB"},
	} {
		code, _, stderr := cli(t, "", args...)
		if code != 2 || stderr == "" {
			t.Errorf("web %v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
	db := filepath.Join(t.TempDir(), "p.db")
	if code, _, stderr := cli(t, "", "serve", "--db", db, "--no-demo", "--addr", "127.0.0.1:0", "--trusted-origin", "not an origin"); code != 2 || !strings.Contains(stderr, "trusted origin") {
		t.Errorf("bad --trusted-origin: exit %d, stderr %q", code, stderr)
	}
	if code, out, _ := cli(t, "", "help"); code != 0 || !strings.Contains(out, "web serve") {
		t.Errorf("help: %d %q", code, out)
	}
}

func TestUserTokenBackup(t *testing.T) {
	db := emptyDB(t)
	code, out, stderr := cli(t, "a long enough password\n", "user", "add", "--db", db, "--name", "ada", "--role", "shark", "--display", "Ada L.")
	if code != 0 || !strings.Contains(out, "added user ada") {
		t.Fatalf("user add: %d %q %q", code, out, stderr)
	}
	// Bad input: a clear message, exit 1, nothing added.
	if code, _, stderr := cli(t, "another long password\n", "user", "add", "--db", db, "--name", "bob", "--role", "emperor"); code != 1 || !strings.Contains(stderr, "role") {
		t.Errorf("bad role: %d %q", code, stderr)
	}
	if code, _, stderr := cli(t, "another long password\n", "user", "add", "--db", db, "--name", "ada", "--role", "viewer"); code != 1 || stderr == "" {
		t.Errorf("duplicate login: %d %q", code, stderr)
	}
	if code, _, _ := cli(t, "", "user", "add", "--db", db, "--name", "eve", "--role", "viewer"); code != 2 {
		t.Errorf("empty password: exit %d, want 2", code)
	}
	// A mistyped --db is an error, not a new empty database.
	missing := filepath.Join(t.TempDir(), "typo.db")
	if code, _, _ := cli(t, "a long enough password\n", "user", "add", "--db", missing, "--name", "x1", "--role", "viewer"); code != 1 {
		t.Errorf("missing db: exit %d", code)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("user add created %s", missing)
	}

	// The password read from stdin (newline trimmed) logs in.
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Authenticate(context.Background(), "ada", "a long enough password")
	if err != nil || u.DisplayName != "Ada L." {
		t.Fatalf("authenticate ada: %+v %v", u, err)
	}
	users, _ := s.Users(context.Background())
	if len(users) != 1 {
		t.Fatalf("users = %+v", users)
	}

	code, out, stderr = cli(t, "", "token", "create", "--db", db, "--user", "ada")
	if code != 0 {
		t.Fatalf("token create: %d %q", code, stderr)
	}
	tok := strings.TrimSpace(out)
	if got, err := s.UserByToken(context.Background(), tok); err != nil || got.Login != "ada" {
		t.Fatalf("printed token does not authenticate: %v", err)
	}
	if code, _, stderr := cli(t, "", "token", "create", "--db", db, "--user", "nobody"); code != 1 || !strings.Contains(stderr, "nobody") {
		t.Errorf("token for unknown user: %d %q", code, stderr)
	}
	s.Close()

	dest := filepath.Join(t.TempDir(), "backup.db")
	if code, _, stderr := cli(t, "", "backup", "--db", db, "--to", dest); code != 0 {
		t.Fatalf("backup: %d %q", code, stderr)
	}
	b, err := sqlite.Open(dest)
	if err != nil {
		t.Fatalf("open backup: %v", err)
	}
	defer b.Close()
	if _, err := b.Authenticate(context.Background(), "ada", "a long enough password"); err != nil {
		t.Fatalf("backup lacks ada: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe to write from the server goroutine
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

func TestServeLoadsDemoAndStops(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pitchtank.db")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, strings.NewReader(""), &out, &errb)
	}()

	base := waitFor(t, &out, done)
	// serve runs one scheduler processor more than the pages it serves at
	// once (one per CPU): the spare one reads arriving requests. Starting
	// again (below) must not add another.
	if got, want := runtime.GOMAXPROCS(0), cpuProcs+1; got != want {
		t.Errorf("GOMAXPROCS %d while serving, want %d (%d CPUs + the spare)", got, want, cpuProcs)
	}
	// The collector waits for the default memory limit (unless the
	// environment sets its own, which serve then leaves alone).
	envGC := os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
	if got := debug.SetMemoryLimit(-1); !envGC && got != defaultMemoryLimit {
		t.Errorf("memory limit %d while serving, want %d", got, defaultMemoryLimit)
	}
	for _, want := range []string{"DEMO ONLY", "oracle", "demo-oracle", "admin"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve output lacks %q:\n%s", want, out.String())
		}
	}
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
	if got := debug.SetMemoryLimit(-1); !envGC && got != math.MaxInt64 {
		t.Errorf("memory limit %d after serve returned, want Go's default back", got)
	}

	// A second start finds the demo there and does not load or print it again.
	ctx2, cancel2 := context.WithCancel(context.Background())
	var out2 syncBuffer
	done2 := make(chan int, 1)
	go func() {
		done2 <- run(ctx2, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, strings.NewReader(""), &out2, io.Discard)
	}()
	waitFor(t, &out2, done2)
	if got := runtime.GOMAXPROCS(0); got != cpuProcs+1 {
		t.Errorf("GOMAXPROCS %d after a second start, want %d", got, cpuProcs+1)
	}
	cancel2()
	<-done2
	if strings.Contains(out2.String(), "DEMO ONLY") {
		t.Errorf("second start reloaded the demo:\n%s", out2.String())
	}
}

func waitFor(t *testing.T, out *syncBuffer, done chan int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d: %s", code, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve never said it was listening: %s", out.String())
	return ""
}

// TestBinarySIGTERM builds the real binary and checks that SIGTERM shuts
// it down cleanly (exit 0) while it serves.
func TestBinarySIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := builtWeb(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "p.db"), "--no-demo")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	sc := bufio.NewScanner(stdout)
	var base string
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
		if strings.Contains(sc.Text(), "DEMO ONLY") {
			t.Errorf("--no-demo loaded the demo")
		}
	}
	if base == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("binary never said it was listening")
	}
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	res.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("binary did not stop on SIGTERM")
	}
}
