package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/stats"
)

type cliRun struct {
	code   int
	stdout string
	stderr string
	lines  []map[string]any
}

func runCLI(t *testing.T, args ...string) cliRun {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb, Options{})
	r := cliRun{code: code, stdout: out.String(), stderr: errb.String()}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		if m["type"] == nil {
			t.Fatalf("stdout line without a type: %q", sc.Text())
		}
		r.lines = append(r.lines, m)
	}
	return r
}

func TestCLICPUSuiteTestsBothProblems(t *testing.T) {
	for _, prob := range []string{"nvfp4_group_gemm", "nvfp4_dual_gemm"} {
		t.Run(prob, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "result.json")
			r := runCLI(t, "--problem", prob, "--device", "cpu", "--suite", "tests", "--json", path)
			if r.code != result.ExitOK {
				t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
			}
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read result: %v", err)
			}
			if err := result.Validate(doc); err != nil {
				t.Fatalf("result does not validate: %v", err)
			}
			var res result.Result
			if err := json.Unmarshal(doc, &res); err != nil {
				t.Fatal(err)
			}
			if res.Mode != "cpu" || res.Status != result.StatusOK || !res.Summary.AllCorrect || res.Summary.Timed != len(res.Shapes) {
				t.Fatalf("mode %s status %s all_correct %v timed %d/%d", res.Mode, res.Status, res.Summary.AllCorrect, res.Summary.Timed, len(res.Shapes))
			}
			for _, s := range res.Shapes {
				// The CPU stop rule caps a shape at 0.25 s: a slow shape may stop
				// there with fewer than 10 samples, and must say so.
				capped := s.Variant.StopReason == stats.StopMaxTime
				if (len(s.Variant.SamplesNs) < 10 && !capped) || len(s.Variant.SamplesNs) < 2 || s.Variant.StopReason == "" || s.Variant.WarmupLaunches < 1 {
					t.Fatalf("shape %d: %d samples, stop %q, warm-up %d", s.Index, len(s.Variant.SamplesNs), s.Variant.StopReason, s.Variant.WarmupLaunches)
				}
			}
			last := r.lines[len(r.lines)-1]
			if last["type"] != "result" || last["path"] != path || last["status"] != result.StatusOK {
				t.Fatalf("final line %v", last)
			}
			var phases = map[string]bool{}
			for _, l := range r.lines {
				if l["type"] == "progress" {
					phases[l["phase"].(string)] = true
				}
			}
			for _, ph := range []string{PhaseCompile, PhaseCorrectness, PhaseWarmup, PhaseDone} {
				if !phases[ph] {
					t.Fatalf("no progress line for phase %s (saw %v)", ph, phases)
				}
			}
		})
	}
}

func TestCLIDocumentInFinalLineWithoutJSONFlag(t *testing.T) {
	dir := t.TempDir()
	shapes := filepath.Join(dir, "s.json")
	os.WriteFile(shapes, []byte(`[{"m":[1],"n":64,"k":128},{"m":[3,5],"n":64,"k":256}]`), 0o644)
	r := runCLI(t, "--problem", "nvfp4_group_gemm", "--device", "cpu", "--shapes", shapes, "--aa")
	if r.code != result.ExitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	last := strings.TrimSpace(r.stdout[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:])
	var line struct {
		Type     string          `json:"type"`
		Path     *string         `json:"path"`
		Document json.RawMessage `json:"document"`
	}
	if err := json.Unmarshal([]byte(last), &line); err != nil || line.Type != "result" || line.Path != nil {
		t.Fatalf("final line %q (%v)", last, err)
	}
	if err := result.Validate(line.Document); err != nil {
		t.Fatalf("document in the final line does not validate: %v", err)
	}
	var res result.Result
	json.Unmarshal(line.Document, &res)
	docPath := filepath.Join(dir, "r.json")
	os.WriteFile(docPath, line.Document, 0o644)
	var md, errb bytes.Buffer
	if code := Main([]string{"--report", docPath}, &md, &errb, Options{}); code != 0 || !strings.Contains(md.String(), "| 1 | 2x(M 3,5; N 64; K 256) | true |") {
		t.Fatalf("--report exit %d:\n%s%s", code, md.String(), errb.String())
	}
	if res.Suite != "file" || len(res.Shapes) != 2 || res.Baseline == nil || !res.AA || res.Summary.GeomeanSpeedup == nil {
		t.Fatalf("suite %s, %d shapes, baseline %v, aa %v", res.Suite, len(res.Shapes), res.Baseline, res.AA)
	}
	if len(res.Shapes[0].Pairing.Order) < DefaultMinRounds {
		t.Fatalf("CPU A/A paired %d rounds", len(res.Shapes[0].Pairing.Order))
	}
}

func TestCLIExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	n100 := write("n100.json", `[{"m":[8],"n":100,"k":256}]`)
	k96 := write("k96.json", `[{"m":[8],"n":64,"k":96}]`)
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown variant", []string{"--problem", "nvfp4_group_gemm", "--variant", "warpspeed"}, result.ExitUsage, "unknown variant"},
		{"unknown knob", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline?turbo=1"}, result.ExitUsage, "turbo"},
		{"knob value", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline?stages=9"}, result.ExitUsage, "stages"},
		{"unknown problem", []string{"--problem", "fp8_gemm", "--variant", "baseline"}, result.ExitUsage, "unknown problem"},
		{"no problem", []string{"--variant", "baseline"}, result.ExitUsage, "--problem is required"},
		{"N=100", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--shapes", n100}, result.ExitUsage, "N must be a multiple of 64"},
		{"K=96", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--shapes", k96}, result.ExitUsage, "K must be a multiple of 128"},
		{"N=100 cpu", []string{"--problem", "nvfp4_dual_gemm", "--device", "cpu", "--shapes", n100}, result.ExitUsage, "N must be a multiple of 64"},
		{"bad suite", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--suite", "all"}, result.ExitUsage, "--suite"},
		{"bad device", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "gpu0"}, result.ExitUsage, "--device"},
		{"cpu runs only the reference", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "cpu"}, result.ExitUsage, "CPU reference"},
		{"aa with other variant", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline?stages=2", "--aa"}, result.ExitUsage, "--aa"},
		{"missing shapes file", []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--shapes", filepath.Join(dir, "nope.json")}, result.ExitUsage, "nope.json"},
		{"stray argument", []string{"--problem", "nvfp4_group_gemm", "baseline"}, result.ExitUsage, "unexpected arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, c.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.stderr) {
				t.Fatalf("stderr %q does not say %q", r.stderr, c.stderr)
			}
		})
	}
}

func TestCLIDeviceZeroWithoutGPU(t *testing.T) {
	if _, err := gpu.DeviceCount(); err == nil {
		t.Skip("a CUDA driver is present here: this test is about machines without one")
	}
	r := runCLI(t, "--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "0", "--suite", "tests")
	if r.code != result.ExitCouldNotRun {
		t.Fatalf("exit %d, want %d\nstderr: %s", r.code, result.ExitCouldNotRun, r.stderr)
	}
	if !strings.Contains(r.stderr, "libcuda") {
		t.Fatalf("stderr does not name libcuda: %s", r.stderr)
	}
	last := r.lines[len(r.lines)-1]
	if last["type"] != "error" || last["exit_code"].(float64) != result.ExitCouldNotRun {
		t.Fatalf("final line %v", last)
	}
}

func TestCLIDumpShapes(t *testing.T) {
	r := runCLI(t, "--problem", "nvfp4_dual_gemm", "--suite", "benchmarks", "--dump-shapes")
	if r.code != 0 || len(r.lines) != 1 {
		t.Fatalf("exit %d, %d lines", r.code, len(r.lines))
	}
	if ss := r.lines[0]["shapes"].([]any); len(ss) != 4 {
		t.Fatalf("%d shapes", len(ss))
	}
}

// --ungated times without the gate (for ncu, which waits inside a launch
// that a held stream never starts): the document says so in its timer,
// and the default on the same device is gated. A device test.
func TestCLIUngated(t *testing.T) {
	if _, err := gpu.DeviceCount(); err != nil {
		t.Skipf("no CUDA driver here (%v): the gate exists only on a GPU", err)
	}
	timer := func(extra ...string) string {
		path := filepath.Join(t.TempDir(), "result.json")
		args := append([]string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "0",
			"--shapes", writeShapes(t, `[{"m":[64],"n":128,"k":256}]`), "--max-time", "60s", "--json", path}, extra...)
		r := runCLI(t, args...)
		if r.code != result.ExitOK {
			t.Fatalf("%v: exit %d\nstderr:\n%s", extra, r.code, r.stderr)
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var res result.Result
		if err := json.Unmarshal(doc, &res); err != nil {
			t.Fatal(err)
		}
		return res.Protocol.Timer
	}
	if got := timer("--ungated"); got != "cuda_events" {
		t.Errorf("--ungated: timer %q, want cuda_events", got)
	}
	if got := timer(); got != "cuda_events_gated" {
		t.Errorf("default: timer %q, want cuda_events_gated (this driver holds streams)", got)
	}
}

func writeShapes(t *testing.T, js string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shapes.json")
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// configFor runs Main's steps up to configure on args: the Config a run
// would get, without opening a device (so it works for GPU mode here).
func configFor(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	var errb bytes.Buffer
	f, err := parseFlags(args, &errb)
	if err != nil {
		return Config{}, err
	}
	sub, err := loadSubmission(f)
	if err != nil {
		return Config{}, err
	}
	p, cpu, _, err := selectDevice(f)
	if err != nil {
		return Config{}, err
	}
	shapes, suite, err := selectShapes(f, p, cpu)
	if err != nil {
		return Config{}, err
	}
	return configure(f, args, p, sub, cpu, shapes, suite)
}

// --max-samples N replaces the cap of whichever stop rule the mode uses and
// leaves the rest of it alone; without it the rule is the mode's default.
func TestCLIMaxSamplesSetsTheStopRule(t *testing.T) {
	gpuArgs := []string{"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "0"}
	cpuArgs := []string{"--problem", "nvfp4_dual_gemm", "--device", "cpu", "--aa"}
	for _, c := range []struct {
		name  string
		args  []string
		mode  string
		rule  stats.StopRule
		extra []string
		want  int
	}{
		{"gpu default", gpuArgs, "gpu", stats.DefaultStopRule, nil, 2000},
		{"gpu 50", gpuArgs, "gpu", stats.DefaultStopRule, []string{"--max-samples", "50"}, 50},
		{"gpu at the minimum", gpuArgs, "gpu", stats.DefaultStopRule, []string{"--max-samples=10"}, 10},
		{"gpu 0 is the default", gpuArgs, "gpu", stats.DefaultStopRule, []string{"--max-samples", "0"}, 2000},
		{"gpu above the default", gpuArgs, "gpu", stats.DefaultStopRule, []string{"--max-samples", "5000"}, 5000},
		{"cpu default", cpuArgs, "cpu", cpuStopRule, nil, 2000},
		{"cpu 10", cpuArgs, "cpu", cpuStopRule, []string{"--max-samples", "10"}, 10},
		{"cpu 123", cpuArgs, "cpu", cpuStopRule, []string{"--max-samples", "123"}, 123},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := configFor(t, append(append([]string{}, c.args...), c.extra...)...)
			if err != nil {
				t.Fatalf("configure: %v", err)
			}
			want := c.rule
			want.MaxSamples = c.want
			if cfg.Mode != c.mode || cfg.Stop != want {
				t.Fatalf("mode %s, stop rule %+v; want mode %s, %+v", cfg.Mode, cfg.Stop, c.mode, want)
			}
			if err := cfg.Stop.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The defaults themselves are what the flag's help and the document's
	// readers assume.
	if stats.DefaultStopRule.MaxSamples != 2000 || cpuStopRule.MaxSamples != 2000 {
		t.Fatalf("default caps %d (GPU) and %d (CPU), want 2000", stats.DefaultStopRule.MaxSamples, cpuStopRule.MaxSamples)
	}
}

// A negative --max-samples, or one below the stop rule's minimum samples,
// is a usage error naming the flag, before anything runs: no progress, no
// document, and on a GPU no device opened (exit 2, not 3, here without one).
func TestCLIMaxSamplesRefused(t *testing.T) {
	for _, c := range []struct {
		value, want string
	}{
		{"-1", "--max-samples -1: want 0 (the stop rule's default, 2000) or at least 10"},
		{"5", "--max-samples 5: must be at least 10, the stop rule's minimum samples"},
		{"9", "--max-samples 9: must be at least 10, the stop rule's minimum samples"},
	} {
		for mode, dev := range map[string][]string{
			"cpu": {"--problem", "nvfp4_group_gemm", "--device", "cpu"},
			"gpu": {"--problem", "nvfp4_group_gemm", "--variant", "baseline", "--device", "0"},
		} {
			t.Run(mode+" "+c.value, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "result.json")
				r := runCLI(t, append(append([]string{}, dev...), "--max-samples", c.value, "--json", path)...)
				if r.code != result.ExitUsage {
					t.Fatalf("exit %d, want %d\nstderr: %s", r.code, result.ExitUsage, r.stderr)
				}
				if !strings.Contains(r.stderr, c.want) {
					t.Fatalf("stderr %q does not say %q", r.stderr, c.want)
				}
				if len(r.lines) != 1 || r.lines[0]["type"] != "error" || r.lines[0]["phase"] != "usage" || !strings.Contains(r.lines[0]["message"].(string), c.want) {
					t.Fatalf("stdout lines %v: want one usage error naming the flag", r.lines)
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Fatalf("a document was written (%v)", err)
				}
			})
		}
	}
}

// A CPU-mode A/A run with --max-samples 10 records the cap in the document
// and takes at most 10 samples per role on every shape: exactly 10 on
// shapes that take microseconds (without the cap a paired run takes at
// least MinRounds = 30), stopped at the cap whether or not they converged.
func TestCLIMaxSamplesCPURun(t *testing.T) {
	shapes := writeShapes(t, `[{"m":[1],"n":64,"k":128},{"m":[3,5],"n":64,"k":256}]`)
	path := filepath.Join(t.TempDir(), "result.json")
	r := runCLI(t, "--problem", "nvfp4_group_gemm", "--device", "cpu", "--aa", "--shapes", shapes, "--max-samples", "10", "--json", path)
	if r.code != result.ExitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := result.Validate(doc); err != nil {
		t.Fatalf("result does not validate: %v", err)
	}
	var res result.Result
	if err := json.Unmarshal(doc, &res); err != nil {
		t.Fatal(err)
	}
	if sr := res.Protocol.StopRule; sr.MaxSamples != 10 || sr.MinSamples != cpuStopRule.MinSamples || sr.MaxSeconds != cpuStopRule.MaxTime.Seconds() {
		t.Fatalf("protocol.stop_rule %+v: want the CPU rule with max_samples 10", sr)
	}
	if len(res.Shapes) != 2 {
		t.Fatalf("%d shapes", len(res.Shapes))
	}
	for _, s := range res.Shapes {
		if s.Variant == nil || s.Baseline == nil || s.Pairing == nil || s.Guard == nil {
			t.Fatalf("shape %d not timed and paired: %s", s.Index, s.Skipped)
		}
		for _, m := range []*result.Measurement{s.Variant, s.Baseline} {
			n := len(m.SamplesNs)
			capped := m.StopReason == stats.StopMaxSamples || m.StopReason == stats.StopConverged
			if n != 10 || !capped || m.Stats.N != n {
				t.Fatalf("shape %d %s: %d samples (stats n %d), stop %q; want 10, at the cap", s.Index, m.Role, n, m.Stats.N, m.StopReason)
			}
		}
		if s.Pairing.Rounds != 10 || len(s.Pairing.Order) != 10 {
			t.Fatalf("shape %d: %d rounds, want 10", s.Index, s.Pairing.Rounds)
		}
		// The guard's move and a pass over every set after it cannot fit in
		// 10 rounds (it comes after round 2*seeds = 8): none is made.
		if s.Guard.MoveRound != -1 {
			t.Fatalf("shape %d: guard move at round %d inside a 10-sample cap", s.Index, s.Guard.MoveRound)
		}
	}
}
