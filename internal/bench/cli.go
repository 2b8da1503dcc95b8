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
// a hard cap of 1 s per shape, so `--suite tests` ends in seconds.
var cpuStopRule = stats.StopRule{MinSamples: 10, MinTime: 50 * time.Millisecond, MaxRelSEM: 0.0025, MaxTime: time.Second, MaxSamples: 2000}

// Main is `web bench`: it parses args, runs the protocol and returns the
// exit code. stdout gets JSON lines only; people read stderr.
func Main(args []string, stdout, stderr io.Writer, opt Options) int {
	em := NewEmitter(stdout)
	usage := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintln(stderr, "web bench: "+msg)
		em.Line(ErrorLine{Type: "error", Phase: "usage", Message: msg, ExitCode: result.ExitUsage})
		return result.ExitUsage
	}
	fs := flag.NewFlagSet("web bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		problem    = fs.String("problem", "", "problem name: nvfp4_group_gemm or nvfp4_dual_gemm (required)")
		variant    = fs.String("variant", "", "variant spec, e.g. baseline or \"baseline?stages=3\" (required on a GPU; the CPU runs only \"reference\")")
		baseline   = fs.String("baseline", "", "variant the run is paired with (GPU default: baseline)")
		suite      = fs.String("suite", "", "tests or benchmarks (default: benchmarks on a GPU, tests on the CPU)")
		shapesFile = fs.String("shapes", "", "JSON file with an array of shapes {\"m\":[...],\"n\":N,\"k\":K}, instead of --suite")
		device     = fs.String("device", "0", "GPU ordinal, or cpu")
		seed       = fs.Uint64("seed", 1, "base seed of the generated inputs")
		aa         = fs.Bool("aa", false, "A/A test: run the baseline against itself")
		jsonPath   = fs.String("json", "", "write the result document to FILE (default: in stdout's final line)")
		cacheDir   = fs.String("cache-dir", defaultCacheDir(), "cubin cache directory (\"\" = no cache)")
		maxTime    = fs.Duration("max-time", DefaultMaxTime, "wall-clock cap for the whole run")
		seeds      = fs.Int("seeds", 4, "fresh input sets per shape: each checked, all rotated while timing (rule 4: at least 4)")
		dumpShapes = fs.Bool("dump-shapes", false, "print the selected shapes as JSON and exit (for bench/peer/peer.py)")
		report     = fs.String("report", "", "validate a result document FILE and print it as Markdown tables (no run)")
		guardSeed  = fs.Uint64("guard-seed", 0, "seed of the timing guard's checked samples, poison and content changes (default: drawn from the OS per run, recorded in the result; give the recorded one to replay a run)")
		checkRate  = fs.Int("check-rate", DefaultCheckRate, "check a timed sample's output with probability 1/N (1 = every sample)")
		unguarded  = fs.Bool("unguarded", false, "turn the timing guard off, to measure what it costs (the result is then always suspect)")
		kernelDir  = fs.String("kernel", "", "a submitted kernel's folder (manifest.json and its files, docs/kernel-contract.md): --variant \"kernel\" or \"kernel?KNOB=V\" names it (default --problem: the manifest's)")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: web bench --problem NAME --variant NAME [--kernel DIR] [--baseline NAME] [--suite tests|benchmarks] [--shapes FILE] [--device N|cpu] [--seed N] [--aa] [--json FILE] [--cache-dir DIR] [--max-time DUR]")
		fmt.Fprintln(stderr, "exit codes: 0 ok, 1 a kernel was incorrect on some shape, 2 usage or invalid input, 3 could not run (device, compile, CUDA error, timeout), 4 suspect (correct, but below the speed-of-light floor, over 10x, or --unguarded)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return result.ExitUsage
		}
		return usage("%v (see web bench -h)", err)
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments %q: every option is a --flag (see web bench -h)", fs.Args())
	}
	if *report != "" {
		data, err := os.ReadFile(*report)
		if err != nil {
			return usage("--report: %v", err)
		}
		r, err := result.ParseResult(data)
		if err != nil {
			return usage("--report %s: %v", *report, err)
		}
		fmt.Fprint(stdout, result.Markdown(r))
		return result.ExitOK
	}
	// A submitted kernel is checked before anything else reads the
	// problem: its manifest names the problem when --problem does not.
	var sub *kernels.Submission
	if *kernelDir != "" {
		if *device == "cpu" {
			return usage("--kernel runs a submitted kernel, which needs a GPU; --device cpu runs only the CPU reference (drop --kernel, or pick a GPU with --device N)")
		}
		s, err := kernels.LoadSubmission(*kernelDir)
		if err != nil {
			return usage("--kernel %s: %v", *kernelDir, err)
		}
		sub = s
		if *problem == "" {
			*problem = sub.Manifest.Problem
		} else if *problem != sub.Manifest.Problem {
			return usage("--kernel %s is a kernel for %s, not --problem %s", *kernelDir, sub.Manifest.Problem, *problem)
		}
	}
	if *problem == "" {
		return usage("--problem is required (known: %s)", problemNames())
	}
	p, err := kernels.LookupProblem(*problem)
	if err != nil {
		return usage("%v", err)
	}
	cpu := *device == "cpu"
	ordinal := -1
	if !cpu {
		ordinal, err = strconv.Atoi(*device)
		if err != nil || ordinal < 0 {
			return usage("--device %q: want a GPU ordinal (0, 1, ...) or cpu", *device)
		}
	}

	// Shapes: --shapes FILE or the problem's suite.
	var shapes []kernels.Shape
	suiteName := *suite
	if *shapesFile != "" {
		if suiteName != "" {
			return usage("--shapes and --suite exclude each other")
		}
		data, err := os.ReadFile(*shapesFile)
		if err != nil {
			return usage("read --shapes: %v", err)
		}
		shapes, err = p.ParseShapes(data)
		if err != nil {
			return usage("--shapes %s: %v", *shapesFile, err)
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
			return usage("--suite %q: want tests or benchmarks", suiteName)
		}
	}
	for i, s := range shapes {
		if err := p.CheckShape(s); err != nil {
			return usage("shape %d %v: %v", i, s, err)
		}
	}
	if *dumpShapes {
		em.Line(map[string]any{"type": "shapes", "problem": p.Name, "suite": suiteName, "shapes": shapes})
		return result.ExitOK
	}

	// Variants.
	varSpec, baseSpec := *variant, *baseline
	if *aa {
		if baseSpec == "" {
			baseSpec = "baseline"
			if cpu {
				baseSpec = CPUVariantName
			}
		}
		if varSpec != "" && varSpec != baseSpec {
			return usage("--aa runs the baseline against itself: drop --variant %q, or set --baseline to it", varSpec)
		}
		varSpec = baseSpec
	}
	if cpu {
		if varSpec == "" {
			varSpec = CPUVariantName
		}
		if varSpec != CPUVariantName {
			return usage("--device cpu runs only the CPU reference: use --variant %s (or leave it out), or a GPU for %q", CPUVariantName, varSpec)
		}
		if baseSpec != "" && baseSpec != CPUVariantName {
			return usage("--device cpu can pair only the CPU reference with itself (--aa); %q needs a GPU", baseSpec)
		}
	} else {
		if varSpec == "" && sub != nil {
			varSpec = "kernel"
		}
		if varSpec == "" {
			return usage("--variant is required (known for %s: %s; knobs: \"baseline?stages=3\")", p.Name, variantNames(p))
		}
		if baseSpec == "" {
			baseSpec = "baseline"
		}
	}
	resolve := func(spec string) (kernels.Variant, error) {
		if sub != nil && kernels.IsSubmissionSpec(spec) {
			return p.ResolveSubmission(sub, spec)
		}
		return p.ResolveVariant(spec)
	}
	v, err := resolve(varSpec)
	if err != nil {
		return usage("--variant: %v", err)
	}
	cfg := Config{
		Problem: p, Suite: suiteName, ShapesFile: *shapesFile, Shapes: shapes,
		Variant: v, VariantSpec: varSpec, AA: *aa, Seed: *seed,
		Command:   append([]string{"web", "bench"}, args...),
		MinRounds: DefaultMinRounds, Bootstrap: DefaultBootstrap, MinEffect: DefaultMinEffect, MaxTime: *maxTime,
		Stop: stats.DefaultStopRule, WarmupMinLaunches: 10, WarmupMin: 100 * time.Millisecond,
	}
	if baseSpec != "" {
		bv, err := resolve(baseSpec)
		if err != nil {
			return usage("--baseline: %v", err)
		}
		cfg.Baseline, cfg.BaselineSpec = &bv, baseSpec
	}
	if !cpu && (v.Reference || cfg.Baseline.Reference) {
		// The GPU reference writes float64, not fp16: it checks the other
		// variants (and is itself checked against the CPU reference on
		// --suite tests), it is not a timed variant.
		return usage("the GPU reference is not a timed variant: it checks the others (and is checked against the CPU reference on --suite tests); bench \"baseline\" or a knob variant instead")
	}
	cfg.GuardSeed, cfg.CheckRate, cfg.Unguarded = *guardSeed, *checkRate, *unguarded
	if cfg.GuardSeed == 0 {
		cfg.GuardSeed = NewGuardSeed()
	}
	if cfg.CheckRate < 1 || cfg.CheckRate > 1000 {
		return usage("--check-rate %d: want 1..1000", cfg.CheckRate)
	}
	cfg.SeedsPerShape = *seeds
	if cfg.SeedsPerShape < 1 || cfg.SeedsPerShape > 16 {
		return usage("--seeds %d: want 1..16", cfg.SeedsPerShape)
	}
	if *maxTime <= 0 {
		return usage("--max-time %v: want a positive duration such as 10m", *maxTime)
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
	if *jsonPath != "" {
		if dir := filepath.Dir(*jsonPath); dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usage("--json %s: directory %s does not exist", *jsonPath, dir)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), *maxTime)
	defer cancel()
	if opt.Exit != nil {
		t := time.AfterFunc(*maxTime+watchdogGrace, func() {
			msg := fmt.Sprintf("timeout: the run is stuck %v past --max-time %v (a kernel that never finishes?); ending the process", watchdogGrace, *maxTime)
			fmt.Fprintln(stderr, "web bench: "+msg)
			em.Line(ErrorLine{Type: "error", Phase: "timeout", Message: msg, ExitCode: result.ExitCouldNotRun})
			opt.Exit(result.ExitCouldNotRun)
		})
		defer t.Stop()
	}

	var b Backend
	if cpu {
		b = NewCPUBackend(p)
	} else {
		gb, err := OpenGPU(ordinal, p, *cacheDir)
		if err != nil {
			msg := fmt.Sprintf("device %d: %v. Run on a machine with an NVIDIA GPU and driver, pick another --device, or use --device cpu", ordinal, err)
			fmt.Fprintln(stderr, "web bench: "+msg)
			em.Line(ErrorLine{Type: "error", Phase: "device", Message: msg, ExitCode: result.ExitCouldNotRun})
			return result.ExitCouldNotRun
		}
		b = gb
	}
	defer b.Close()
	fmt.Fprintf(stderr, "web bench: %s on %s, %d shapes (%s), variant %q", p.Name, b.Device().Name, len(shapes), suiteName, varSpec)
	if cfg.Baseline != nil {
		fmt.Fprintf(stderr, " paired with %q", cfg.BaselineSpec)
	}
	fmt.Fprintln(stderr)

	r, code := Run(ctx, cfg, b, em)
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
	if *jsonPath != "" {
		if err := writeFileAtomic(*jsonPath, append(doc, '\n')); err != nil {
			fmt.Fprintf(stderr, "web bench: write --json: %v\n", err)
			return result.ExitCouldNotRun
		}
		path := *jsonPath
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
