package engine_test

// Device tests: they need a CUDA device and NVRTC, and skip (saying so)
// where there is none. Build here with
//   CGO_ENABLED=1 go test -c -o bin/engine.test ./internal/engine
// and run on the GPU machine with ./bin/engine.test -test.v.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

var (
	dev      *gpu.Device
	devErr   error
	cacheDir string
)

// PITCHTANK_TEST_CACHE names a cubin cache folder the device tests keep
// (NVRTC 13 takes about 20 s per fused module on the GPU machine, so the
// steps of one device call share their builds); unset, a temporary folder.
func TestMain(m *testing.M) {
	dev, devErr = gpu.Open(0)
	cacheDir = os.Getenv("PITCHTANK_TEST_CACHE")
	keep := cacheDir != ""
	if !keep {
		cacheDir, _ = os.MkdirTemp("", "engine-test-cache")
	}
	code := m.Run()
	if dev != nil {
		_ = dev.Close()
	}
	if !keep {
		_ = os.RemoveAll(cacheDir)
	}
	os.Exit(code)
}

// needDevice skips without a device, unless PITCHTANK_REQUIRE_GPU=1 (set by
// dev/gpucall's device calls): opening the device is itself under test,
// and a run that skipped every test on a GPU machine would exit 0.
func needDevice(t *testing.T) gpu.DeviceInfo {
	t.Helper()
	if dev == nil {
		if os.Getenv("PITCHTANK_REQUIRE_GPU") == "1" {
			t.Fatalf("PITCHTANK_REQUIRE_GPU=1 but the device did not open: %v", devErr)
		}
		t.Skipf("no CUDA device here (%v): the device tests run on the GPU machine", devErr)
	}
	return dev.Info()
}

// isHopper reports whether info is the wgmma family's sm_90a; a compute
// capability 9.0 device named otherwise fails t, since the family's checks
// would skip on it and pass.
func isHopper(t *testing.T, info gpu.DeviceInfo) bool {
	t.Helper()
	if info.CCMajor == 9 && info.CCMinor == 0 && info.Arch != "sm_90a" {
		t.Fatalf("a compute capability 9.0 device (%s) resolved to arch %q, not sm_90a", info.Name, info.Arch)
	}
	return info.Arch == "sm_90a"
}

func limits(info gpu.DeviceInfo) kernels.Limits {
	return kernels.Limits{SMs: info.SMs, MaxSharedOptin: info.MaxSharedPerBlockOptin, Arch: info.Arch}
}

func genInputs(p *kernels.Problem, s kernels.Shape, seed uint64) engine.Inputs {
	if p.Kind == kernels.DualGEMM {
		return engine.Inputs{Dual: nvfp4.GenDualGemm(seed, s.M[0], s.N, s.K)}
	}
	return engine.Inputs{Group: nvfp4.GenGroupGemm(seed, s.M, s.N, s.K)}
}

func cpuRef(p *kernels.Problem, in engine.Inputs) []float64 {
	if p.Kind == kernels.DualGEMM {
		return nvfp4.DualGemmRef(in.Dual.A, in.Dual.B1, in.Dual.B2)
	}
	var out []float64
	for g := range in.Group.A {
		out = append(out, nvfp4.GemmRef(in.Group.A[g], in.Group.B[g])...)
	}
	return out
}

// buildAll compiles variants in parallel (NVRTC needs no device).
func buildAll(t *testing.T, info gpu.DeviceInfo, vs []kernels.Variant) []*engine.Built {
	t.Helper()
	get, stop := buildEach(info, vs)
	defer stop()
	out := make([]*engine.Built, len(vs))
	var errs []error
	for i := range vs {
		b, err := get(i)
		out[i] = b
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("build: %v", err)
	}
	return out
}

