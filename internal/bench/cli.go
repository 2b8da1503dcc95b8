package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/stats"
	"github.com/pitchtank/pitchtank/kernels"
)

// Options are what Main needs from its process; tests replace them.
type Options struct {
	// Exit ends the process when the run outlives --max-time by the grace
	// period (a kernel that hangs inside a synchronize cannot be cancelled).
	// nil: no watchdog.
	Exit func(code int)
}

// watchdogGrace is how long past --max-time a stuck run is given before the
// watchdog ends the process.
const watchdogGrace = 30 * time.Second

// cpuStopRule keeps the CPU mode's timing short: the same convergence
// criterion (rel. SEM <= 0.25%), but a tenth of the GPU's minimum time and
// a hard cap of 0.25 s per shape, so `--suite tests` ends in a few seconds
// (the CPU reference's speed is never a result anyone reads; the cap keeps
// the tests that run it through the server fast).
var cpuStopRule = stats.StopRule{MinSamples: 10, MinTime: 50 * time.Millisecond, MaxRelSEM: 0.0025, MaxTime: 250 * time.Millisecond, MaxSamples: 2000}

// Main is `web bench`: it parses args, runs the protocol and returns the
// exit code. stdout gets JSON lines only; people read stderr.
//
// The phases, in order: read the command line (parseFlags), answer --report
// (printReport), load a submitted kernel (loadSubmission), pick the problem
// and device (selectDevice), the shapes (selectShapes; --dump-shapes ends
// here), the variants and protocol options (configure), then start the
// watchdog, open the device (openBackend), run, and hand the document over
// (deliver). Every refusal before the device opens is a usage error (exit 2).
func Main(args []string, stdout, stderr io.Writer, opt Options) int {
	em := NewEmitter(stdout)
	usage := func(err error) int {
		msg := err.Error()
		fmt.Fprintln(stderr, "web bench: "+msg)
		em.Line(ErrorLine{Type: "error", Phase: "usage", Message: msg, ExitCode: result.ExitUsage})
		return result.ExitUsage
	}
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return result.ExitUsage
	}
	if err != nil {
		return usage(err)
	}
	if f.report != "" {
		if err := printReport(f.report, stdout); err != nil {
			return usage(err)
		}
		return result.ExitOK
	}
	sub, err := loadSubmission(f)
	if err != nil {
		return usage(err)
	}
	p, cpu, ordinal, err := selectDevice(f)
	if err != nil {
		return usage(err)
	}
	shapes, suiteName, err := selectShapes(f, p, cpu)
	if err != nil {
		return usage(err)
	}
	if f.dumpShapes {
		em.Line(map[string]any{"type": "shapes", "problem": p.Name, "suite": suiteName, "shapes": shapes})
		return result.ExitOK
	}
	cfg, err := configure(f, args, p, sub, cpu, shapes, suiteName)
	if err != nil {
		return usage(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), f.maxTime)
	defer cancel()
	defer startWatchdog(opt, f.maxTime, em, stderr)()

	b, err := openBackend(p, cpu, ordinal, f.cacheDir, f.ungated)
	if err != nil {
		fmt.Fprintln(stderr, "web bench: "+err.Error())
		em.Line(ErrorLine{Type: "error", Phase: "device", Message: err.Error(), ExitCode: result.ExitCouldNotRun})
		return result.ExitCouldNotRun
	}
	defer b.Close()
	fmt.Fprintf(stderr, "web bench: %s on %s, %d shapes (%s), variant %q", p.Name, b.Device().Name, len(shapes), suiteName, cfg.VariantSpec)
	if cfg.Baseline != nil {
		fmt.Fprintf(stderr, " paired with %q", cfg.BaselineSpec)
	}
	fmt.Fprintln(stderr)

	r, code := Run(ctx, cfg, b, em)
	return deliver(r, code, f.jsonPath, em, stderr)
}

