package runner_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// fixtureAAv2 is a real schema-2 document of `web bench --device cpu --aa
// --suite tests` (status ok), the base the status documents are made from.
const fixtureAAv2 = "testdata/cpu-tests-aa-v2.json"

// mutated reads a fixture, applies edit to its decoded JSON and checks that
// result.Validate accepts the result: the child hands back only documents a
// real bench could have written.
func mutated(t *testing.T, path string, edit func(d map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	edit(d)
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := result.Validate(out); err != nil {
		t.Fatalf("the test's document is not valid: %v", err)
	}
	file := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// failShape marks shape i incorrect: its first variant check fails, with
// the given phase, and the summary counts it.
func failShape(d map[string]any, i int, phase, detail string) {
	sh := d["shapes"].([]any)[i].(map[string]any)
	sh["correct"] = false
	for _, c := range sh["checks"].([]any) {
		c := c.(map[string]any)
		if c["role"] == "variant" {
			c["pass"], c["mismatches"], c["phase"] = false, 4096.0, phase
			if _, v2 := c["detail"]; v2 {
				c["detail"] = detail
			}
			break
		}
	}
	d["status"], d["exit_code"] = "incorrect", 1.0
	sm := d["summary"].(map[string]any)
	sm["correct"] = sm["correct"].(float64) - 1
	sm["all_correct"] = false
	if fp, ok := sm["fast_p"].([]any); ok {
		// fast_p counts incorrect shapes as failures: recompute from the shapes.
		speedups := sm["shape_speedups"].([]any)
		for _, e := range fp {
			e := e.(map[string]any)
			n := 0
			for j, s := range speedups {
				if j != i && s.(float64) > e["p"].(float64) && d["shapes"].([]any)[j].(map[string]any)["correct"] == true {
					n++
				}
			}
			e["value"] = float64(n) / float64(len(speedups))
		}
	}
	if _, v2 := sm["failures"]; v2 {
		sm["failures"] = []any{map[string]any{"shape": float64(i), "role": "variant", "check": phase, "detail": detail}}
	}
}

// Every status a run can end in, through the runner with its stand-in
// child: what bench exited with and what its document says decide it, the
// reason says what happened, and incorrect and suspect runs keep their
// result document and shapes.
func TestRunStatuses(t *testing.T) {
	incorrectV2 := mutated(t, fixtureAAv2, func(d map[string]any) {
		failShape(d, 2, "timed_sample", "sample 137 (input set 1): 4096 of 4096 elements differ")
	})
	incorrectV1 := mutated(t, fixtureAA, func(d map[string]any) {
		failShape(d, 4, "last_timed", "")
	})
	suspect := mutated(t, fixtureAAv2, func(d map[string]any) {
		d["status"], d["exit_code"] = "suspect", 4.0
		d["summary"].(map[string]any)["suspect"] = []any{"shape 1: median 20.1 us is below the speed-of-light floor 24.6 us", "geomean speedup 14.2x is over 10x the baseline"}
	})
	okV2 := mutated(t, fixtureAAv2, func(map[string]any) {})
	type want struct {
		status   runner.Status
		reason   []string
		measured bool // keeps its document and shapes
	}
	cases := map[string]want{
		"doc:" + okV2 + ":0":        {runner.StatusSucceeded, nil, true},
		"doc:" + incorrectV2 + ":1": {runner.StatusIncorrect, []string{"incorrect: shape 2 (", "variant check timed_sample", "sample 137 (input set 1)"}, true},
		"doc:" + incorrectV1 + ":1": {runner.StatusIncorrect, []string{"incorrect: shape 4 (", "variant check last_timed", "4096 of"}, true},
		"doc:" + suspect + ":4":     {runner.StatusSuspect, []string{"suspect: shape 1: median 20.1 us is below the speed-of-light floor", "14.2x"}, true},
		// A document that contradicts its exit code is no result.
		"doc:" + okV2 + ":1":    {runner.StatusFailed, []string{"exit 1 (kernel incorrect) but the document says every shape is correct"}, false},
		"doc:" + suspect + ":0": {runner.StatusFailed, []string{"bench exited 0 but its document says the result is suspect"}, false},
		"panic":                 {runner.StatusFailed, []string{"crashed: exit status 2 without bench's usage error (a Go panic exits 2)", "panic: runtime error: index out of range"}, false},
		"usage":                 {runner.StatusFailed, []string{"bench refused its input (exit 2)", "unknown knob"}, false},
		"exit":                  {runner.StatusFailed, []string{"crashed: exit status 42"}, false},
		"cudaerror":             {runner.StatusFailed, []string{"could not run (exit 3)"}, false},
	}
	modes := map[int64]string{}
	var order []string
	for mode := range cases {
		modes[int64(len(order)+1)] = mode
		order = append(order, mode)
	}
	modes[100] = "slow"
	r := newRunner(t, runner.Config{Command: standIn(t, modes, ""), TimeLimit: 20 * time.Second, KillGrace: 300 * time.Millisecond})
	ctx := context.Background()
	ids := map[string]int64{}
	for i, mode := range order {
		run, err := r.Submit(ctx, cpuRequest(int64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids[mode] = run.ID
	}
	seen := map[runner.Status]bool{}
	for _, mode := range order {
		w := cases[mode]
		got := waitDone(t, r, ids[mode], 30*time.Second)
		name := mode
		if i := strings.LastIndexByte(mode, '/'); i >= 0 {
			name = mode[i+1:]
		}
		seen[got.Status] = true
		if got.Status != w.status {
			t.Errorf("%s: status %s (%q), want %s; stderr %s", name, got.Status, got.Reason, w.status, got.Stderr)
			continue
		}
		for _, s := range w.reason {
			if !strings.Contains(got.Reason, s) {
				t.Errorf("%s: reason %q does not contain %q", name, got.Reason, s)
			}
		}
		if w.status == runner.StatusSucceeded && got.Reason != "" {
			t.Errorf("%s: a succeeded run has a reason %q", name, got.Reason)
		}
		if w.measured != (got.HasResult && len(got.Result) > 0 && len(got.Shapes) == 9) {
			t.Errorf("%s: result kept %v (has %v, %d shapes), want %v", name, got.HasResult, got.HasResult, len(got.Shapes), w.measured)
		}
		if w.measured && got.DeviceName == "" {
			t.Errorf("%s: no device name from the fingerprint", name)
		}
		if got.Counts() != (w.status == runner.StatusSucceeded) {
			t.Errorf("%s: counts %v", name, got.Counts())
		}
	}
	// The last two statuses: a cancelled run, and (listed) queued/running.
	run, err := r.Submit(ctx, cpuRequest(100))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		g, _ := r.Get(ctx, run.ID)
		if g.Status == runner.StatusRunning {
			seen[g.Status] = true
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow run never ran: %s", g.Status)
		}
	}
	if err := r.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	seen[waitDone(t, r, run.ID, 10*time.Second).Status] = true
	seen[runner.StatusQueued] = true // every run above started queued (Submit)
	for _, s := range runner.Statuses {
		if !seen[s] {
			t.Errorf("no run ended (or was seen) %s", s)
		}
	}
}

// Classify without a child: the rules of the table in docs/bench-result.md.
func TestClassify(t *testing.T) {
	shapes := []runner.Shape{{Index: 0, Label: "a", Correct: true}, {Index: 1, Label: "b", Correct: false}}
	for _, tc := range []struct {
		name   string
		code   int
		res    runner.Result
		status runner.Status
		reason string
	}{
		{"ok", 0, runner.Result{Correct: true, Status: "ok"}, runner.StatusSucceeded, ""},
		{"exit 1 with failures", 1, runner.Result{Status: "incorrect", Shapes: shapes,
			Failures: []runner.Failure{{Shape: 1, Role: "variant", Check: "inputs_modified", Detail: "input hash changed"}}},
			runner.StatusIncorrect, "incorrect: shape 1 (b): variant check inputs_modified: input hash changed"},
		{"exit 1 without failures (v1)", 1, runner.Result{Status: "incorrect", Shapes: shapes}, runner.StatusIncorrect, "incorrect: shape 1 (b): variant check correct"},
		{"exit 4, incorrect shape too", 4, runner.Result{Status: "incorrect", Shapes: shapes}, runner.StatusIncorrect, "incorrect: shape 1"},
		{"exit 4 without reasons", 4, runner.Result{Correct: true, Status: "suspect"}, runner.StatusSuspect, "without naming why"},
		{"status error", 0, runner.Result{Correct: true, Status: "error"}, runner.StatusFailed, "status error"},
		{"exit 0, suspect reasons", 0, runner.Result{Correct: true, Status: "ok", Suspect: []string{"x"}}, runner.StatusFailed, "suspect"},
		{"exit 7 with a document", 7, runner.Result{Correct: true}, runner.StatusFailed, "unexpected exit code 7"},
	} {
		st, reason := runner.Classify(tc.code, &tc.res)
		if st != tc.status || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, st, reason, tc.status, tc.reason)
		}
	}
	many := runner.Result{Status: "suspect", Correct: true, Suspect: []string{"1", "2", "3", "4", "5", "6"}}
	if _, reason := runner.Classify(4, &many); !strings.Contains(reason, "and 2 more") {
		t.Errorf("long suspect list: %q", reason)
	}
}

func run(id int64, problem, suite, baseline, device string, imported bool, status runner.Status, speedup float64) runner.Run {
	return runner.Run{ID: id, Problem: problem, Suite: suite, Variant: "v", Baseline: baseline, Device: device, DeviceName: device,
		Imported: imported, Status: status, HasResult: status.Measured(), Speedup: runner.Interval{Value: speedup, Lo: speedup * 0.98, Hi: speedup * 1.02}}
}

// The result rule: only runs of the round's measurement that succeeded (or
// are suspect and accepted) count; several pool; nothing re-rolls.
func TestResultOf(t *testing.T) {
	const g, d = "nvfp4_group_gemm", "nvfp4_dual_gemm"
	h100 := "NVIDIA H100 80GB HBM3"
	m := runner.Measurement{Problem: g, Suite: "benchmarks", Baseline: "baseline", DeviceClass: "h100", AllowImports: false}
	accepted := run(9, g, "benchmarks", "baseline", h100, false, runner.StatusSuspect, 3)
	accepted.AcceptedAt, accepted.AcceptReason = time.Now(), "checked"
	runs := []runner.Run{ // newest first
		run(10, d, "benchmarks", "baseline", h100, false, runner.StatusSucceeded, 9),                   // another problem
		run(8, g, "tests", "baseline", h100, false, runner.StatusSucceeded, 9),                         // another suite
		run(7, g, "benchmarks", "baseline", "NVIDIA B200", false, runner.StatusSucceeded, 9),           // another device
		run(6, g, "benchmarks", "baseline?stages=2", h100, false, runner.StatusSucceeded, 9),           // another baseline
		run(5, g, "benchmarks", "baseline", "H100 (lab)", true, runner.StatusSucceeded, 9),             // an import, not allowed
		run(4, g, "benchmarks", "baseline", h100, false, runner.StatusSuspect, 9),                      // suspect, not accepted
		run(3, g, "benchmarks", "baseline", h100, false, runner.StatusIncorrect, 9),                    // incorrect
		run(2, g, "benchmarks", "", h100, false, runner.StatusSucceeded, 1.1),                          // counts ("" is bench's default baseline)
		run(1, g, "benchmarks", "baseline", strings.ToLower(h100), false, runner.StatusSucceeded, 1.2), // counts
	}
	pr := runner.ResultOf(m, runs)
	if pr.N != 2 || pr.Counted[0].ID != 2 || pr.Counted[1].ID != 1 || pr.Imported {
		t.Fatalf("counted %+v", pr.Counted)
	}
	want := math.Sqrt(1.1 * 1.2)
	if math.Abs(pr.Speedup.Value-want) > 1e-12 || !(pr.Speedup.Lo < want && want < pr.Speedup.Hi) || pr.Min != 1.1 || pr.Max != 1.2 {
		t.Fatalf("pooled %+v min %v max %v; want geomean %v", pr.Speedup, pr.Min, pr.Max, want)
	}
	// t(1) = 12.706: two runs give a wide interval, as they should.
	half := 12.7062 * math.Abs(math.Log(1.2)-math.Log(1.1)) / math.Sqrt2 / math.Sqrt(2)
	if math.Abs(pr.Speedup.Hi-want*math.Exp(half)) > 1e-3 {
		t.Fatalf("interval %+v, want hi %v", pr.Speedup, want*math.Exp(half))
	}
	fields := map[int64]string{}
	for _, x := range pr.Other {
		fields[x.Run.ID] = x.Field
		if !strings.HasPrefix(x.Why, "not this round's measurement: ") {
			t.Errorf("run %d: %q", x.Run.ID, x.Why)
		}
	}
	for id, f := range map[int64]string{10: "problem", 8: "suite", 7: "device", 6: "baseline", 5: "imported"} {
		if fields[id] != f {
			t.Errorf("run %d: mismatch %q, want %q", id, fields[id], f)
		}
	}
	if len(pr.NotCounted) != 2 || pr.NotCounted[0].Run.ID != 4 || !strings.Contains(pr.NotCounted[0].Why, "not accepted") || pr.NotCounted[1].Run.ID != 3 {
		t.Fatalf("not counted %+v", pr.NotCounted)
	}
	// An accepted suspect run counts; the pool grows, nothing is replaced.
	pr = runner.ResultOf(m, append([]runner.Run{accepted}, runs...))
	if pr.N != 3 || math.Abs(pr.Speedup.Value-math.Cbrt(3*1.1*1.2)) > 1e-12 {
		t.Fatalf("with the accepted run: n %d, %v", pr.N, pr.Speedup)
	}
	// Imports allowed: the lab import counts too.
	m.AllowImports = true
	if pr = runner.ResultOf(m, runs); pr.N != 3 || !pr.Imported {
		t.Fatalf("imports allowed: n %d imported %v", pr.N, pr.Imported)
	}
	// One run: its own interval.
	one := runner.ResultOf(m, runs[len(runs)-1:])
	if one.N != 1 || one.Speedup != runs[len(runs)-1].Speedup {
		t.Fatalf("one run: %+v", one.Speedup)
	}
	// The pitch's variant: a run of another variant does not count, measured
	// here (a knob tweak) or imported (another pitch's result copied over).
	m.Variant, m.ForPitch = "v", true
	tweak := run(11, g, "benchmarks", "baseline", h100, false, runner.StatusSucceeded, 5)
	tweak.Variant = "v?stages=3"
	copied := run(12, g, "benchmarks", "baseline", h100, true, runner.StatusSucceeded, 5.8)
	copied.Variant = "wgmma?tile_n=192"
	pr = runner.ResultOf(m, append([]runner.Run{copied, tweak}, runs...))
	if pr.N != 3 || pr.Other[0].Run.ID != 12 || pr.Other[0].Field != "variant" || pr.Other[1].Run.ID != 11 || pr.Other[1].Field != "variant" {
		t.Fatalf("another variant: n %d, other %+v", pr.N, pr.Other[:2])
	}
	// A pitch that names no variant: a run measured here could be of any
	// variant, so none counts; imports (free labels) do.
	m.Variant = ""
	pr = runner.ResultOf(m, append([]runner.Run{copied, tweak}, runs...))
	if pr.N != 2 || !pr.Imported || pr.Counted[0].ID != 12 || pr.Counted[1].ID != 5 {
		t.Fatalf("a pitch with no variant: n %d, counted %+v", pr.N, pr.Counted)
	}
	for _, x := range pr.Other {
		if !x.Run.Imported && x.Run.Problem == g && x.Run.Suite == "benchmarks" && x.Run.Device == h100 && x.Run.Baseline == "baseline" && x.Field != "variant" {
			t.Errorf("a pitch with no variant: run %d left out for %q, want variant", x.Run.ID, x.Field)
		}
	}
	m.ForPitch = false
	// No declared measurement: nothing counts.
	if pr := runner.ResultOf(runner.Measurement{}, runs); pr.Has() || len(pr.Other) != len(runs) {
		t.Fatalf("undeclared: %+v", pr)
	}
	// Deal terms read the pooled speedup; the other counted runs are repeats.
	pr = runner.ResultOf(m, runs)
	tr, repeats := pr.TermsRun(&pr.Counted[0])
	if tr.Speedup != pr.Speedup || len(repeats) != 2 {
		t.Fatalf("terms run %+v, %d repeats", tr.Speedup, len(repeats))
	}
}

// The same check failing on every input set of a shape is one item of the
// reason, with how often it failed; other shapes and checks keep theirs.
func TestIncorrectReasonGroupsRepeats(t *testing.T) {
	res := &runner.Result{Failures: []runner.Failure{
		{Shape: 2, Role: "variant", Check: "fresh", Detail: "1533 of 6272 elements wrong"},
		{Shape: 2, Role: "variant", Check: "fresh", Detail: "1535 of 6272 elements wrong"},
		{Shape: 2, Role: "variant", Check: "fresh", Detail: "1530 of 6272 elements wrong"},
		{Shape: 3, Role: "variant", Check: "timed_sample", Detail: "sample 4 (input set 0): 12 of 64 elements wrong"},
	}}
	got := runner.IncorrectReason(res)
	want := "incorrect: shape 2: variant check fresh (failed 3 times): 1533 of 6272 elements wrong; shape 3: variant check timed_sample: sample 4 (input set 0): 12 of 64 elements wrong"
	if got != want {
		t.Fatalf("reason\n%q\nwant\n%q", got, want)
	}
}
