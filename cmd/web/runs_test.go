package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// The real binary serves with --devices cpu: a run queued over the API
// starts as a child `web bench`; SIGTERM stops the server cleanly, the
// running child is cancelled and recorded ("server shutting down").
func TestBinaryRunCancelledOnShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a CPU bench; skipped with -short")
	}
	dir := t.TempDir()
	bin := builtWeb(t)
	dbPath := filepath.Join(dir, "p.db")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dbPath, "--no-demo", "--devices", "cpu", "--run-timeout", "10m")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	sc := bufio.NewScanner(stdout)
	var base, line string
	for sc.Scan() {
		line = sc.Text()
		if m := listening.FindStringSubmatch(line); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("binary never said it was listening")
	}
	if !strings.Contains(line, "devices: cpu") {
		t.Errorf("listening line %q does not name the devices", line)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	// An admin with a token, made with the CLI against the served database.
	if code, _, stderr := cliDB(t, "pw-admin-123\n", "user", "add", "--db", dbPath, "--name", "admin", "--role", "admin"); code != 0 {
		t.Fatalf("user add: %s", stderr)
	}
	code, tok, stderr := cliDB(t, "", "token", "create", "--db", dbPath, "--user", "admin")
	if code != 0 {
		t.Fatalf("token create: %s", stderr)
	}
	tok = strings.TrimSpace(tok)

	api := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// A run on a GPU ordinal this server does not have is refused.
	if st, body := api("POST", "/api/runs", `{"problem":"nvfp4_group_gemm","variant":"baseline","device":"0","suite":"tests"}`); st != 422 || !strings.Contains(body, `"device"`) {
		t.Fatalf("run on device 0 of a --devices cpu server: %d %s", st, body)
	}
	st, body := api("POST", "/api/runs", `{"problem":"nvfp4_group_gemm","variant":"reference","baseline":"reference","device":"cpu","suite":"benchmarks"}`)
	if st != 201 {
		t.Fatalf("submit: %d %s", st, body)
	}
	var run runner.Run
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := api("GET", fmt.Sprintf("/api/runs/%d", run.ID), "")
		_ = json.Unmarshal([]byte(body), &run)
		if run.Status == runner.StatusRunning {
			break
		}
		if run.Status.Finished() || time.Now().After(deadline) {
			t.Fatalf("run did not start running: %+v", run)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("binary did not stop on SIGTERM")
	}
	db, err := sqlite.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Get(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusCancelled || !strings.Contains(got.Reason, "shutting down") {
		t.Fatalf("run after shutdown: %s (%q)", got.Status, got.Reason)
	}
}

// cliDB runs the CLI in-process on an existing database.
func cliDB(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// A run left "running" by a server that died is marked interrupted when
// `web serve` starts, before it serves.
func TestServeMarksInterruptedRuns(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	db, err := sqlite.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	left, err := db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Device: "cpu"})
	if err == nil {
		err = db.MarkRunning(ctx, left.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	sctx, cancel := context.WithCancel(ctx)
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(sctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", dbPath, "--no-demo", "--devices", "cpu"}, strings.NewReader(""), &out, io.Discard)
	}()
	waitFor(t, &out, done)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	db, err = sqlite.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Get(ctx, left.ID)
	if err != nil || got.Status != runner.StatusFailed || got.Reason != runner.ReasonInterrupted {
		t.Fatalf("left-over run after start: %+v %v", got, err)
	}
}