// cliFlags are web bench's command line.
type cliFlags struct {
	problem, variant, baseline, suite, shapesFile, device string
	seed                                                  uint64
	aa                                                    bool
	jsonPath, cacheDir                                    string
	maxTime                                               time.Duration
	seeds                                                 int
	dumpShapes                                            bool
	report                                                string
	guardSeed                                             uint64
	checkRate                                             int
	maxSamples                                            int
	unguarded                                             bool
	ungated                                               bool
	kernelDir                                             string
}

// parseFlags reads args; flag.ErrHelp for -h (the usage is printed).
func parseFlags(args []string, stderr io.Writer) (*cliFlags, error) {
	f := &cliFlags{}
	fs := flag.NewFlagSet("web bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.problem, "problem", "", "problem name: nvfp4_group_gemm or nvfp4_dual_gemm (required)")
	fs.StringVar(&f.variant, "variant", "", "variant spec, e.g. baseline or \"baseline?stages=3\" (required on a GPU; the CPU runs only \"reference\")")
	fs.StringVar(&f.baseline, "baseline", "", "variant the run is paired with (GPU default: baseline)")
	fs.StringVar(&f.suite, "suite", "", "tests or benchmarks (default: benchmarks on a GPU, tests on the CPU)")
	fs.StringVar(&f.shapesFile, "shapes", "", "JSON file with an array of shapes {\"m\":[...],\"n\":N,\"k\":K}, instead of --suite")
	fs.StringVar(&f.device, "device", "0", "GPU ordinal, or cpu")
	fs.Uint64Var(&f.seed, "seed", 1, "base seed of the generated inputs")
	fs.BoolVar(&f.aa, "aa", false, "A/A test: run the baseline against itself")
	fs.StringVar(&f.jsonPath, "json", "", "write the result document to FILE (default: in stdout's final line)")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "cubin cache directory (\"\" = no cache)")
	fs.DurationVar(&f.maxTime, "max-time", DefaultMaxTime, "wall-clock cap for the whole run")
	fs.IntVar(&f.seeds, "seeds", 4, "fresh input sets per shape: each checked, all rotated while timing (rule 4: at least 4)")
	fs.BoolVar(&f.dumpShapes, "dump-shapes", false, "print the selected shapes as JSON and exit (for bench/peer/peer.py)")
	fs.StringVar(&f.report, "report", "", "validate a result document FILE and print it as Markdown tables (no run)")
	fs.Uint64Var(&f.guardSeed, "guard-seed", 0, "seed of the timing guard's checked samples, poison and content changes (default: drawn from the OS per run, recorded in the result; give the recorded one to replay a run)")
	fs.IntVar(&f.checkRate, "check-rate", DefaultCheckRate, "check a timed sample's output with probability 1/N (1 = every sample)")
	// --max-samples exists for slow kernels: a paired run of one can need
	// longer than a caller's --max-time allows for the stop rule's 2000
	// samples per role; a smaller cap lets it finish and write its document
	// instead of being stopped (the dev scripts compare two builds' A/A runs
	// this way). The cap is recorded in protocol.stop_rule.max_samples.
	fs.IntVar(&f.maxSamples, "max-samples", 0, "cap on the timed samples per role and shape (0 = the stop rule's default, 2000; at least 10, the rule's minimum samples): a slow kernel's paired run can need longer than --max-time allows for 2000 samples, and a smaller cap lets it finish and write its document instead of being stopped")
	fs.BoolVar(&f.unguarded, "unguarded", false, "turn the timing guard off, to measure what it costs (the result is then always suspect)")
	fs.BoolVar(&f.ungated, "ungated", false, "time without holding the timing stream until a sample is enqueued, for a profiler that serializes launches (ncu waits inside the launch, so a held stream never starts); the document's timer then says cuda_events")
	fs.StringVar(&f.kernelDir, "kernel", "", "a submitted kernel's folder (manifest.json and its files, docs/kernel-contract.md): --variant \"kernel\" or \"kernel?KNOB=V\" names it (default --problem: the manifest's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: web bench --problem NAME --variant NAME [--kernel DIR] [--baseline NAME] [--suite tests|benchmarks] [--shapes FILE] [--device N|cpu] [--seed N] [--aa] [--json FILE] [--cache-dir DIR] [--max-time DUR]")
		fmt.Fprintln(stderr, "exit codes: 0 ok, 1 a kernel was incorrect on some shape, 2 usage or invalid input, 3 could not run (device, compile, CUDA error, timeout), 4 suspect (correct, but below the speed-of-light floor, over 10x, or --unguarded)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (see web bench -h)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: every option is a --flag (see web bench -h)", fs.Args())
	}
	return f, nil
}

