package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/splitmix"
	"github.com/pitchtank/pitchtank/internal/stats"
	"github.com/pitchtank/pitchtank/kernels"
)

// Config is one run of the protocol: a problem, its shapes, a variant and
// (optionally) the baseline it is paired with.
type Config struct {
	Problem      *kernels.Problem
	Suite        string // tests, benchmarks or file
	ShapesFile   string
	Shapes       []kernels.Shape
	Variant      kernels.Variant
	VariantSpec  string
	Baseline     *kernels.Variant // nil: time the variant alone
	BaselineSpec string
	AA           bool
	Seed         uint64
	Command      []string
	Mode         string // gpu or cpu

	SeedsPerShape     int  // fresh input sets checked per shape
	CheckRefOnCPU     bool // compare the device reference with the CPU reference
	Stop              stats.StopRule
	WarmupMinLaunches int
	WarmupMin         time.Duration
	WarmupMax         time.Duration // 0: no cap
	MinRounds         int
	Bootstrap         int
	MinEffect         float64
	MaxTime           time.Duration // the whole run's wall-clock cap (also set on ctx by the caller)

	// GuardSeed seeds the checked samples, poison patterns and content
	// changes (NewGuardSeed: unpredictable, recorded in the result).
	GuardSeed uint64
	// CheckRate: a timed sample is checked with probability 1/CheckRate
	// (0: DefaultCheckRate).
	CheckRate int
	// Unguarded turns the timing guard off (content changes, timed checks,
	// reloads, the settled check), for measuring what the guard costs. Such
	// a result is always suspect.
	Unguarded bool
}

// Defaults of the protocol (measurement.md).
const (
	DefaultMinRounds = 30
	DefaultBootstrap = 2000
	DefaultMinEffect = 0.01
	DefaultMaxTime   = 10 * time.Minute
	// reviewSpeedup: KernelBench flags speedups above 10x for review.
	reviewSpeedup = 10.0
)

// FastPLevels are the p of fast_p that every result reports (rule 9).
var FastPLevels = []float64{1.0, 1.2, 2.0}

// RunError is an error that stopped the run, with the phase it happened in.
type RunError struct {
	Phase string
	Shape int
	Err   error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("bench: %s (shape %d): %v", e.Phase, e.Shape, e.Err)
}
func (e *RunError) Unwrap() error { return e.Err }

// Run executes the protocol on b and returns the result document, always
// (a failed run still documents what it did and why it stopped), and the
// exit code.
func Run(ctx context.Context, cfg Config, b Backend, em *Emitter) (*result.Result, int) {
	start := time.Now()
	r := newResult(cfg, b, start)
	err := run(ctx, cfg, b, em, r)
	finish(r, cfg, err, time.Now())
	if err != nil {
		var re *RunError
		phase, shape := "run", 0
		if errors.As(err, &re) {
			phase, shape = re.Phase, re.Shape
		}
		em.Line(ErrorLine{Type: "error", Phase: phase, Shape: shape, Message: err.Error(), ExitCode: result.ExitCouldNotRun})
	}
	return r, r.ExitCode
}

func newResult(cfg Config, b Backend, start time.Time) *result.Result {
	mode, flush := b.CacheMode()
	dev := b.Device()
	c := b.Ceilings()
	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Tool:          "pitchtank web bench",
		Command:       append([]string{}, cfg.Command...),
		StartedAt:     start.UTC(),
		Problem:       cfg.Problem.Name,
		Suite:         cfg.Suite,
		ShapesFile:    cfg.ShapesFile,
		Mode:          cfg.Mode,
		AA:            cfg.AA,
		Seed:          cfg.Seed,
		Device:        dev,
		Fingerprint:   result.NewFingerprint(dev),
		Ceilings:      result.Ceilings{TensorFLOPS: c.TensorFLOPS, MemBytesPerSec: c.MemBytesPerSec, Source: c.Source},
		Protocol: result.Protocol{
			StopRule: result.StopRule{
				MinSamples: cfg.Stop.MinSamples, MinSeconds: cfg.Stop.MinTime.Seconds(),
				MaxRelSEM: cfg.Stop.MaxRelSEM, MaxSeconds: cfg.Stop.MaxTime.Seconds(),
				MaxSamples: cfg.Stop.MaxSamples, MaxRunSeconds: cfg.MaxTime.Seconds(),
			},
			WarmupMinLaunches: cfg.WarmupMinLaunches,
			WarmupMinSeconds:  cfg.WarmupMin.Seconds(),
			WarmupMaxSeconds:  cfg.WarmupMax.Seconds(),
			CacheMode:         mode,
			FlushBytes:        flush,
			MinRounds:         cfg.MinRounds,
			BootstrapSamples:  cfg.Bootstrap,
			ConfidenceLevel:   0.95,
			MinEffect:         cfg.MinEffect,
			SeedsPerShape:     cfg.SeedsPerShape,
			Timer:             b.Timer(),
			Guarded:           !cfg.Unguarded,
			GuardSeed:         cfg.GuardSeed,
			CheckRate:         max(cfg.CheckRate, 0),
		},
		Variant: result.Build{Role: result.RoleVariant, Spec: cfg.VariantSpec, Name: cfg.Variant.Name},
		Shapes:  []result.Shape{},
	}
	if cfg.Baseline != nil {
		r.Baseline = &result.Build{Role: result.RoleBaseline, Spec: cfg.BaselineSpec, Name: cfg.Baseline.Name}
	}
	return r
}

