package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/internal/result"
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
	// cheat[role] makes the role's "kernel" game the timer the way the
	// cheat family does on a GPU: "replay" computes once per set and then
	// leaves the output alone, "detached" is never finished when the timer
	// stops, "keyed" replays its first result per set whatever the inputs
	// hold now, "timed_writes" writes its inputs only in timed launches.
	cheat map[int]string
	// calls records every Sample call as (shape, role), sets its input set.
	calls  [][2]int
	sets   []int
	shapes int
}

func newFake(timeNs func(shape, role, k int) float64) *fakeBackend {
	return &fakeBackend{
		ceil:   kernels.Ceilings{TensorFLOPS: 800e12, MemBytesPerSec: 3.35e12, Source: "fake"},
		timeNs: timeNs, wrong: map[[2]int]bool{}, writesInputs: map[int]bool{}, cheat: map[int]string{},
	}
}

func (f *fakeBackend) Device() result.Device {
	return result.Device{Kind: "gpu", Name: "Fake H100", UUID: "GPU-fake", ComputeCapability: "9.0", Arch: "sm_90a", SMs: 132, L2Bytes: 50 << 20, DriverVersion: "580.0", CUDADriverVersion: 13000, NVRTCVersion: "13.0"}
}
func (f *fakeBackend) Ceilings() kernels.Ceilings { return f.ceil }
func (f *fakeBackend) CacheMode() (string, int64) { return "cold", 100 << 20 }
func (f *fakeBackend) Timer() string              { return "cuda_events" }
func (f *fakeBackend) Telemetry() (*result.Telemetry, error) {
	return &result.Telemetry{At: time.Now().UTC(), SMClockMHz: 1980, MemClockMHz: 2619, TempC: 40, PowerW: 100, PowerLimitW: 700, ClockEventReasons: f.reasons}, nil
}
func (f *fakeBackend) Build(ctx context.Context, role string, v kernels.Variant) (*result.Build, error) {
	return &result.Build{Role: role, Name: v.Name, SourceHash: "fakehash", Knobs: map[string]string{}, CompileOptions: []string{}, Kernels: []result.KernelAttrs{}}, nil
}
func (f *fakeBackend) Reference() *result.Build {
	return &result.Build{Role: result.RoleReference, Name: "reference", Knobs: map[string]string{}, CompileOptions: []string{}, Kernels: []result.KernelAttrs{}}
}
func (f *fakeBackend) Close() error { return nil }

func (f *fakeBackend) Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error) {
	fs := &fakeShape{ran: map[[2]int]bool{}, cached: map[[2]int][]uint16{}, f: f, idx: f.shapes, n: s.SumM() * s.N, cols: s.N, roles: len(roles), counts: make([]int, len(roles))}
	f.shapes++
	return fs, nil
}

type fakeShape struct {
	f                   *fakeBackend
	idx, n, cols, roles int
	ref                 [][][]float64 // per set, per role: the exact result of the role's inputs now
	input               [][]string    // per set, per role
	outs                [][][]uint16  // per set, per role
	counts              []int
	ran                 map[[2]int]bool     // (role, set) executed since load
	cached              map[[2]int][]uint16 // the "keyed" cheat's first result
	timedCall           bool
	relocated           int
}

func (s *fakeShape) Load(ctx context.Context, set int, seed uint64, checkCPU bool) ([]float64, *RefCheck, error) {
	if set != len(s.ref) {
		return nil, nil, fmt.Errorf("fake: load set %d after %d", set, len(s.ref))
	}
	s.ref = append(s.ref, nil)
	s.input = append(s.input, nil)
	s.outs = append(s.outs, nil)
	ref := s.load(set, seed)
	var rc *RefCheck
	if checkCPU {
		rc = &RefCheck{Elements: s.n, Tol: refVsCPUTol, Pass: true}
	}
	return ref, rc, nil
}

// load fills set with inputs drawn from seed, one copy per role.
func (s *fakeShape) load(set int, seed uint64) []float64 {
	ref := make([]float64, s.n)
	for i := range ref {
		ref[i] = float64(int((seed+uint64(i))%17) - 8)
	}
	s.ref[set] = make([][]float64, s.roles)
	s.input[set] = make([]string, s.roles)
	s.outs[set] = make([][]uint16, s.roles)
	for r := range s.roles {
		s.ref[set][r] = append([]float64{}, ref...)
		s.input[set][r] = fmt.Sprintf("in-%d", seed)
		s.outs[set][r] = make([]uint16, s.n)
		delete(s.ran, [2]int{r, set})
		delete(s.cached, [2]int{r, set})
	}
	return ref
}