// printReport validates the result document at path and prints it as
// Markdown tables (--report).
func printReport(path string, stdout io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--report: %v", err)
	}
	r, err := result.ParseResult(data)
	if err != nil {
		return fmt.Errorf("--report %s: %v", path, err)
	}
	fmt.Fprint(stdout, result.Markdown(r))
	return nil
}

// loadSubmission reads --kernel, before anything else reads the problem:
// the manifest names the problem when --problem does not (f.problem is set
// from it). Nil without --kernel.
func loadSubmission(f *cliFlags) (*kernels.Submission, error) {
	if f.kernelDir == "" {
		return nil, nil
	}
	if f.device == "cpu" {
		return nil, errors.New("--kernel runs a submitted kernel, which needs a GPU; --device cpu runs only the CPU reference (drop --kernel, or pick a GPU with --device N)")
	}
	sub, err := kernels.LoadSubmission(f.kernelDir)
	if err != nil {
		return nil, fmt.Errorf("--kernel %s: %v", f.kernelDir, err)
	}
	if f.problem == "" {
		f.problem = sub.Manifest.Problem
	} else if f.problem != sub.Manifest.Problem {
		return nil, fmt.Errorf("--kernel %s is a kernel for %s, not --problem %s", f.kernelDir, sub.Manifest.Problem, f.problem)
	}
	return sub, nil
}

// selectDevice resolves --problem and --device: the CPU, or a GPU ordinal.
func selectDevice(f *cliFlags) (p *kernels.Problem, cpu bool, ordinal int, err error) {
	if f.problem == "" {
		return nil, false, 0, fmt.Errorf("--problem is required (known: %s)", problemNames())
	}
	if p, err = kernels.LookupProblem(f.problem); err != nil {
		return nil, false, 0, err
	}
	cpu = f.device == "cpu"
	ordinal = -1
	if !cpu {
		ordinal, err = strconv.Atoi(f.device)
		if err != nil || ordinal < 0 {
			return nil, false, 0, fmt.Errorf("--device %q: want a GPU ordinal (0, 1, ...) or cpu", f.device)
		}
	}
	return p, cpu, ordinal, nil
}

// selectShapes reads --shapes FILE or picks the problem's suite (default:
// benchmarks on a GPU, tests on the CPU), and checks every shape.
func selectShapes(f *cliFlags, p *kernels.Problem, cpu bool) (shapes []kernels.Shape, suiteName string, err error) {
	suiteName = f.suite
	if f.shapesFile != "" {
		if suiteName != "" {
			return nil, "", errors.New("--shapes and --suite exclude each other")
		}
		data, err := os.ReadFile(f.shapesFile)
		if err != nil {
			return nil, "", fmt.Errorf("read --shapes: %v", err)
		}
		shapes, err = p.ParseShapes(data)
		if err != nil {
			return nil, "", fmt.Errorf("--shapes %s: %v", f.shapesFile, err)
		}
		suiteName = "file"
	} else {
		if suiteName == "" {
			suiteName = "benchmarks"
			if cpu {
				suiteName = "tests"
			}
		}
		switch suiteName {
		case "tests":
			shapes = p.Tests
		case "benchmarks":
			shapes = p.Benchmarks
		default:
			return nil, "", fmt.Errorf("--suite %q: want tests or benchmarks", suiteName)
		}
	}
	for i, s := range shapes {
		if err := p.CheckShape(s); err != nil {
			return nil, "", fmt.Errorf("shape %d %v: %v", i, s, err)
		}
	}
	return shapes, suiteName, nil
}