func run(ctx context.Context, cfg Config, b Backend, em *Emitter, r *result.Result) error {
	n := len(cfg.Shapes)
	roles := []string{result.RoleVariant}
	specs := []string{cfg.VariantSpec}
	variants := []kernels.Variant{cfg.Variant}
	if cfg.Baseline != nil {
		roles = append(roles, result.RoleBaseline)
		specs = append(specs, cfg.BaselineSpec)
		variants = append(variants, *cfg.Baseline)
	}
	for i, role := range roles {
		em.Line(Progress{Type: "progress", Phase: PhaseCompile, Shape: 0, Shapes: n, Variant: specs[i], Role: role})
		bld, err := b.Build(ctx, role, variants[i])
		if err != nil {
			return &RunError{Phase: PhaseCompile, Err: fmt.Errorf("build %s %q: %w", role, specs[i], err)}
		}
		bld.Role, bld.Spec = role, specs[i]
		if i == 0 {
			r.Variant = *bld
		} else {
			r.Baseline = bld
		}
	}
	r.Reference = b.Reference()
	defer refreshBuilds(b, r)
	for i, s := range cfg.Shapes {
		sr, err := runShape(ctx, cfg, b, em, i, s, roles, specs)
		if sr != nil {
			r.Shapes = append(r.Shapes, *sr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// buildRefresher is implemented by backends whose build records gain
// detail once a module is loaded (per-kernel registers and spills).
type buildRefresher interface {
	BuildRecord(role string) *result.Build
}

func refreshBuilds(b Backend, r *result.Result) {
	br, ok := b.(buildRefresher)
	if !ok {
		return
	}
	if x := br.BuildRecord(result.RoleVariant); x != nil {
		x.Spec = r.Variant.Spec
		r.Variant = *x
	}
	if r.Baseline != nil {
		if x := br.BuildRecord(result.RoleBaseline); x != nil {
			x.Spec = r.Baseline.Spec
			r.Baseline = x
		}
	}
	if x := br.BuildRecord(result.RoleReference); x != nil {
		r.Reference = x
	}
}

// seedFor derives the input seed of check j on shape i from the run's seed
// (the splitmix64 stream of --seed at a distinct position), so every shape
// and check gets its own inputs and a run is reproducible from --seed alone.
func seedFor(base uint64, shape, j int) uint64 {
	return splitmix.At(base, uint64(shape*64+j+1))
}

func runShape(ctx context.Context, cfg Config, b Backend, em *Emitter, i int, s kernels.Shape, roles, specs []string) (sr *result.Shape, err error) {
	n := len(cfg.Shapes)
	p := cfg.Problem
	floorSec, bound := kernels.Floor(p, s, b.Ceilings())
	sr = &result.Shape{
		Index: i, M: append([]int{}, s.M...), N: s.N, K: s.K,
		FLOPs: p.FLOPs(s), MinBytes: p.MinBytes(s), FloorNs: floorSec * 1e9, FloorBound: bound,
		ATol: p.ATol, RTol: p.RTol,
		Checks: []result.Check{}, Launch: []result.LaunchPlan{}, Flags: []string{},
	}
	fail := func(phase string, e error) (*result.Shape, error) {
		if sr.Skipped == "" && sr.Variant == nil {
			sr.Skipped = "run stopped: " + phase + " failed"
		}
		return sr, &RunError{Phase: phase, Shape: i, Err: e}
	}
	sr.TelemetryBefore = readTelemetry(b, sr)
	runner, err := b.Shape(ctx, s, roles)
	if err != nil {
		return fail(PhaseCorrectness, fmt.Errorf("prepare shape: %w", err))
	}
	defer func() {
		if cerr := runner.Close(); cerr != nil && err == nil {
			sr, err = fail(PhaseDone, fmt.Errorf("release shape: %w", cerr))
		}
	}()
	for role := range roles {
		pl := runner.Plan(role)
		pl.Role = roles[role]
		sr.Launch = append(sr.Launch, pl)
	}

	// Rule 1: fresh inputs, several seeds, poisoned outputs, input hashes.
	roleOK := make([]bool, len(roles))
	for k := range roleOK {
		roleOK[k] = true
	}
	refOK := true
	g := newGuard(cfg, p, s, i, len(roles), cfg.SeedsPerShape)
	for j := 0; j < cfg.SeedsPerShape; j++ {
		seed := seedFor(cfg.Seed, i, j)
		sr.Seeds = append(sr.Seeds, seed)
		em.Line(Progress{Type: "progress", Phase: PhaseCorrectness, Shape: i, Shapes: n, Samples: j})
		ref, rc, err := runner.Load(ctx, j, seed, cfg.CheckRefOnCPU)
		if err != nil {
			return fail(PhaseCorrectness, fmt.Errorf("load inputs (seed %d): %w", seed, err))
		}
		if rc != nil {
			sr.ReferenceChecked = true
			sr.Checks = append(sr.Checks, result.Check{
				Role: result.RoleReference, Phase: result.PhaseRefVsCPU, Seed: seed, Elements: rc.Elements,
				MaxAbsErr: finitePtr(rc.MaxAbsErr), RelL2Err: finitePtr(rc.RelL2Err), MaxRelErr: finitePtr(rc.RelL2Err),
				ATol: rc.Tol, RTol: rc.Tol, InputsIntact: true, Pass: rc.Pass, Mismatches: boolToInt(!rc.Pass),
				Sample: -1, Set: -1,
			})
			refOK = refOK && rc.Pass
		}
		g.base[j] = ref
		for role := range roles {
			if err := g.scramble(ctx, runner, role, j, false); err != nil {
				return fail(PhaseCorrectness, err)
			}
			out, h0, h1, err := runner.Check(ctx, role, j)
			if err != nil {
				return fail(PhaseCorrectness, fmt.Errorf("check %s (seed %d): %w", roles[role], seed, err))
			}
			c := compareCheck(roles[role], result.PhaseFresh, seed, out, ref, p.ATol, p.RTol)
			c.InputHash = h0
			g.hashes[role][j] = h0
			c.InputsIntact = h0 != "" && h0 == h1
			c.Pass = c.Pass && c.InputsIntact
			if !c.InputsIntact {
				addFlag(&sr.Flags, "inputs_modified")
			}
			sr.Checks = append(sr.Checks, c)
			roleOK[role] = roleOK[role] && c.Pass
		}
	}
	sr.InputSets = len(sr.Seeds)
	if !refOK {
		addFlag(&sr.Flags, "reference_disagrees_with_cpu")
	}
	sr.Correct = roleOK[0] && refOK
	if len(roles) > 1 {
		ok := roleOK[1] && refOK
		sr.BaselineCorrect = &ok
	}
	switch {
	case !refOK:
		sr.Skipped = "the device reference disagrees with the CPU reference: nothing can be checked"
	case !roleOK[0]:
		sr.Skipped = "variant incorrect: correctness comes before speed"
	case len(roles) > 1 && !roleOK[1]:
		sr.Skipped = "baseline incorrect: no comparison against a wrong kernel"
	}
	if sr.Skipped != "" {
		sr.TelemetryAfter = readTelemetry(b, sr)
		finishShapeFlags(sr)
		return sr, nil
	}

	// Rules 2-5 and 7: warm-up, then paired interleaved samples until the
	// stop rule holds for every role.
	ms := make([]*result.Measurement, len(roles))
	for role := range roles {
		m, err := warmup(ctx, cfg, runner, g, role, sr.InputSets)
		if err != nil {
			return fail(PhaseWarmup, fmt.Errorf("warm up %s: %w", roles[role], err))
		}
		m.Role = roles[role]
		ms[role] = m
		em.Line(Progress{Type: "progress", Phase: PhaseWarmup, Shape: i, Shapes: n, Variant: specs[role], Role: roles[role], Samples: m.WarmupLaunches})
	}
	order, setOrder, err := sampleLoop(ctx, cfg, runner, g, ms, sr.InputSets, func(samples int) {
		med := stats.Summarize(ms[0].SamplesNs).Median
		em.Line(Progress{Type: "progress", Phase: PhaseTiming, Shape: i, Shapes: n, Variant: specs[0], Role: result.RoleVariant, Samples: samples, MedianUs: usPtr(med)})
	}, func(c result.Check) { sr.Checks = append(sr.Checks, c) })
	sr.Guard = g.record()
	if errors.Is(err, errCaught) {
		// A guard check failed: the shape is incorrect, its times meaningless.
		for _, c := range sr.Checks {
			if !c.Pass && c.Role == result.RoleVariant {
				sr.Correct = false
			}
			if !c.Pass && c.Role == result.RoleBaseline {
				f := false
				sr.BaselineCorrect = &f
			}
		}
		sr.Skipped = "a timed launch failed a check: no times are reported"
		sr.TelemetryAfter = readTelemetry(b, sr)
		finishShapeFlags(sr)
		return sr, nil
	}
	if err != nil {
		return fail(PhaseTiming, err)
	}
	for _, m := range ms {
		m.Stats = toStats(stats.Summarize(m.SamplesNs))
	}
	sr.Variant = ms[0]
	if len(roles) > 1 {
		sr.Baseline = ms[1]
		iv := stats.PairedSpeedupBySet(ms[1].SamplesNs, ms[0].SamplesNs, setOrder, cfg.Bootstrap, seedFor(cfg.Seed, i, 63))
		sr.Pairing = &result.Pairing{
			Rounds: len(order), Order: order, Sets: setOrder, Bootstrap: BootstrapMethod,
			Speedup: result.Interval{Point: iv.Point, Lo: iv.Lo, Hi: iv.Hi, Level: 0.95},
			Verdict: stats.Verdict(iv, cfg.MinEffect),
		}
		if iv.Point > reviewSpeedup {
			addFlag(&sr.Flags, "speedup_over_10x")
		}
	}

	// Rule 1, last part: the output of the last timed launch, on every
	// input set (each set's last launch was a timed one).
	for role := range roles {
		for j := range sr.InputSets {
			out, err := runner.Output(ctx, role, j)
			if err != nil {
				return fail(PhaseTiming, fmt.Errorf("read %s output of input set %d after timing: %w", roles[role], j, err))
			}
			c := compareCheck(roles[role], result.PhaseLastTimed, sr.Seeds[j], g.compareFlipped(role, j, out), g.base[j], p.ATol, p.RTol)
			c.InputsIntact = true
			if g.on {
				// Every content change undone, the inputs must be as loaded.
				h, err := g.restore(ctx, runner, role, j)
				if err != nil {
					return fail(PhaseTiming, fmt.Errorf("%s: %w", roles[role], err))
				}
				ic := result.Check{Role: roles[role], Phase: result.PhaseInputsAfter, Seed: sr.Seeds[j], Elements: 1, Sample: -1,
					ATol: p.ATol, RTol: p.RTol, InputHash: h, InputsIntact: h == g.hashes[role][j]}
				ic.Pass = ic.InputsIntact
				if !ic.Pass {
					ic.Mismatches = 1
					ic.Detail = "the inputs changed while timed: with every content change undone they no longer hash as loaded"
					addFlag(&sr.Flags, "inputs_modified")
					if role == 0 {
						sr.Correct = false
					} else {
						f := false
						sr.BaselineCorrect = &f
					}
				}
				sr.Checks = append(sr.Checks, ic)
			}
			sr.Checks = append(sr.Checks, c)
			if !c.Pass {
				if role == 0 {
					sr.Correct = false
				} else {
					f := false
					sr.BaselineCorrect = &f
				}
			}
		}
	}

	// Rule 8: speed of light.
	med := sr.Variant.Stats.MedianNs
	sr.FractionOfFloor = sr.FloorNs / med
	if med < sr.FloorNs {
		addFlag(&sr.Flags, "below_floor")
	}
	sr.TelemetryAfter = readTelemetry(b, sr)
	finishShapeFlags(sr)
	em.Line(Progress{Type: "progress", Phase: PhaseDone, Shape: i, Shapes: n, Variant: specs[0], Role: result.RoleVariant, Samples: len(sr.Variant.SamplesNs), MedianUs: usPtr(med)})
	return sr, nil
}

// warmup runs one untimed pass, then at least max(WarmupMinLaunches,
// WarmupMin) more, stopping early only at WarmupMax (when set) so that a
// very slow CPU execution does not spend minutes warming up. It rotates
// through the input sets like the timed loop, and makes at least one pass
// over each.
func warmup(ctx context.Context, cfg Config, runner ShapeRunner, g *guard, role, sets int) (*result.Measurement, error) {
	t0 := time.Now()
	launches := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, timeoutErr(err)
		}
		// Warm-up executions look exactly like timed ones to the kernel.
		if err := g.scramble(ctx, runner, role, launches%sets, true); err != nil {
			return nil, err
		}
		if _, err := runner.Sample(ctx, role, launches%sets); err != nil {
			return nil, err
		}
		launches++
		el := time.Since(t0)
		done := launches >= 1+cfg.WarmupMinLaunches && el >= cfg.WarmupMin
		if launches >= sets && (done || (cfg.WarmupMax > 0 && el >= cfg.WarmupMax)) {
			return &result.Measurement{WarmupLaunches: launches, WarmupSeconds: el.Seconds(), SamplesNs: []float64{}}, nil
		}
	}
}

// sampleLoop interleaves the roles, AB then BA (variant = A), until at least
// MinRounds rounds are done and the stop rule holds for every role, or a
// hard cap of the stop rule is hit for any role. With one role it is the
// plain stop rule. No role gets more than the rule's MaxSamples samples,
// even where that is below MinRounds (--max-samples). It returns the order
// and the input set of every round (roundSchedule).
func sampleLoop(ctx context.Context, cfg Config, runner ShapeRunner, g *guard, ms []*result.Measurement, sets int, tick func(samples int), check func(result.Check)) ([]string, []int, error) {
	paired := len(ms) > 1
	var order []string
	var setOrder []int
	t0 := time.Now()
	lastTick := t0
	measured := make([]float64, len(ms))
	// The guard's move needs every set to run once more after it: it is
	// made only where that fits within the stop rule's sample cap, so a
	// small cap (--max-samples) stays a cap. With the default cap (2000)
	// it always fits: the move and the rounds after it end within the
	// first 3*sets+MinRounds/2 rounds. A run without the move records
	// move_round -1, as one that a cap ends before its move round does.
	move := g.on && g.reload+sets <= cfg.Stop.MaxSamples
	for round := 0; ; round++ {
		if move && round == g.reload {
			t := time.Now()
			if err := g.moveAll(ctx, runner, len(ms)); err != nil {
				return order, setOrder, err
			}
			g.overhead += time.Since(t)
		}
		seq := []int{0}
		set, ab := roundSchedule(round, sets)
		if paired {
			setOrder = append(setOrder, set)
			if ab {
				seq = []int{0, 1}
				order = append(order, "AB")
			} else {
				seq = []int{1, 0}
				order = append(order, "BA")
			}
		}
		for _, role := range seq {
			if err := ctx.Err(); err != nil {
				return order, setOrder, timeoutErr(err)
			}
			t := time.Now()
			if err := g.scramble(ctx, runner, role, set, true); err != nil {
				return order, setOrder, fmt.Errorf("before sample %s: %w", ms[role].Role, err)
			}
			g.overhead += time.Since(t)
			ns, err := runner.Sample(ctx, role, set)
			if err != nil {
				return order, setOrder, fmt.Errorf("sample %s: %w", ms[role].Role, err)
			}
			if !(ns > 0) || math.IsInf(ns, 0) {
				return order, setOrder, fmt.Errorf("sample %s: the timer returned %v ns", ms[role].Role, ns)
			}
			t = time.Now()
			if err := guardSample(ctx, cfg, runner, g, ms[role], role, set, check); err != nil {
				return order, setOrder, err
			}
			g.overhead += time.Since(t)
			ms[role].SamplesNs = append(ms[role].SamplesNs, ns)
			measured[role] += ns
		}
		// The guard's own work (content changes, checks, the move) does not
		// use up the stop rule's wall-clock cap: guarded runs take as many
		// samples as unguarded ones would, and only --max-time bounds them.
		wall := time.Since(t0) - g.overhead
		allStop, anyCap := true, false
		for role, m := range ms {
			stop, reason := cfg.Stop.Check(m.SamplesNs, time.Duration(measured[role]), wall)
			if stop {
				m.StopReason = reason
				if reason != stats.StopConverged {
					anyCap = true
				}
			} else {
				m.StopReason = ""
				allStop = false
			}
		}
		if time.Since(lastTick) > 250*time.Millisecond {
			lastTick = time.Now()
			tick(len(ms[0].SamplesNs))
		}
		minRounds := cfg.MinRounds
		if !paired {
			minRounds = 0
		}
		// Every input set's last execution must be a timed one (its output
		// is checked after timing), and paired, every set runs AB and BA.
		minRounds = max(minRounds, sets)
		if paired {
			minRounds = max(minRounds, 2*sets) // every set runs AB and BA
		}
		if move {
			// After the reload every set runs again, paired both ways.
			minRounds = max(minRounds, g.reload+2*sets)
		}
		// The sample cap wins over these minimums: roles that converged
		// early stop at the cap, not at MinRounds (--max-samples below it).
		minRounds = min(minRounds, cfg.Stop.MaxSamples)
		// A hard cap ends the loop at once, except right after the reload:
		// every set must run again first (its output is checked after
		// timing against the reloaded inputs).
		reloading := move && round >= g.reload && round+1 < g.reload+sets
		if (allStop && round+1 >= minRounds) || (anyCap && !reloading) {
			for role, m := range ms {
				m.MeasuredSeconds = measured[role] / 1e9
				if m.StopReason == "" {
					// Stopped because another role hit a hard cap.
					m.StopReason = "paired_role_cap"
				}
			}
			return order, setOrder, nil
		}
	}
}

// readTelemetry reads NVML; a failed reading does not stop the measurement
// (the clocks are recorded, never set) but flags the shape, since its
// throttle state is then unknown.
func readTelemetry(b Backend, sr *result.Shape) *result.Telemetry {
	t, err := b.Telemetry()
	if err != nil {
		addFlag(&sr.Flags, "telemetry_unavailable")
	}
	return t
}

// roundSchedule gives round r's input set and whether the variant runs
// first (AB). Sets cycle r mod sets, so consecutive rounds use different
// buffers, and within a round the roles use different buffers: no sample
// directly follows an execution on its own buffers. That matters because
// the L2 flush does not make everything cold (address translations, for
// one, survive it): in a device A/A run on 2026-11-21, a schedule in which
// one role often repeated itself on the same set made it look 5-10% faster
// on 15-20 us dual-GEMM shapes. Orders alternate AB, BA, ...; with an even
// number of sets the alternation flips every other cycle, so every set
// runs both AB and BA. One set: AB, BA, AB, ... (each role repeats itself
// equally often).
func roundSchedule(r, sets int) (set int, ab bool) {
	set = r % sets
	ab = r%2 == 0
	if sets%2 == 0 && (r/sets)%2 == 1 {
		ab = !ab
	}
	return set, ab
}

func timeoutErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timeout: the run's --max-time passed: %w", err)
	}
	return err
}