func (s *fakeShape) exec(role, set int) {
	key := [2]int{role, set}
	first := !s.ran[key]
	s.ran[key] = true
	switch s.f.cheat[role] {
	case "replay":
		if !first {
			return
		}
	case "keyed":
		if c, ok := s.cached[key]; ok {
			s.outs[set][role] = append([]uint16{}, c...)
			return
		}
	}
	out := make([]uint16, s.n)
	for i, x := range s.ref[set][role] {
		out[i] = nvfp4.F16FromFloat64(x)
	}
	if s.f.wrong[[2]int{s.idx, role}] {
		out[0] = nvfp4.F16FromFloat64(s.ref[set][role][0] + 1)
	}
	if s.f.writesInputs[role] || (s.f.cheat[role] == "timed_writes" && s.timedCall) {
		s.input[set][role] += "!"
	}
	if s.f.cheat[role] == "keyed" {
		s.cached[key] = append([]uint16{}, out...)
	}
	s.outs[set][role] = out
}

func (s *fakeShape) Check(ctx context.Context, role, set int) ([]uint16, string, string, error) {
	h0 := s.input[set][role]
	s.exec(role, set)
	return append([]uint16{}, s.outs[set][role]...), h0, s.input[set][role], nil
}

func (s *fakeShape) Sample(ctx context.Context, role, set int) (float64, error) {
	s.timedCall = true
	s.exec(role, set)
	s.timedCall = false
	s.f.calls = append(s.f.calls, [2]int{s.idx, role})
	s.f.sets = append(s.f.sets, set)
	t := s.f.timeNs(s.idx, role, s.counts[role])
	s.counts[role]++
	return t, nil
}

func (s *fakeShape) Output(ctx context.Context, role, set int) ([]uint16, error) {
	return append([]uint16{}, s.outs[set][role]...), nil
}

// Scramble: a content change negates output rows (the group GEMM) of the
// role's copy, the fill overwrites its output; the fake's content string
// records the change so that undoing it restores the hash.
func (s *fakeShape) Scramble(ctx context.Context, role, set int, poisonSeed, flipSeed uint64) error {
	if flipSeed != 0 {
		ref := s.ref[set][role]
		for i := range ref {
			if flipBit(flipSeed, i/s.cols) != flipBit(flipSeed, engine.FlipColumnBase+i%s.cols) {
				ref[i] = -ref[i]
			}
		}
		s.input[set][role] = fakeToggle(s.input[set][role], fmt.Sprintf("|%x", flipSeed))
	}
	if poisonSeed != 0 {
		out := s.outs[set][role]
		for i := range out {
			out[i] = uint16(seedFor(poisonSeed, i, 0))
		}
	}
	return nil
}

// fakeToggle appends tag to in, or removes it where in holds it already:
// applying one change twice restores the content.
func fakeToggle(in, tag string) string {
	if i := strings.Index(in, tag); i >= 0 {
		return in[:i] + in[i+len(tag):]
	}
	return in + tag
}

func (s *fakeShape) Probe(ctx context.Context, role, set int, read bool) ([]uint16, bool, error) {
	settled := s.f.cheat[role] != "detached"
	if !read {
		return nil, settled, nil
	}
	out := append([]uint16{}, s.outs[set][role]...)
	if !settled {
		// The detached work has not written anything yet.
		for i := range out {
			out[i] = 0x7E00
		}
	}
	return out, settled, nil
}

func (s *fakeShape) Reload(ctx context.Context, set int, seed uint64) ([]float64, error) {
	return s.load(set, seed), nil
}

// Relocate forgets what the "kernels" remember about the set's buffers
// (a cache keyed on addresses misses after a move).
func (s *fakeShape) Relocate(ctx context.Context, set int) error {
	s.relocated++
	for r := range s.roles {
		delete(s.cached, [2]int{r, set})
	}
	return nil
}

func (s *fakeShape) InputHash(ctx context.Context, role, set int) (string, error) {
	return s.input[set][role], nil
}
func (s *fakeShape) Plan(role int) result.LaunchPlan {
	return result.LaunchPlan{Mode: "sequential", Launches: []result.Launch{{Kernel: "fake", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{128, 1, 1}, Group: -1}},
		Module: fmt.Sprintf("fake?role=%d", role), CubinKey: fmt.Sprintf("fakekey%d", role)}
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