// variantSpecs applies --aa and the device's defaults to --variant and
// --baseline: the CPU pairs only its reference with itself; a GPU run is
// paired with "baseline" unless told otherwise.
func variantSpecs(f *cliFlags, p *kernels.Problem, sub *kernels.Submission, cpu bool) (varSpec, baseSpec string, err error) {
	varSpec, baseSpec = f.variant, f.baseline
	if f.aa {
		if baseSpec == "" {
			baseSpec = "baseline"
			if cpu {
				baseSpec = CPUVariantName
			}
		}
		if varSpec != "" && varSpec != baseSpec {
			return "", "", fmt.Errorf("--aa runs the baseline against itself: drop --variant %q, or set --baseline to it", varSpec)
		}
		varSpec = baseSpec
	}
	if cpu {
		if varSpec == "" {
			varSpec = CPUVariantName
		}
		if varSpec != CPUVariantName {
			return "", "", fmt.Errorf("--device cpu runs only the CPU reference: use --variant %s (or leave it out), or a GPU for %q", CPUVariantName, varSpec)
		}
		if baseSpec != "" && baseSpec != CPUVariantName {
			return "", "", fmt.Errorf("--device cpu can pair only the CPU reference with itself (--aa); %q needs a GPU", baseSpec)
		}
		return varSpec, baseSpec, nil
	}
	if varSpec == "" && sub != nil {
		varSpec = "kernel"
	}
	if varSpec == "" {
		return "", "", fmt.Errorf("--variant is required (known for %s: %s; knobs: \"baseline?stages=3\")", p.Name, variantNames(p))
	}
	if baseSpec == "" {
		baseSpec = "baseline"
	}
	return varSpec, baseSpec, nil
}

// configure resolves the variants and sets the protocol's options from the
// command line and the device.
func configure(f *cliFlags, args []string, p *kernels.Problem, sub *kernels.Submission, cpu bool, shapes []kernels.Shape, suiteName string) (Config, error) {
	varSpec, baseSpec, err := variantSpecs(f, p, sub, cpu)
	if err != nil {
		return Config{}, err
	}
	resolve := func(spec string) (kernels.Variant, error) {
		if sub != nil && kernels.IsSubmissionSpec(spec) {
			return p.ResolveSubmission(sub, spec)
		}
		return p.ResolveVariant(spec)
	}
	v, err := resolve(varSpec)
	if err != nil {
		return Config{}, fmt.Errorf("--variant: %v", err)
	}
	cfg := Config{
		Problem: p, Suite: suiteName, ShapesFile: f.shapesFile, Shapes: shapes,
		Variant: v, VariantSpec: varSpec, AA: f.aa, Seed: f.seed,
		Command:   append([]string{"web", "bench"}, args...),
		MinRounds: DefaultMinRounds, Bootstrap: DefaultBootstrap, MinEffect: DefaultMinEffect, MaxTime: f.maxTime,
		Stop: stats.DefaultStopRule, WarmupMinLaunches: 10, WarmupMin: 100 * time.Millisecond,
	}
	if baseSpec != "" {
		bv, err := resolve(baseSpec)
		if err != nil {
			return Config{}, fmt.Errorf("--baseline: %v", err)
		}
		cfg.Baseline, cfg.BaselineSpec = &bv, baseSpec
	}
	if !cpu && (v.Reference || cfg.Baseline.Reference) {
		// The GPU reference writes float64, not fp16: it checks the other
		// variants (and is itself checked against the CPU reference on
		// --suite tests), it is not a timed variant.
		return Config{}, errors.New("the GPU reference is not a timed variant: it checks the others (and is checked against the CPU reference on --suite tests); bench \"baseline\" or a knob variant instead")
	}
	cfg.GuardSeed, cfg.CheckRate, cfg.Unguarded = f.guardSeed, f.checkRate, f.unguarded
	if cfg.GuardSeed == 0 {
		cfg.GuardSeed = NewGuardSeed()
	}
	if cfg.CheckRate < 1 || cfg.CheckRate > 1000 {
		return Config{}, fmt.Errorf("--check-rate %d: want 1..1000", cfg.CheckRate)
	}
	cfg.SeedsPerShape = f.seeds
	if cfg.SeedsPerShape < 1 || cfg.SeedsPerShape > 16 {
		return Config{}, fmt.Errorf("--seeds %d: want 1..16", cfg.SeedsPerShape)
	}
	if f.maxTime <= 0 {
		return Config{}, fmt.Errorf("--max-time %v: want a positive duration such as 10m", f.maxTime)
	}
	// The GPU reference is checked against the CPU reference on the test
	// suite (and on files of small shapes), where the CPU is quick enough.
	cfg.CheckRefOnCPU = suiteName == "tests" || (suiteName == "file" && maxFLOPs(p, shapes) <= 4e9)
	if cpu {
		cfg.Mode = "cpu"
		cfg.Stop = cpuStopRule
		cfg.WarmupMax = 200 * time.Millisecond
		cfg.CheckRefOnCPU = false
	} else {
		cfg.Mode = "gpu"
	}
	if err := applyMaxSamples(&cfg.Stop, f.maxSamples); err != nil {
		return Config{}, err
	}
	if f.jsonPath != "" {
		if dir := filepath.Dir(f.jsonPath); dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return Config{}, fmt.Errorf("--json %s: directory %s does not exist", f.jsonPath, dir)
			}
		}
	}
	return cfg, nil
}