// buildEach starts compiling vs in order, as many at once as there are
// processors, and returns get(i), which waits for the i-th, and stop,
// which starts no more. A caller that checks each as it comes runs the
// device while the later ones still compile: the family test's ~300
// modules take NVRTC 13 ~20 s each, about as long over 16 processors as
// their checks take on the device.
func buildEach(info gpu.DeviceInfo, vs []kernels.Variant) (get func(i int) (*engine.Built, error), stop func()) {
	out := make([]*engine.Built, len(vs))
	errs := make([]error, len(vs))
	done := make([]chan struct{}, len(vs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	quit := make(chan struct{})
	var once sync.Once
	sem := make(chan struct{}, runtime.NumCPU())
	go func() {
		for i, v := range vs {
			select {
			case sem <- struct{}{}:
			case <-quit:
				for j := i; j < len(vs); j++ {
					errs[j] = fmt.Errorf("build %s: not started (stopped)", vs[j].Name)
					close(done[j])
				}
				return
			}
			go func() {
				defer func() { <-sem; close(done[i]) }()
				out[i], errs[i] = engine.Build(info, v, cacheDir)
			}()
		}
	}()
	get = func(i int) (*engine.Built, error) {
		<-done[i]
		return out[i], errs[i]
	}
	return get, func() { once.Do(func() { close(quit) }) }
}

func mustVariant(t *testing.T, p *kernels.Problem, spec string) kernels.Variant {
	t.Helper()
	v, err := p.ResolveVariant(spec)
	if err != nil {
		t.Fatalf("%s: resolve %q: %v", p.Name, spec, err)
	}
	return v
}

// TestReferenceAgreesWithCPU: the GPU reference matches the float64 CPU
// reference on every test shape to within double rounding.
func TestReferenceAgreesWithCPU(t *testing.T) {
	info := needDevice(t)
	for _, p := range kernels.Problems() {
		ref := buildAll(t, info, []kernels.Variant{mustVariant(t, p, "reference")})[0]
		for si, s := range p.Tests {
			in := genInputs(p, s, uint64(1000+si))
			want := cpuRef(p, in)
			var got []float64
			err := dev.Do(func(c *gpu.Ctx) error {
				var err error
				got, err = engine.RunReference(c, ref, s, in)
				return err
			})
			if err != nil {
				t.Fatalf("%s %v: GPU reference: %v", p.Name, s, err)
			}
			chk := nvfp4.CompareF64(got, want, 1e-9, 1e-12)
			t.Logf("%s reference %v: max abs %.3g, max rel %.3g, %d elements", p.Name, s, chk.MaxAbsErr, chk.MaxRelErr, chk.Elements)
			if !chk.Pass {
				t.Errorf("%s %v: GPU reference disagrees with the CPU reference: %+v", p.Name, s, chk)
			}
		}
	}
}

// runChecked runs b on s once, with C poisoned first and the inputs hashed
// before and after, and compares with ref.
func runChecked(c *gpu.Ctx, b *engine.Built, p *kernels.Problem, s kernels.Shape, lim kernels.Limits, in engine.Inputs, ref []float64) (nvfp4.Check, error) {
	inst, err := engine.Prepare(c, b, s, lim, in)
	if err != nil {
		return nvfp4.Check{}, err
	}
	defer inst.Close()
	st, err := c.NewStream()
	if err != nil {
		return nvfp4.Check{}, err
	}
	defer st.Destroy()
	h0, err := inst.InputHash()
	if err != nil {
		return nvfp4.Check{}, err
	}
	var chk nvfp4.Check
	// Twice: the second run checks that a run does not depend on state
	// the first left behind (graph replay, reused buffers).
	for rep := 0; rep < 2; rep++ {
		if err := inst.Poison(); err != nil {
			return chk, err
		}
		if err := inst.Run(st); err != nil {
			return chk, err
		}
		if err := st.Synchronize(); err != nil {
			return chk, err
		}
		out, err := inst.Output()
		if err != nil {
			return chk, err
		}
		chk = nvfp4.Compare(out, ref, p.ATol, p.RTol)
		if !chk.Pass {
			return chk, nil
		}
	}
	h1, err := inst.InputHash()
	if err != nil {
		return chk, err
	}
	if h0 != h1 {
		chk.Pass = false
		chk.Note = "the kernel changed its inputs (input hash differs after the run)"
	}
	return chk, nil
}

type shapeCase struct {
	s   kernels.Shape
	in  engine.Inputs
	ref []float64
}

// shapeCases generates inputs for shapes and their GPU reference outputs.
func shapeCases(t *testing.T, info gpu.DeviceInfo, p *kernels.Problem, shapes []kernels.Shape, seed uint64) []shapeCase {
	t.Helper()
	ref := buildAll(t, info, []kernels.Variant{mustVariant(t, p, "reference")})[0]
	cs := make([]shapeCase, len(shapes))
	for i, s := range shapes {
		cs[i] = shapeCase{s: s, in: genInputs(p, s, seed+uint64(i))}
		err := dev.Do(func(c *gpu.Ctx) error {
			var err error
			cs[i].ref, err = engine.RunReference(c, ref, s, cs[i].in)
			return err
		})
		if err != nil {
			t.Fatalf("%s %v: GPU reference: %v", p.Name, s, err)
		}
	}
	return cs
}

func checkVariants(t *testing.T, info gpu.DeviceInfo, p *kernels.Problem, vs []kernels.Variant, cases []shapeCase) {
	t.Helper()
	// Nothing to check is a mistake in the caller's selection (a mistyped
	// PITCHTANK_FAMILIES, a problem without sample specs), not a pass.
	if len(vs) == 0 || len(cases) == 0 {
		t.Fatalf("%s: %d variants on %d shapes: nothing to check", p.Name, len(vs), len(cases))
	}
	// The checks run as the builds come, in order (PITCHTANK_FAMILY_SKIP
	// counts them), while the later ones compile.
	get, stop := buildEach(info, vs)
	defer stop()
	lim := limits(info)
	limit := hangLimitFor()
	for bi := range vs {
		b, err := get(bi)
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		fails := 0
		var worstRel, worstAbs float64
		for _, sc := range cases {
			var chk nvfp4.Check
			// A kernel that never finishes cannot be stopped from the host,
			// and every later launch on the context would wait behind it: say
			// which combination hung (and its place, for PITCHTANK_FAMILY_SKIP)
			// and end the binary, instead of stalling until the caller's cap.
			watchdog := time.AfterFunc(limit, func() {
				fmt.Fprintf(os.Stderr, "HUNG: %s %s (combination %d of %d) on %v did not finish in %v; ending the test binary\n",
					p.Name, vs[bi].Name, bi+1, len(vs), sc.s, limit)
				os.Exit(2)
			})
			err := dev.Do(func(c *gpu.Ctx) error {
				var err error
				chk, err = runChecked(c, b, p, sc.s, lim, sc.in, sc.ref)
				return err
			})
			watchdog.Stop()
			if err != nil {
				t.Fatalf("%s %s %v: %v", p.Name, vs[bi].Name, sc.s, err)
			}
			if !chk.Pass {
				fails++
				t.Errorf("%s %s %v: WRONG: %d of %d mismatches (%d NaN), first bad %d, max abs %.3g, max rel %.3g %s",
					p.Name, vs[bi].Name, sc.s, chk.Mismatches, chk.Elements, chk.NaNs, chk.FirstBad, chk.MaxAbsErr, chk.MaxRelErr, chk.Note)
			}
			worstAbs = math.Max(worstAbs, chk.MaxAbsErr)
			worstRel = math.Max(worstRel, chk.RelL2Err)
		}
		t.Logf("%s %-55s %d/%d shapes correct; worst max abs err %.3g, worst rel L2 err %.3g",
			p.Name, vs[bi].Name, len(cases)-fails, len(cases), worstAbs, worstRel)
	}
}

// hangLimitFor bounds one checked run (launches, copies and the comparison on
// the host): the largest benchmark shape takes well under a second.
// PITCHTANK_HANG_LIMIT (a duration) shortens it for TestHangWatchdog.
func hangLimitFor() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PITCHTANK_HANG_LIMIT")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}

// TestHangWatchdog: a combination whose kernel never finishes ends the test
// binary with a line naming it, instead of stalling the family test until
// the device call's cap (as the hybrid schedule's hang did, 2026-11-26).
// The child process checks the fault family's hanging kernel.
func TestHangWatchdog(t *testing.T) {
	info := needDevice(t)
	if os.Getenv("PITCHTANK_HANG_CHILD") == "1" {
		t.Setenv(kernels.TestKernelsEnv, "1")
		p := kernels.Problems()[0]
		v := mustVariant(t, p, "fault?mode=hang")
		checkVariants(t, info, p, []kernels.Variant{v}, shapeCases(t, info, p, p.Tests[:1], 4000))
		t.Fatal("the hanging kernel returned")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestHangWatchdog$", "-test.v")
	cmd.Env = append(os.Environ(), "PITCHTANK_HANG_CHILD=1", "PITCHTANK_HANG_LIMIT=5s")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("child: %v (want exit status 2 from the watchdog)\n%s", err, out)
	}
	want := fmt.Sprintf("HUNG: %s fault?mode=hang (combination 1 of 1)", kernels.Problems()[0].Name)
	if !strings.Contains(string(out), want) {
		t.Fatalf("child output does not name the hung combination (%q):\n%s", want, out)
	}
}

// sampleSpecs are knob combinations checked on every test and benchmark
// shape: every launch mode, every value of every knob at least once.
var sampleSpecs = map[string][]string{
	"nvfp4_group_gemm": {
		"baseline", "baseline?launch=streams", "baseline?launch=graph", "baseline?launch=grouped",
		"baseline?stages=2", "baseline?stages=3&tile_k=128", "baseline?stages=4&launch=grouped",
		"baseline?tile_m=64", "baseline?tile_n=64&stages=2&launch=graph",
		"baseline?tile_m=64&tile_n=256&stages=3", "baseline?tile_m=64&tile_n=256&tile_k=128&stages=4&launch=grouped",
		"baseline?stages=3", "baseline?stages=4",
		// The baseline's swapped A/B and TMA epilogue (docs/KNOBS.md): each
		// alone and together, on small and wide tiles, with every launch mode.
		"baseline?swap_ab=true", "baseline?epilogue=tma", "baseline?epilogue=tma&swap_ab=true",
		"baseline?tile_m=64&stages=3&launch=grouped&swap_ab=true",
		"baseline?tile_m=64&tile_n=256&tile_k=128&stages=4&launch=streams&epilogue=tma&swap_ab=true",
		"baseline?tile_n=64&stages=2&launch=graph&epilogue=tma",
		// Auto tile sizes (kernels/tiles.go): the benchmark shapes are where
		// the model picks other tiles than on the small test shapes.
		"baseline?tile_m=auto&tile_n=auto", "baseline?tile_m=auto&tile_n=auto&launch=grouped&swap_ab=true",
		"baseline?tile_m=auto&stages=3&launch=streams", "baseline?tile_n=auto&stages=2&launch=graph&epilogue=tma",
		// The fused family: the default, each value of each knob at least once.
		"fused", "fused?grid=tiles", "fused?stages=2&layout=half&blocks_per_sm=3",
		"fused?tile_n=128&tile_m=64&stages=3&layout=half&blocks_per_sm=3&grid=tiles",
		"fused?tile_m=64&blocks_per_sm=1", "fused?tile_n=128&stages=3&blocks_per_sm=1&grid=tiles",
		// The wgmma family (sm_90a): the default and each value of each knob.
		"wgmma", "wgmma?tile_m=64", "wgmma?stages=2", "wgmma?tile_m=64&stages=4", "wgmma?tile_m=64&tile_n=256&stages=4",
		"wgmma?tail_width=fit", "wgmma?tile_m=64&tail_width=fit",
	},
	"nvfp4_dual_gemm": {
		"baseline", "baseline?launch=graph", "baseline?stages=2", "baseline?stages=3&tile_k=128",
		"baseline?stages=4", "baseline?tile_m=128&tile_n=64&stages=2", "baseline?tile_n=64&launch=graph",
		"baseline?swap_ab=true", "baseline?launch=graph&epilogue=tma",
		"baseline?tile_m=128&tile_n=64&stages=2&epilogue=tma&swap_ab=true", "baseline?tile_n=64&stages=4&swap_ab=true",
		"baseline?tile_m=auto&tile_n=auto", "baseline?tile_m=auto&tile_n=auto&launch=graph&swap_ab=true&epilogue=tma",
		"fused", "fused?grid=persistent", "fused?tile_n=128&tile_m=32&stages=4&layout=wide&blocks_per_sm=2",
		"fused?tile_m=32&stages=2&blocks_per_sm=1&grid=persistent", "fused?tile_n=128&layout=wide&blocks_per_sm=1",
		// The wgmma dual GEMM (sm_90a): the default and each tile.
		"wgmma", "wgmma?tile_m=64", "wgmma?tile_m=64&tile_n=128&stages=4",
	},
}

// TestVariantsCorrectAllShapes: the default variants and a sample of knob
// combinations, every launch mode among them, on every test and benchmark
// shape against the GPU reference.
func TestVariantsCorrectAllShapes(t *testing.T) {
	info := needDevice(t)
	for _, p := range kernels.Problems() {
		var vs []kernels.Variant
		for _, spec := range sampleSpecs[p.Name] {
			vs = append(vs, mustVariant(t, p, spec))
		}
		shapes := append(append([]kernels.Shape{}, p.Tests...), p.Benchmarks...)
		cases := shapeCases(t, info, p, shapes, 2000)
		checkVariants(t, info, p, vs, cases)
	}
}

// TestEveryCombinationOnTestShapes: every valid combination of every
// family's declared knob space, every launch mode and grid choice included,
// on the test shapes. PITCHTANK_FAMILIES (e.g. "fused,wgmma") limits it to
// some families, and PITCHTANK_COVER=pairwise checks a subset in which every
// pair of knob values of a family occurs at least once, so one device call
// can finish (NVRTC 13 builds a fused module in about 20 s there).
func TestEveryCombinationOnTestShapes(t *testing.T) {
	info := needDevice(t)
	fams := []string{"baseline", "fused", "wgmma"}
	if f := os.Getenv("PITCHTANK_FAMILIES"); f != "" {
		fams = strings.Split(f, ",")
		t.Logf("families limited to %v by PITCHTANK_FAMILIES", fams)
	}
	for _, p := range kernels.Problems() {
		var vs []kernels.Variant
		for _, fam := range fams {
			if kernels.VariantKnobSpace(p.Name, fam) == nil {
				continue // the family declares no knobs for this problem
			}
			fvs := familyVariants(t, p, fam)
			if os.Getenv("PITCHTANK_COVER") == "pairwise" {
				n := len(fvs)
				fvs = pairCover(p.Name, fam, fvs)
				t.Logf("%s %s: %d of %d combinations cover every pair of knob values", p.Name, fam, len(fvs), n)
			}
			vs = append(vs, fvs...)
		}
		cases := shapeCases(t, info, p, p.Tests, 3000)
		checkVariants(t, info, p, vs, cases)
	}
}

// TestEdgeCases: M=1, odd M, N=64, K=128 and 16 groups, directly.
func TestEdgeCases(t *testing.T) {
	info := needDevice(t)
	g, _ := kernels.LookupProblem("nvfp4_group_gemm")
	d, _ := kernels.LookupProblem("nvfp4_dual_gemm")
	sixteen := make([]int, 16)
	for i := range sixteen {
		sixteen[i] = 1 + 13*i
	}
	for _, tc := range []struct {
		p      *kernels.Problem
		shapes []kernels.Shape
	}{
		{g, []kernels.Shape{{M: []int{1}, N: 64, K: 128}, {M: []int{7, 33}, N: 64, K: 128}, {M: sixteen, N: 128, K: 384}, {M: []int{1}, N: 448, K: 2176}}},
		{d, []kernels.Shape{{M: []int{1}, N: 64, K: 128}, {M: []int{33}, N: 64, K: 128}, {M: []int{7}, N: 448, K: 2176}}},
	} {
		var vs []kernels.Variant
		for _, spec := range sampleSpecs[tc.p.Name] {
			vs = append(vs, mustVariant(t, tc.p, spec))
		}
		cases := shapeCases(t, info, tc.p, tc.shapes, 4000)
		for _, sc := range cases {
			if err := tc.p.CheckShape(sc.s); err != nil {
				t.Fatal(err)
			}
			want := cpuRef(tc.p, sc.in)
			if chk := nvfp4.CompareF64(sc.ref, want, 1e-9, 1e-12); !chk.Pass {
				t.Errorf("%s %v: GPU reference disagrees with CPU: %+v", tc.p.Name, sc.s, chk)
			}
		}
		checkVariants(t, info, tc.p, vs, cases)
	}
}

// TestResourceReport logs the compiler's and the driver's resource figures
// of the default variants (registers, shared, local/spill bytes) and a
// rough event timing of each launch mode on the benchmark shapes. The
// timing is informational (internal/bench measures properly).
func TestResourceReport(t *testing.T) {
	info := needDevice(t)
	t.Logf("device %s sm_%d%d, %d SMs, L2 %d B, smem opt-in %d B, driver %s, CUDA %d, NVRTC %s",
		info.Name, info.CCMajor, info.CCMinor, info.SMs, info.L2Bytes, info.MaxSharedPerBlockOptin, info.DriverVersion, info.CUDADriverVersion, info.NVRTCVersion)
	for _, p := range kernels.Problems() {
		var specs []string
		for _, spec := range sampleSpecs[p.Name] {
			if spec == "baseline" || strings.HasPrefix(spec, "baseline?launch=") || spec == "fused" {
				specs = append(specs, spec)
			}
		}
		var vs []kernels.Variant
		for _, s := range specs {
			vs = append(vs, mustVariant(t, p, s))
		}
		built := buildAll(t, info, vs)
		t.Logf("%s baseline: NVRTC options %v\n%s", p.Name, built[0].Options, built[0].PtxasLog)
		for si, s := range p.Benchmarks {
			in := genInputs(p, s, uint64(5000+si))
			for bi, b := range built {
				var us float64
				err := dev.Do(func(c *gpu.Ctx) error {
					inst, err := engine.Prepare(c, b, s, limits(info), in)
					if err != nil {
						return err
					}
					defer inst.Close()
					st, err := c.NewStream()
					if err != nil {
						return err
					}
					defer st.Destroy()
					e0, _ := c.NewEvent()
					e1, _ := c.NewEvent()
					defer e0.Destroy()
					defer e1.Destroy()
					if err := inst.Run(st); err != nil { // warm-up
						return err
					}
					const reps = 20
					if err := e0.Record(st); err != nil {
						return err
					}
					for r := 0; r < reps; r++ {
						if err := inst.Run(st); err != nil {
							return err
						}
					}
					if err := e1.Record(st); err != nil {
						return err
					}
					if err := e1.Synchronize(); err != nil {
						return err
					}
					ms, err := gpu.ElapsedMs(e0, e1)
					us = float64(ms) * 1000 / reps
					return err
				})
				if err != nil {
					t.Fatalf("%s %s %v: %v", p.Name, vs[bi].Name, s, err)
				}
				floor, bound := kernels.Floor(p, s, kernels.CeilingsFor(info.Name, info.CCMajor, info.CCMinor))
				t.Logf("%s %-28s %-50v %9.1f us (warm L2, mean of 20 back-to-back); floor %.1f us (%s), %.1f%% of floor",
					p.Name, vs[bi].Name, s, us, floor*1e6, bound, 100*floor*1e6/us)
			}
		}
		for bi, b := range built {
			if vs[bi].Name != "baseline" && vs[bi].Name != "fused" {
				continue
			}
			if vs[bi].Name == "fused" {
				t.Logf("%s fused: NVRTC options %v\n%s", p.Name, b.Options, b.PtxasLog)
			}
			for name, a := range b.Attrs {
				t.Logf("%s %s %s: %d registers, %d B static shared, %d B local, max threads %d, max dynamic shared %d",
					p.Name, vs[bi].Name, name, a.NumRegs, a.SharedStatic, a.LocalBytes, a.MaxThreads, a.MaxDynamicShared)
				if vs[bi].Name == "fused" {
					t.Logf("%s fused %s: %d resident blocks/SM", p.Name, name,
						engine.ResidentBlocks(a, kernels.FusedThreads(p.Name, vs[bi].Knobs), kernels.FusedSharedBytes(p.Name, vs[bi].Knobs), info.MaxSharedPerSM))
				}
			}
		}
	}
}

// TestFusedPersistentGrid: a persistent fused launch gets the grid the
// loaded kernel can keep resident, and a grid of one block (every block
// walking many tiles) is still correct.
func TestFusedPersistentGrid(t *testing.T) {
	info := needDevice(t)
	p, _ := kernels.LookupProblem("nvfp4_group_gemm")
	s := p.Benchmarks[2]
	built := buildAll(t, info, []kernels.Variant{mustVariant(t, p, "fused")})[0]
	cases := shapeCases(t, info, p, []kernels.Shape{s}, 7000)
	err := dev.Do(func(c *gpu.Ctx) error {
		inst, err := engine.Prepare(c, built, s, limits(info), cases[0].in)
		if err != nil {
			return err
		}
		defer inst.Close()
		l := inst.Plan().Launches[0]
		a := built.Attrs["fast_group_gemm"]
		occ := engine.ResidentBlocks(a, int(l.Block[0]), int(l.SharedBytes), info.MaxSharedPerSM)
		t.Logf("fused on %v: %d tiles, grid %d, %d registers -> %d resident blocks/SM", s, l.Tiles, l.Grid[0], a.NumRegs, occ)
		if want := min(l.Tiles, info.SMs*min(occ, 2)); int(l.Grid[0]) != want {
			t.Errorf("grid %d, want %d", l.Grid[0], want)
		}
		// One block walks every tile.
		inst.Plan().Launches[0].Grid[0] = 1
		if err := inst.Poison(); err != nil {
			return err
		}
		if err := inst.Run(nil); err != nil {
			return err
		}
		out, err := inst.Output()
		if err != nil {
			return err
		}
		if chk := nvfp4.Compare(out, cases[0].ref, p.ATol, p.RTol); !chk.Pass {
			t.Errorf("grid 1: wrong: %+v", chk)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUploadFreshInputs: an instance given fresh inputs of the same shape
// (the bench's ranked mode) computes on them, and its input hash follows.
func TestUploadFreshInputs(t *testing.T) {
	info := needDevice(t)
	for _, p := range kernels.Problems() {
		for _, spec := range []string{"baseline?launch=graph", "fused"} { // a captured graph and the fused table must read the re-uploaded buffers
			s := p.Benchmarks[len(p.Benchmarks)-1]
			built := buildAll(t, info, []kernels.Variant{mustVariant(t, p, spec), mustVariant(t, p, "reference")})
			cases := shapeCases(t, info, p, []kernels.Shape{s, s}, 6000) // same shape, two seeds
			err := dev.Do(func(c *gpu.Ctx) error {
				inst, err := engine.Prepare(c, built[0], s, limits(info), cases[0].in)
				if err != nil {
					return err
				}
				defer inst.Close()
				h0, err := inst.InputHash()
				if err != nil {
					return err
				}
				for round, sc := range []shapeCase{cases[0], cases[1], cases[0]} {
					if round > 0 {
						if err := inst.Upload(sc.in); err != nil {
							return err
						}
					}
					h, err := inst.InputHash()
					if err != nil {
						return err
					}
					if (round == 1) == (h == h0) {
						t.Errorf("%s round %d: input hash did not follow the upload", p.Name, round)
					}
					if err := inst.Poison(); err != nil {
						return err
					}
					if err := inst.Run(nil); err != nil {
						return err
					}
					out, err := inst.Output()
					if err != nil {
						return err
					}
					if chk := nvfp4.Compare(out, sc.ref, p.ATol, p.RTol); !chk.Pass {
						t.Errorf("%s %s round %d: wrong after upload: %+v", p.Name, spec, round, chk)
					}
				}
				// Wrong-shape inputs are refused and change nothing.
				if err := inst.Upload(genInputs(p, kernels.Shape{M: []int{1}, N: 64, K: 128}, 1)); err == nil {
					t.Errorf("%s: upload of another shape accepted", p.Name)
				}
				h, err := inst.InputHash()
				if err == nil && h != h0 {
					t.Errorf("%s: a refused upload changed the inputs", p.Name)
				}
				return err
			})
			if err != nil {
				t.Fatalf("%s %s: %v", p.Name, spec, err)
			}
		}
	}
}

// newFusedSpecs are the fused group kernel's split-K and TMA-epilogue
// variants (docs/KNOBS.md): every new value, on the default tile and on
// the other tile shapes, alone and combined.
var newFusedSpecs = []string{
	"fused?split_k=2", "fused?split_k=4", "fused?split_k=auto", "fused?epilogue=tma",
	"fused?split_k=4&epilogue=tma", "fused?split_k=auto&epilogue=tma",
	"fused?tile_n=128&tile_m=64&stages=3&layout=half&blocks_per_sm=3&grid=tiles&split_k=2",
	"fused?tile_m=64&blocks_per_sm=1&split_k=4&epilogue=tma",
	"fused?tile_n=128&stages=2&layout=half&blocks_per_sm=3&split_k=2&epilogue=tma",
}

// TestFusedSplitKAndTMA: the split-K and TMA-epilogue variants on every
// test, benchmark and edge shape (K=128 with 4 partitions leaves three of
// them empty; their zero partial sums must still be written), with C and
// the workspace poisoned before each of two runs; and a split-K result is
// bit-identical from run to run (the reduction adds in a fixed order).
func TestFusedSplitKAndTMA(t *testing.T) {
	info := needDevice(t)
	p, _ := kernels.LookupProblem("nvfp4_group_gemm")
	sixteen := make([]int, 16)
	for i := range sixteen {
		sixteen[i] = 1 + 13*i
	}
	shapes := append(append([]kernels.Shape{}, p.Tests...), p.Benchmarks...)
	shapes = append(shapes, kernels.Shape{M: []int{1}, N: 64, K: 128}, kernels.Shape{M: []int{7, 33}, N: 64, K: 128},
		kernels.Shape{M: sixteen, N: 128, K: 384}, kernels.Shape{M: []int{1}, N: 448, K: 2176}, kernels.Shape{M: []int{5}, N: 256, K: 16384})
	var vs []kernels.Variant
	for _, spec := range newFusedSpecs {
		vs = append(vs, mustVariant(t, p, spec))
	}
	cases := shapeCases(t, info, p, shapes, 8000)
	lim := limits(info)
	for _, sc := range cases {
		v := mustVariant(t, p, "fused?split_k=auto")
		pl, err := v.Plan(sc.s, lim)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("split_k=auto on %v: %d partitions, %d launches, workspace %d B", sc.s, pl.SplitK, len(pl.Launches), pl.WorkspaceBytes)
	}
	checkVariants(t, info, p, vs, cases)

	built := buildAll(t, info, []kernels.Variant{mustVariant(t, p, "fused?split_k=4")})[0]
	sc := cases[len(p.Tests)+2] // benchmark shape 3
	err := dev.Do(func(c *gpu.Ctx) error {
		inst, err := engine.Prepare(c, built, sc.s, lim, sc.in)
		if err != nil {
			return err
		}
		defer inst.Close()
		var first []uint16
		for rep := 0; rep < 3; rep++ {
			if err := inst.Poison(); err != nil {
				return err
			}
			if err := inst.Run(nil); err != nil {
				return err
			}
			out, err := inst.Output()
			if err != nil {
				return err
			}
			if rep == 0 {
				first = out
				continue
			}
			for i := range out {
				if out[i] != first[i] {
					t.Errorf("split_k=4 run %d differs from run 0 at element %d: %#04x vs %#04x", rep, i, out[i], first[i])
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBaselineNewKnobs: every combination of the baseline's declared space
// that uses a value added for issue 5 (swap_ab=true, epilogue=tma), every
// launch mode included, and every auto tile setting (tile_m=auto,
// tile_n=auto) with each swap_ab, epilogue and launch value at the default
// tile_k and stages, on the test shapes and the edge cases (M=1, odd M,
// N=64, K=128, 16 groups, N=448 not a multiple of the tile), with C
// poisoned before each of two runs. An auto variant loads the module of
// the candidate its shape resolves to (logged). TestEveryCombinationOnTestShapes
// covers all of these among the whole space of both families; this one is
// the narrower run a device call can afford.
func TestBaselineNewKnobs(t *testing.T) {
	info := needDevice(t)
	sixteen := make([]int, 16)
	for i := range sixteen {
		sixteen[i] = 1 + 13*i
	}
	edges := map[string][]kernels.Shape{
		"nvfp4_group_gemm": {{M: []int{1}, N: 64, K: 128}, {M: []int{7, 33}, N: 64, K: 128}, {M: sixteen, N: 128, K: 384}, {M: []int{1}, N: 448, K: 2176}},
		"nvfp4_dual_gemm":  {{M: []int{1}, N: 64, K: 128}, {M: []int{33}, N: 64, K: 128}, {M: []int{7}, N: 448, K: 2176}},
	}
	// The dual GEMM first: its part is the smaller (a cut-short run still
	// covers one problem whole).
	probs := slices.Clone(kernels.Problems()) // a copy: Problems() is shared
	slices.Reverse(probs)
	for _, p := range probs {
		base := mustVariant(t, p, "baseline")
		var vs []kernels.Variant
		nAuto := 0
		for _, k := range p.VariantCombinations("baseline") {
			auto := k.TileM == kernels.TileAuto || k.TileN == kernels.TileAuto
			switch {
			case auto && (k.TileK != base.Knobs.TileK || k.Stages != base.Knobs.Stages):
				continue
			case auto:
				nAuto++
			case !k.SwapAB && k.Epilogue != "tma":
				continue
			}
			v, err := p.WithKnobs(base, k)
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		// Sequential launches first, then the grouped kernel, then the
		// host-side variations of the same module (graph, streams): a device
		// call that stops this test early loses the most redundant part.
		rank := map[string]int{"sequential": 0, "grouped": 1, "graph": 2, "streams": 3}
		sort.SliceStable(vs, func(a, b int) bool { return rank[vs[a].Knobs.Launch] < rank[vs[b].Knobs.Launch] })
		t.Logf("%s: %d baseline combinations with swap_ab=true or epilogue=tma, %d with auto tiles", p.Name, len(vs)-nAuto, nAuto)
		shapes := append(append([]kernels.Shape{}, p.Tests...), edges[p.Name]...)
		lim := limits(info)
		for _, spec := range []string{"baseline?tile_m=auto&tile_n=auto", "baseline?tile_m=auto&tile_n=auto&launch=grouped"} {
			v, err := p.ResolveVariant(spec)
			if err != nil {
				continue // the dual GEMM has no grouped launch
			}
			for _, s := range append(append([]kernels.Shape{}, shapes...), p.Benchmarks...) {
				cv, err := v.Resolve(s, lim)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s on %v runs as %s", p.Name, spec, s, cv.Name)
			}
		}
		// Compile each distinct module once first (launch modes share a
		// module, auto variants share their candidates'): checkVariants
		// builds its variants in parallel and would compile equal modules
		// side by side; afterwards they are cubin-cache hits.
		distinct := map[string]kernels.Variant{}
		for _, v := range vs {
			for _, c := range v.Candidates() {
				distinct[c.SourceFile+fmt.Sprint(c.Defines())] = c
			}
		}
		var mods []kernels.Variant
		for _, c := range distinct {
			mods = append(mods, c)
		}
		t0 := time.Now()
		buildAll(t, info, mods)
		t.Logf("%s: %d distinct modules compiled in %.0f s", p.Name, len(mods), time.Since(t0).Seconds())
		cases := shapeCases(t, info, p, shapes, 9000)
		checkVariants(t, info, p, vs, cases)
	}
}

// TestSampleSpecsResolve runs without a device: every sample spec the
// device tests use resolves, so a device call never dies on a typo.
func TestSampleSpecsResolve(t *testing.T) {
	for _, p := range kernels.Problems() {
		// Every problem has specs: the device tests that walk them
		// (TestVariantsCorrectAllShapes, TestEdgeCases, TestResourceReport)
		// would otherwise check nothing for it and pass.
		if len(sampleSpecs[p.Name]) == 0 {
			t.Errorf("%s has no sample specs", p.Name)
		}
		for _, spec := range sampleSpecs[p.Name] {
			if _, err := p.ResolveVariant(spec); err != nil {
				t.Errorf("%s %s: %v", p.Name, spec, err)
			}
		}
	}
}

// pairCover picks, greedily in enumeration order, combinations of family fam
// until every pair of knob values that occurs in some valid combination
// occurs in a picked one. A variant's knob values are its family's defaults
// overridden by its canonical name's query.
func pairCover(problem, fam string, vs []kernels.Variant) []kernels.Variant {
	space := kernels.VariantKnobSpace(problem, fam)
	assign := func(v kernels.Variant) []string {
		vals := map[string]string{}
		for _, ks := range space {
			vals[ks.Key] = ks.Default
		}
		if _, q, ok := strings.Cut(v.Name, "?"); ok {
			for _, kv := range strings.Split(q, "&") {
				k, val, _ := strings.Cut(kv, "=")
				vals[k] = val
			}
		}
		out := make([]string, len(space))
		for i, ks := range space {
			out[i] = ks.Key + "=" + vals[ks.Key]
		}
		return out
	}
	pairs := func(a []string) []string {
		var ps []string
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				ps = append(ps, a[i]+"&"+a[j])
			}
		}
		return ps
	}
	seen := map[string]bool{}
	var out []kernels.Variant
	for _, v := range vs {
		added := false
		for _, pr := range pairs(assign(v)) {
			if !seen[pr] {
				seen[pr], added = true, true
			}
		}
		if added {
			out = append(out, v)
		}
	}
	return out
}

// TestModuleNamesWhatRan: an instance of a variant with auto tile sizes
// names the module it loaded (Instance.Module), which is the candidate its
// shape resolves to, with that candidate's cache key; Built.ModuleFor
// names the same without preparing, and the loaded module's resources sit
// under that name in Attrs. Over the benchmark and test shapes the auto
// baseline runs more than one module (else the names could not differ),
// and a fixed variant names itself and its one module.
func TestModuleNamesWhatRan(t *testing.T) {
	info := needDevice(t)
	lim := limits(info)
	for _, p := range kernels.Problems() {
		auto, fixed := mustVariant(t, p, "baseline?tile_m=auto&tile_n=auto"), mustVariant(t, p, "baseline")
		built := buildAll(t, info, []kernels.Variant{auto, fixed})
		seen := map[string]bool{}
		for si, s := range append(append([]kernels.Shape{}, p.Tests...), p.Benchmarks...) {
			cv, err := auto.Resolve(s, lim)
			if err != nil {
				t.Fatal(err)
			}
			for bi, b := range built {
				wantName, wantKey := cv.Name, ""
				if bi == 0 {
					c, ok := b.Candidates[cv.Name]
					if !ok {
						t.Fatalf("%s: %s resolves to %s on %v, not among its candidates", p.Name, auto.Name, cv.Name, s)
					}
					wantKey = c.Key
				} else {
					wantName, wantKey = fixed.Name, b.Compiled.Key
				}
				name, key, err := b.ModuleFor(s, lim)
				if err != nil || name != wantName || key != wantKey {
					t.Fatalf("%s %s on %v: ModuleFor = %q, %q, %v; want %q, %q", p.Name, b.Variant.Name, s, name, key, err, wantName, wantKey)
				}
				err = dev.Do(func(c *gpu.Ctx) error {
					inst, err := engine.Prepare(c, b, s, lim, genInputs(p, s, uint64(7100+si)))
					if err != nil {
						return err
					}
					defer inst.Close()
					name, key = inst.Module()
					return nil
				})
				if err != nil {
					t.Fatalf("%s %s on %v: %v", p.Name, b.Variant.Name, s, err)
				}
				if name != wantName || key != wantKey {
					t.Fatalf("%s %s on %v: the instance loaded %q (%q), want %q (%q)", p.Name, b.Variant.Name, s, name, key, wantName, wantKey)
				}
				if bi == 0 {
					seen[name] = true
					found := false
					for k := range b.Attrs {
						found = found || strings.HasPrefix(k, name+" ")
					}
					if !found {
						t.Errorf("%s %s on %v: no resources recorded under %q", p.Name, b.Variant.Name, s, name)
					}
				}
			}
		}
		t.Logf("%s: %s ran %d modules over %d shapes", p.Name, auto.Name, len(seen), len(p.Tests)+len(p.Benchmarks))
		if len(seen) < 2 {
			t.Errorf("%s: %s ran one module on every shape (%v): the test cannot tell modules apart", p.Name, auto.Name, seen)
		}
	}
}