func compareCheck(role, phase string, seed uint64, out []uint16, ref []float64, atol, rtol float64) result.Check {
	c := result.Check{Role: role, Phase: phase, Seed: seed, ATol: atol, RTol: rtol, Sample: -1, Set: -1}
	if len(out) != len(ref) {
		c.Elements = max(len(ref), 1)
		c.Mismatches = c.Elements
		return c
	}
	k := compareParallel(out, ref, atol, rtol)
	c.Elements, c.Mismatches, c.NaNs = k.Elements, k.Mismatches, k.NaNs
	c.MaxAbsErr, c.MaxRelErr, c.RelL2Err = finitePtr(k.MaxAbsErr), finitePtr(k.MaxRelErr), finitePtr(k.RelL2Err)
	c.Pass = k.Pass
	return c
}

func toStats(s stats.Summary) result.Stats {
	return result.Stats{N: s.N, MedianNs: s.Median, MeanNs: s.Mean, MinNs: s.Min, MaxNs: s.Max, StddevNs: s.Stddev, SEMNs: s.SEM, RelSEM: s.RelSEM}
}

// ThrottleFlags names the clock-event reasons that make a measurement
// suspect (rule 6): power cap 0x4, hardware slowdown 0x8, software thermal
// 0x20, hardware thermal 0x40, power brake 0x80.
func ThrottleFlags(reasons uint64) []string {
	f := []string{}
	for _, x := range []struct {
		bit  uint64
		name string
	}{{0x4, "power_cap"}, {0x8, "hw_slowdown"}, {0x20, "sw_thermal"}, {0x40, "hw_thermal"}, {0x80, "power_brake"}} {
		if reasons&x.bit != 0 {
			f = append(f, x.name)
		}
	}
	return f
}