// applyMaxSamples sets --max-samples n on the mode's stop rule: 0 keeps the
// rule's own cap, a positive n replaces it (see the flag: a slow kernel's
// paired run can then finish within --max-time and write its document).
func applyMaxSamples(rule *stats.StopRule, n int) error {
	switch {
	case n == 0:
		return nil
	case n < 0:
		return fmt.Errorf("--max-samples %d: want 0 (the stop rule's default, %d) or at least %d, the stop rule's minimum samples", n, rule.MaxSamples, rule.MinSamples)
	case n < rule.MinSamples:
		return fmt.Errorf("--max-samples %d: must be at least %d, the stop rule's minimum samples", n, rule.MinSamples)
	}
	rule.MaxSamples = n
	return nil
}

// startWatchdog ends the process through opt.Exit when the run is stuck
// watchdogGrace past --max-time (a kernel that hangs inside a synchronize
// cannot be cancelled); it returns the function that stops it.
func startWatchdog(opt Options, maxTime time.Duration, em *Emitter, stderr io.Writer) (stop func()) {
	if opt.Exit == nil {
		return func() {}
	}
	t := time.AfterFunc(maxTime+watchdogGrace, func() {
		msg := fmt.Sprintf("timeout: the run is stuck %v past --max-time %v (a kernel that never finishes?); ending the process", watchdogGrace, maxTime)
		fmt.Fprintln(stderr, "web bench: "+msg)
		em.Line(ErrorLine{Type: "error", Phase: "timeout", Message: msg, ExitCode: result.ExitCouldNotRun})
		opt.Exit(result.ExitCouldNotRun)
	})
	return func() { t.Stop() }
}

// openBackend opens the device the run measures on; the error says what to
// do instead.
func openBackend(p *kernels.Problem, cpu bool, ordinal int, cacheDir string, ungated bool) (Backend, error) {
	if cpu {
		return NewCPUBackend(p), nil
	}
	gb, err := OpenGPU(ordinal, p, cacheDir, ungated)
	if err != nil {
		return nil, fmt.Errorf("device %d: %v. Run on a machine with an NVIDIA GPU and driver, pick another --device, or use --device cpu", ordinal, err)
	}
	return gb, nil
}

