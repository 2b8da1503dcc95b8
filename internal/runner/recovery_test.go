package runner_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

const dbEnv = "RUNNER_TEST_DB"

// serverChild is the server half of TestCrashRecovery: it runs a runner over
// the database in dbEnv, queues a run that never ends, prints
// "RUNNING <id>" once the run is running, and waits to be killed.
func serverChild() int {
	db, err := sqlite.Open(os.Getenv(dbEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 70
	}
	pidFile := os.Getenv(pidFileEnv)
	r, err := runner.New(runner.Config{
		Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"},
		Command: standIn(nopTB{}, map[int64]string{1: "slow"}, pidFile),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "new runner:", err)
		return 70
	}
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 70
	}
	run, err := r.Submit(ctx, cpuRequest(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "submit:", err)
		return 70
	}
	events, _ := r.Subscribe(run.ID)
	for ev := range events {
		if ev.Type == "progress" {
			break
		}
	}
	fmt.Printf("RUNNING %d\n", run.ID)
	select {}
}

// nopTB lets standIn run outside a test (in the server child).
type nopTB struct{ testing.TB }

func (nopTB) Fatal(args ...any) { fmt.Fprintln(os.Stderr, args...); os.Exit(70) }

func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "pitchtank.db")
	pidFile := filepath.Join(dir, "grandchild.pid")

	server := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	server.Env = append(os.Environ(), childEnv+"=server", dbEnv+"="+dbPath, pidFileEnv+"="+pidFile)
	server.Stderr = os.Stderr
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "RUNNING ") {
				lines <- sc.Text()
				return
			}
		}
		close(lines)
	}()
	var id int64
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("the server child ended without running its run")
		}
		fmt.Sscanf(line, "RUNNING %d", &id)
	case <-time.After(30 * time.Second):
		t.Fatal("the server child did not report a running run")
	}

	// The bench child and its grandchild, to check and to clean up.
	benchPid := readPid(t, pidFile+".self", 5*time.Second)
	sleepPid := readPid(t, pidFile, 5*time.Second)
	t.Cleanup(func() { syscall.Kill(-benchPid, syscall.SIGKILL); syscall.Kill(sleepPid, syscall.SIGKILL) })

	// The server dies without any chance to clean up.
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()

	// Its bench child dies with it (Pdeathsig), so a restarted server does
	// not find the GPU busy with an orphan.
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(benchPid) {
		if time.Now().After(deadline) {
			t.Fatalf("bench child %d outlived its server", benchPid)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Before the restart the run is still "running" in the file.
	db := openDB(t, dbPath)
	before, err := db.Get(context.Background(), id)
	if err != nil || before.Status != runner.StatusRunning {
		t.Fatalf("before restart: %+v, %v", before, err)
	}

	r := newRunner(t, runner.Config{Store: db, Devices: []string{"cpu"},
		Command: standIn(t, map[int64]string{1: "ok"}, "")})
	got, err := r.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusFailed || got.Reason != runner.ReasonInterrupted || got.FinishedAt.IsZero() {
		t.Fatalf("after restart: %s (%q)", got.Status, got.Reason)
	}

	raw, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var check string
	if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}

	again, err := r.Requeue(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again.RequeueOf != id || again.Variant != got.Variant || again.Seed != 1 {
		t.Fatalf("requeued run = %+v", again)
	}
	checkOK(t, waitDone(t, r, again.ID, 20*time.Second))
}

// A run queued for a device the restarted server no longer has fails at
// start with a reason, instead of waiting forever.
func TestStartFailsRunsOnMissingDevices(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	ctx := context.Background()
	gone, err := db.Enqueue(ctx, runner.Request{Problem: groupProblem, Suite: "tests", Variant: "baseline", Device: "3"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, runner.Config{Store: db, Devices: []string{"cpu"}, Command: standIn(t, map[int64]string{}, "")})
	got, err := r.Get(ctx, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusFailed || !strings.Contains(got.Reason, `device "3" does not exist`) {
		t.Fatalf("run on a missing device: %s (%q)", got.Status, got.Reason)
	}
}
