package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/runner"
)

var updateFixture = flag.Bool("update-fixture", false, "rewrite "+fixtureAA+" from the end-to-end run's result document")

// benchReady fails the test unless cmd/web built and its bench subcommand
// answers: a broken `web bench` is a failure here, not a reason to skip.
func benchReady(t *testing.T) {
	t.Helper()
	if webBin == "" {
		t.Fatal("end-to-end needs cmd/web: " + webBuildErr)
	}
	out, err := exec.Command(webBin, "bench", "--problem", groupProblem, "--device", "cpu", "--suite", "tests", "--dump-shapes").CombinedOutput()
	if err != nil {
		t.Fatalf("web bench --dump-shapes: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}

// A real `web bench --device cpu --suite tests` run through the runner: the
// CPU reference paired with itself (A/A), progress relayed, result validated
// and stored with its shapes.
func TestEndToEndCPUBench(t *testing.T) {
	if testing.Short() {
		t.Skip("the CPU bench takes about 20 s; skipped with -short")
	}
	benchReady(t)
	r := newRunner(t, runner.Config{Devices: []string{"cpu"}, Command: runner.BenchCommand(webBin, 5*time.Minute)})
	ctx := context.Background()
	run, err := r.Submit(ctx, runner.Request{Problem: groupProblem, Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := r.Subscribe(run.ID)
	defer stop()
	progress := 0
	var last runner.Event
	for ev := range events {
		if ev.Type == "progress" {
			progress++
		}
		last = ev
	}
	if last.Type != "status" || last.Status != runner.StatusSucceeded {
		got, _ := r.Get(ctx, run.ID)
		t.Fatalf("last event %+v; run %s: %s\nstderr:\n%s", last, got.Status, got.Reason, got.Stderr)
	}
	if progress == 0 {
		t.Error("no progress events relayed")
	}
	got, err := r.Get(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasResult || !got.Correct || len(got.Shapes) == 0 || len(got.Result) == 0 {
		t.Fatalf("stored run: %+v", got)
	}
	// A/A: the speedup is about 1 (CPU timing is noisy; the GPU's A/A bound
	// of +/-1% is not asked of it).
	if !(got.Speedup.Value > 0.5 && got.Speedup.Value < 2) {
		t.Errorf("A/A geomean speedup %v", got.Speedup.Value)
	}
	// (The CPU stop rule caps a shape at 2 s, so slow shapes get few samples.)
	for _, s := range got.Shapes {
		if !s.Correct || !(s.VariantMedianUs > 0) || !(s.Speedup.Value > 0) || s.VariantSamples < 2 {
			t.Errorf("shape %+v", s)
		}
	}
	if !strings.Contains(got.Stderr, "web bench") {
		t.Errorf("stderr not kept: %q", got.Stderr)
	}
	if *updateFixture {
		if err := os.WriteFile(fixtureAA, withoutTempPath(t, got.Result), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", fixtureAA)
	}
}

// withoutTempPath replaces the --json FILE the document's command names (a
// folder of this test's temporary directory) by its base name, so the
// committed fixture names no path of the machine that wrote it.
func withoutTempPath(t *testing.T, doc []byte) []byte {
	t.Helper()
	var d struct {
		Command []string `json:"command"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("read the document's command: %v", err)
	}
	i := slices.Index(d.Command, "--json")
	if i < 0 || i+1 >= len(d.Command) {
		return doc
	}
	from, _ := json.Marshal(d.Command[i+1])
	to, _ := json.Marshal(filepath.Base(d.Command[i+1]))
	return bytes.Replace(doc, from, to, 1)
}

// The same path on a GPU: a knob variant paired with the baseline on device
// 0, through the runner. Skipped where no GPU is present.
func TestEndToEndGPUBench(t *testing.T) {
	if testing.Short() {
		t.Skip("the GPU bench takes tens of seconds; skipped with -short")
	}
	benchReady(t)
	n, err := gpu.DeviceCount()
	if err != nil || n == 0 {
		t.Skipf("no GPU here (device count %d, %v)", n, err)
	}
	r := newRunner(t, runner.Config{Devices: []string{"0"}, Command: runner.BenchCommand(webBin, 8*time.Minute)})
	ctx := context.Background()
	run, err := r.Submit(ctx, runner.Request{Problem: groupProblem, Suite: "tests", Variant: "baseline?stages=2", Baseline: "baseline", Device: "0"})
	if err != nil {
		t.Fatal(err)
	}
	got := waitDone(t, r, run.ID, 8*time.Minute)
	if got.Status != runner.StatusSucceeded {
		t.Fatalf("run %s: %s\nstderr:\n%s", got.Status, got.Reason, got.Stderr)
	}
	if !got.HasResult || !got.Correct || len(got.Shapes) == 0 || !(got.Speedup.Value > 0) {
		t.Fatalf("stored run: %+v", got)
	}
	for _, s := range got.Shapes {
		if !s.Correct || !(s.VariantMedianUs > 0) || !(s.BaselineMedianUs > 0) || !(s.FloorUs > 0) || !(s.FractionOfFloor > 0) ||
			!(s.Speedup.Lo <= s.Speedup.Value && s.Speedup.Value <= s.Speedup.Hi) {
			t.Errorf("shape %+v", s)
		}
	}
	t.Logf("GPU run: geomean speedup %.4f over %d shapes, flags %v", got.Speedup.Value, len(got.Shapes), got.Flags)
	for _, s := range got.Shapes {
		t.Logf("  %-40s base %9.2f us  var %9.2f us  x%.3f [%.3f, %.3f]  floor %.2f us  flags %v", s.Label, s.BaselineMedianUs, s.VariantMedianUs, s.Speedup.Value, s.Speedup.Lo, s.Speedup.Hi, s.FloorUs, s.Flags)
	}
}