// deliver prints the summary for people, checks the document, and hands it
// over: to --json FILE (the final line names it) or inside the final line.
// It returns the exit code: the run's, or could-not-run when the document
// cannot be written.
func deliver(r *result.Result, code int, jsonPath string, em *Emitter, stderr io.Writer) int {
	printSummary(stderr, r)
	doc, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		fmt.Fprintf(stderr, "web bench: encode result: %v\n", err)
		return result.ExitCouldNotRun
	}
	if verr := result.Validate(doc); verr != nil {
		// A document that does not validate is a harness bug; say so loudly
		// but still hand the document over, it holds the raw data.
		fmt.Fprintf(stderr, "web bench: warning: the result does not validate: %v\n", verr)
	}
	line := ResultLine{Type: "result", Status: r.Status, ExitCode: code, GeomeanSpeedup: r.Summary.GeomeanSpeedup, GeomeanUs: usPtr(r.Summary.GeomeanMedianNs)}
	if jsonPath != "" {
		if err := writeFileAtomic(jsonPath, append(doc, '\n')); err != nil {
			fmt.Fprintf(stderr, "web bench: write --json: %v\n", err)
			return result.ExitCouldNotRun
		}
		path := jsonPath
		line.Path = &path
	} else {
		line.Document = r
	}
	em.Line(line)
	if r.Error != "" {
		fmt.Fprintln(stderr, "web bench: "+r.Error)
	}
	return code
}

func problemNames() string {
	var ns []string
	for _, p := range kernels.Problems() {
		ns = append(ns, p.Name)
	}
	return strings.Join(ns, ", ")
}

func variantNames(p *kernels.Problem) string {
	var ns []string
	for _, v := range p.Variants() {
		ns = append(ns, v.Name)
	}
	return strings.Join(ns, ", ")
}

func maxFLOPs(p *kernels.Problem, ss []kernels.Shape) float64 {
	m := 0.0
	for _, s := range ss {
		m = max(m, p.FLOPs(s))
	}
	return m
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pitchtank", "cubin")
	}
	return ""
}

// writeFileAtomic writes through a temporary file and a rename, so a reader
// never sees half a document.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bench-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// printSummary writes a table for people on stderr.
func printSummary(w io.Writer, r *result.Result) {
	fmt.Fprintf(w, "%-3s %-44s %8s %12s %9s %10s %9s %s\n", "#", "shape", "correct", "median_us", "rel_sem", "floor_us", "of_floor", "speedup [95%] verdict")
	for _, s := range r.Shapes {
		shape := kernels.Shape{M: s.M, N: s.N, K: s.K}.String()
		if len(shape) > 44 {
			shape = shape[:41] + "..."
		}
		med, rs := "-", "-"
		if s.Variant != nil {
			med = fmt.Sprintf("%.2f", s.Variant.Stats.MedianNs/1e3)
			rs = fmt.Sprintf("%.3f%%", 100*s.Variant.Stats.RelSEM)
		}
		sp := s.Skipped
		if s.Pairing != nil {
			iv := s.Pairing.Speedup
			sp = fmt.Sprintf("%.4f [%.4f, %.4f] %s", iv.Point, iv.Lo, iv.Hi, s.Pairing.Verdict)
		}
		flags := ""
		if len(s.Flags) > 0 {
			flags = " flags=" + strings.Join(s.Flags, ",")
		}
		fmt.Fprintf(w, "%-3d %-44s %8v %12s %9s %10.2f %9.3f %s%s\n", s.Index, shape, s.Correct, med, rs, s.FloorNs/1e3, s.FractionOfFloor, sp, flags)
	}
	sm := r.Summary
	fmt.Fprintf(w, "status %s: %d/%d shapes correct, geomean median %.2f us, geomean floor %.2f us", r.Status, sm.Correct, sm.Shapes, sm.GeomeanMedianNs/1e3, sm.GeomeanFloorNs/1e3)
	if sm.GeomeanSpeedup != nil {
		fmt.Fprintf(w, ", geomean speedup %.4f", *sm.GeomeanSpeedup)
		for _, f := range sm.FastP {
			fmt.Fprintf(w, ", fast_%.1f %.2f", f.P, f.Value)
		}
	}
	fmt.Fprintln(w)
}