func finishShapeFlags(sr *result.Shape) {
	for _, t := range []*result.Telemetry{sr.TelemetryBefore, sr.TelemetryAfter} {
		if t == nil {
			continue
		}
		t.Flags = ThrottleFlags(t.ClockEventReasons)
		for _, f := range t.Flags {
			addFlag(&sr.Flags, "throttle_"+f)
		}
	}
	sort.Strings(sr.Flags)
}

func addFlag(flags *[]string, f string) {
	for _, x := range *flags {
		if x == f {
			return
		}
	}
	*flags = append(*flags, f)
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finish fills the summary (rule 9), the status and the exit code.
func finish(r *result.Result, cfg Config, err error, end time.Time) {
	r.FinishedAt = end.UTC()
	r.WallSeconds = end.Sub(r.StartedAt).Seconds()
	sm := result.Summary{Shapes: len(r.Shapes), FastP: []result.FastP{}, Flags: []string{}, ShapeSpeedups: []float64{}}
	var medians, baseMedians, floors, fracs, speedups []float64
	var perShape []float64
	var correct []bool
	baselineBad := false
	for i := range r.Shapes {
		s := &r.Shapes[i]
		if s.Correct {
			sm.Correct++
		}
		if s.BaselineCorrect != nil && !*s.BaselineCorrect {
			baselineBad = true
		}
		floors = append(floors, s.FloorNs)
		sp := 0.0
		if s.Variant != nil {
			sm.Timed++
			medians = append(medians, s.Variant.Stats.MedianNs)
			fracs = append(fracs, s.FractionOfFloor)
		}
		if s.Baseline != nil {
			baseMedians = append(baseMedians, s.Baseline.Stats.MedianNs)
		}
		if s.Pairing != nil {
			sp = s.Pairing.Speedup.Point
			speedups = append(speedups, sp)
			switch s.Pairing.Verdict {
			case "faster":
				sm.Verdicts.Faster++
			case "slower":
				sm.Verdicts.Slower++
			default:
				sm.Verdicts.NoChange++
			}
		}
		perShape = append(perShape, sp)
		correct = append(correct, s.Correct && s.Pairing != nil)
		for _, f := range s.Flags {
			addFlag(&sm.Flags, f)
		}
	}
	sort.Strings(sm.Flags)
	sm.AllCorrect = len(r.Shapes) > 0 && sm.Correct == len(r.Shapes)
	if len(medians) > 0 {
		sm.GeomeanMedianNs = stats.GeoMean(medians)
		sm.GeomeanFractionFloor = stats.GeoMean(fracs)
	}
	if len(floors) > 0 {
		sm.GeomeanFloorNs = stats.GeoMean(floors)
	}
	if r.Baseline != nil {
		sm.ShapeSpeedups = perShape
		if len(baseMedians) > 0 {
			g := stats.GeoMean(baseMedians)
			sm.GeomeanBaselineNs = &g
		}
		if len(speedups) > 0 {
			g := stats.GeoMean(speedups)
			sm.GeomeanSpeedup = &g
		}
		for _, p := range FastPLevels {
			sm.FastP = append(sm.FastP, result.FastP{P: p, Value: stats.FastP(perShape, correct, p)})
		}
	}
	sm.Failures = failures(r.Shapes)
	sm.Suspect = suspectReasons(r, &sm, cfg)
	r.Summary = sm
	switch {
	case err != nil:
		r.Status, r.ExitCode, r.Error = result.StatusError, result.ExitCouldNotRun, err.Error()
	case !sm.AllCorrect || baselineBad:
		r.Status, r.ExitCode = result.StatusIncorrect, result.ExitIncorrect
	case len(sm.Suspect) > 0:
		r.Status, r.ExitCode = result.StatusSuspect, result.ExitSuspect
	default:
		r.Status, r.ExitCode = result.StatusOK, result.ExitOK
	}
}

// failures lists every failed check, naming the shape, role and check.
func failures(shapes []result.Shape) []result.Failure {
	fs := []result.Failure{}
	for _, s := range shapes {
		for _, c := range s.Checks {
			if c.Pass {
				continue
			}
			d := c.Detail
			if d == "" {
				d = checkDetail(c)
			}
			fs = append(fs, result.Failure{Shape: s.Index, Role: c.Role, Check: c.Phase, Detail: d})
		}
	}
	return fs
}

func checkDetail(c result.Check) string {
	switch {
	case !c.InputsIntact:
		return "the kernel changed its inputs"
	case c.NaNs > 0:
		return fmt.Sprintf("%d of %d elements wrong (%d NaN or Inf)", c.Mismatches, c.Elements, c.NaNs)
	case c.MaxAbsErr != nil:
		return fmt.Sprintf("%d of %d elements wrong (max abs err %.4g, tolerance %g + %g*|ref|)", c.Mismatches, c.Elements, *c.MaxAbsErr, c.ATol, c.RTol)
	}
	return fmt.Sprintf("%d of %d elements wrong", c.Mismatches, c.Elements)
}

// suspectReasons says why a finished, correct result is implausible: a
// variant faster than the speed of light on any shape, a geomean speedup
// over KernelBench's 10x review bound, or timing without the guard. One
// shape over 10x is only flagged (speedup_over_10x): honest kernels beat the
// per-group baseline by 13-23x on the 16-group test shape (H100,
// 2026-11-23, docs/BENCHMARKS.md). Such a result scores no
// prediction until an admin accepts it with a reason.
func suspectReasons(r *result.Result, sm *result.Summary, cfg Config) []string {
	rs := []string{}
	if cfg.Unguarded {
		rs = append(rs, "the timing guard was off (--unguarded): a kernel could have reused earlier work")
	}
	for _, s := range r.Shapes {
		if s.Variant == nil {
			continue
		}
		if med := s.Variant.Stats.MedianNs; med < s.FloorNs {
			rs = append(rs, fmt.Sprintf("shape %d: variant median %.2f us is below the speed-of-light floor %.2f us", s.Index, med/1e3, s.FloorNs/1e3))
		}
	}
	if g := sm.GeomeanSpeedup; g != nil && *g > reviewSpeedup {
		rs = append(rs, fmt.Sprintf("geomean speedup %.2fx is over the %gx review bound", *g, reviewSpeedup))
	}
	return rs
}

// guardSample checks the timed sample just taken (its index is the last of
// m.SamplesNs): its work must have finished when the stop event completed,
// and when the guard picks it, its output read right then must match the
// exact result of the inputs as they were. A failure is recorded through
// check and ends the shape's timing (errCaught).
func guardSample(ctx context.Context, cfg Config, runner ShapeRunner, g *guard, m *result.Measurement, role, set int, check func(result.Check)) error {
	if !g.on {
		return nil
	}
	idx := len(m.SamplesNs)
	read := g.decide(role, set)
	out, settled, err := runner.Probe(ctx, role, set, read)
	if err != nil {
		return fmt.Errorf("probe %s sample %d: %w", m.Role, idx, err)
	}
	p := cfg.Problem
	if !settled {
		check(result.Check{Role: m.Role, Phase: result.PhaseAfterTimer, Sample: idx, Set: set, Elements: 1, Mismatches: 1,
			ATol: p.ATol, RTol: p.RTol, InputsIntact: true,
			Detail: fmt.Sprintf("sample %d (input set %d): work was still running when the timer stopped", idx, set)})
		return errCaught
	}
	if !read {
		return nil
	}
	g.checked[role] = append(g.checked[role], idx)
	c := compareCheck(m.Role, result.PhaseTimedSample, 0, g.compareFlipped(role, set, out), g.base[set], p.ATol, p.RTol)
	c.Sample, c.Set, c.InputsIntact = idx, set, true
	if !c.Pass {
		c.Detail = fmt.Sprintf("sample %d (input set %d): %d of %d elements wrong right after the timer stopped", idx, set, c.Mismatches, c.Elements)
	}
	check(c)
	if !c.Pass {
		return errCaught
	}
	return nil
}

// finitePtr returns &x, or nil when x is NaN or infinite (JSON has no
// encoding for them, and a non-finite error is recorded through nans).
func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
