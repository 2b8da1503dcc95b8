package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/internal/stats"
	"github.com/pitchtank/pitchtank/kernels"
)

// fakeBackend stands in for a GPU where none exists: its "kernels" copy a
// synthetic reference into the output (or corrupt it), and its timer
// returns what the test says. It records the order of timed calls.
type fakeBackend struct {
	ceil    kernels.Ceilings
	reasons uint64
	// timeNs gives the sample time of role on shape for its k-th call
	// (warm-up calls included).
	timeNs func(shape, role, k int) float64
	// wrong[shape][role]: the role's output is off by 1 in one element.
	wrong map[[2]int]bool
	// writesInputs[role]: the role changes its inputs.
	writesInputs map[int]bool
	// calls records every Sample call as (shape, role), sets its input set.
	calls  [][2]int
	sets   []int
	shapes int
}

func newFake(timeNs func(shape, role, k int) float64) *fakeBackend {
	return &fakeBackend{
		ceil:   kernels.Ceilings{TensorFLOPS: 800e12, MemBytesPerSec: 3.35e12, Source: "fake"},
		timeNs: timeNs, wrong: map[[2]int]bool{}, writesInputs: map[int]bool{},
	}
}

func (f *fakeBackend) Device() Device {
	return Device{Kind: "gpu", Name: "Fake H100", UUID: "GPU-fake", ComputeCapability: "9.0", Arch: "sm_90a", SMs: 132, L2Bytes: 50 << 20, DriverVersion: "580.0", CUDADriverVersion: 13000, NVRTCVersion: "13.0"}
}
func (f *fakeBackend) Ceilings() kernels.Ceilings { return f.ceil }
func (f *fakeBackend) CacheMode() (string, int64) { return "cold", 100 << 20 }
func (f *fakeBackend) Timer() string              { return "cuda_events" }
func (f *fakeBackend) Telemetry() (*Telemetry, error) {
	return &Telemetry{At: time.Now().UTC(), SMClockMHz: 1980, MemClockMHz: 2619, TempC: 40, PowerW: 100, PowerLimitW: 700, ClockEventReasons: f.reasons}, nil
}
func (f *fakeBackend) Build(ctx context.Context, role string, v kernels.Variant) (*Build, error) {
	return &Build{Role: role, Name: v.Name, SourceHash: "fakehash", Knobs: map[string]string{}, CompileOptions: []string{}, Kernels: []KernelAttrs{}}, nil
}
func (f *fakeBackend) Reference() *Build {
	return &Build{Role: RoleReference, Name: "reference", Knobs: map[string]string{}, CompileOptions: []string{}, Kernels: []KernelAttrs{}}
}
func (f *fakeBackend) Close() error { return nil }

func (f *fakeBackend) Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error) {
	fs := &fakeShape{f: f, idx: f.shapes, n: s.SumM() * s.N, roles: len(roles), counts: make([]int, len(roles))}
	f.shapes++
	return fs, nil
}

type fakeShape struct {
	f             *fakeBackend
	idx, n, roles int
	ref           [][]float64  // per set
	input         []string     // per set
	outs          [][][]uint16 // per set, per role
	counts        []int
}

func (s *fakeShape) Load(ctx context.Context, set int, seed uint64, checkCPU bool) ([]float64, *RefCheck, error) {
	if set != len(s.ref) {
		return nil, nil, fmt.Errorf("fake: load set %d after %d", set, len(s.ref))
	}
	ref := make([]float64, s.n)
	for i := range ref {
		ref[i] = float64(int((seed+uint64(i))%17) - 8)
	}
	s.ref = append(s.ref, ref)
	s.input = append(s.input, fmt.Sprintf("in-%d", seed))
	s.outs = append(s.outs, make([][]uint16, s.roles))
	var rc *RefCheck
	if checkCPU {
		rc = &RefCheck{Elements: s.n, Tol: refVsCPUTol, Pass: true}
	}
	return ref, rc, nil
}

func (s *fakeShape) exec(role, set int) {
	out := make([]uint16, s.n)
	for i, x := range s.ref[set] {
		out[i] = nvfp4.F16FromFloat64(x)
	}
	if s.f.wrong[[2]int{s.idx, role}] {
		out[0] = nvfp4.F16FromFloat64(s.ref[set][0] + 1)
	}
	if s.f.writesInputs[role] {
		s.input[set] += "!"
	}
	s.outs[set][role] = out
}

func (s *fakeShape) Check(ctx context.Context, role, set int) ([]uint16, string, string, error) {
	h0 := s.input[set]
	s.exec(role, set)
	return s.outs[set][role], h0, s.input[set], nil
}

func (s *fakeShape) Sample(ctx context.Context, role, set int) (float64, error) {
	s.exec(role, set)
	s.f.calls = append(s.f.calls, [2]int{s.idx, role})
	s.f.sets = append(s.f.sets, set)
	t := s.f.timeNs(s.idx, role, s.counts[role])
	s.counts[role]++
	return t, nil
}

func (s *fakeShape) Output(ctx context.Context, role, set int) ([]uint16, error) {
	return s.outs[set][role], nil
}
func (s *fakeShape) Plan(role int) LaunchPlan {
	return LaunchPlan{Mode: "sequential", Launches: []Launch{{Kernel: "fake", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{128, 1, 1}, Group: -1}}}
}
func (s *fakeShape) Close() error { return nil }

// noise is a deterministic pseudo-random factor in [1-a, 1+a].
func noise(shape, role, k int, a float64) float64 {
	x := seedFor(uint64(shape*7+role), k, 0)
	u := float64(x>>11) / float64(1<<53)
	return 1 + a*(2*u-1)
}

// fakeConfig is a paired run over the group GEMM's first n test shapes
// with a stop rule that needs no wall time.
func fakeConfig(n int, paired bool) Config {
	p, err := kernels.LookupProblem("nvfp4_group_gemm")
	if err != nil {
		panic(err)
	}
	v, _ := p.ResolveVariant("baseline")
	cfg := Config{
		Problem: p, Suite: "tests", Shapes: p.Tests[:n], Variant: v, VariantSpec: "baseline", Seed: 7, Mode: "gpu",
		SeedsPerShape: 2, CheckRefOnCPU: true,
		Stop:              stats.StopRule{MinSamples: 10, MinTime: 0, MaxRelSEM: 0.0025, MaxTime: time.Hour, MaxSamples: 400},
		WarmupMinLaunches: 10, MinRounds: DefaultMinRounds, Bootstrap: DefaultBootstrap, MinEffect: DefaultMinEffect,
		MaxTime: time.Minute,
	}
	if paired {
		b := v
		cfg.Baseline, cfg.BaselineSpec = &b, "baseline"
	}
	return cfg
}

func mustFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
