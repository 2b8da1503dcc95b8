package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/splitmix"
	"github.com/pitchtank/pitchtank/kernels"
)

// CPUVariantName is the only variant the CPU device runs: nvfp4's float64
// reference (parallel over all cores) rounded to fp16.
const CPUVariantName = "reference"

// CPUBackend runs the CPU reference, timed with the wall clock, so the whole
// flow (protocol, result document) works on a machine without a GPU. There
// is no L2 to flush on purpose: the CPU has no equivalent of cold-L2 launch
// semantics worth modelling, so its cache mode is "warm".
type CPUBackend struct {
	problem *kernels.Problem
	device  result.Device
}

// NewCPUBackend describes this machine's CPU.
func NewCPUBackend(p *kernels.Problem) *CPUBackend {
	return &CPUBackend{problem: p, device: result.Device{
		Kind: "cpu", Ordinal: -1, Name: cpuModel(), Arch: "cpu",
		SMs: runtime.GOMAXPROCS(0), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		DriverVersion: runtime.Version(),
	}}
}

// cpuModel reads the CPU's model name, falling back to the architecture.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return "cpu: " + strings.TrimSpace(v)
			}
		}
	}
	return "cpu: " + runtime.GOARCH
}

func (b *CPUBackend) Device() result.Device { return b.device }

func (b *CPUBackend) Ceilings() kernels.Ceilings {
	c := kernels.CeilingsFor(b.device.Name, 0, 0)
	c.Source = "CPU mode, no CPU speed of light: " + c.Source
	return c
}

func (b *CPUBackend) CacheMode() (string, int64) { return "warm", 0 }
func (b *CPUBackend) Timer() string              { return "wall_clock" }

func (b *CPUBackend) Telemetry() (*result.Telemetry, error) { return nil, nil }
func (b *CPUBackend) Reference() *result.Build              { return nil }
func (b *CPUBackend) Close() error                          { return nil }

// Build records the CPU reference as the variant; there is nothing to compile.
func (b *CPUBackend) Build(ctx context.Context, role string, v kernels.Variant) (*result.Build, error) {
	if !v.Reference {
		return nil, fmt.Errorf("the CPU device runs only the %q variant (the CPU reference), not %q", CPUVariantName, v.Name)
	}
	src := "github.com/pitchtank/pitchtank/internal/nvfp4.GemmRef+DualGemmRef float64, rounded to fp16 (" + runtime.Version() + ")"
	h := sha256.Sum256([]byte(src))
	return &result.Build{
		Role: role, Name: v.Name, Title: "CPU reference (float64, rounded to fp16)", SourceFile: "internal/nvfp4/ref.go",
		SourceHash: hex.EncodeToString(h[:]), Knobs: map[string]string{"threads": fmt.Sprint(runtime.GOMAXPROCS(0))},
		Arch: "cpu", CompileOptions: []string{}, Kernels: []result.KernelAttrs{},
	}, nil
}

// Shape makes one output buffer per role over shared inputs.
func (b *CPUBackend) Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error) {
	return &cpuShape{problem: b.problem, shape: s, roles: len(roles)}, nil
}

type cpuShape struct {
	problem *kernels.Problem
	shape   kernels.Shape
	roles   int
	in      [][]inputs   // per input set, per role: each role its own copy, as on a GPU
	outs    [][][]uint16 // per input set, per role
}

func (r *cpuShape) roleInputs(role, set int) inputs { return r.in[set][role] }

// clone copies every operand of in.
func (in inputs) clone() inputs {
	cp := func(o *nvfp4.Operand) *nvfp4.Operand {
		return &nvfp4.Operand{Rows: o.Rows, K: o.K, Data: append([]byte{}, o.Data...), Scales: append([]byte{}, o.Scales...)}
	}
	if in.dual != nil {
		d := *in.dual
		d.A, d.B1, d.B2 = cp(d.A), cp(d.B1), cp(d.B2)
		return inputs{dual: &d}
	}
	g := *in.group
	g.A, g.B = make([]*nvfp4.Operand, len(in.group.A)), make([]*nvfp4.Operand, len(in.group.B))
	for i := range g.A {
		g.A[i], g.B[i] = cp(in.group.A[i]), cp(in.group.B[i])
	}
	return inputs{group: &g}
}

func (r *cpuShape) Load(ctx context.Context, set int, seed uint64, checkCPU bool) ([]float64, *RefCheck, error) {
	if set < 0 || set > len(r.in) {
		return nil, nil, fmt.Errorf("cpu: input set %d after %d sets", set, len(r.in))
	}
	in := genInputs(r.problem, r.shape, seed)
	copies := make([]inputs, r.roles)
	for i := range copies {
		copies[i] = in.clone()
	}
	if set == len(r.in) {
		r.in = append(r.in, copies)
		outs := make([][]uint16, r.roles)
		for i := range outs {
			outs[i] = make([]uint16, outputElements(r.shape))
		}
		r.outs = append(r.outs, outs)
	} else {
		r.in[set] = copies
	}
	// The reference is computed apart from the runs it checks: a run that
	// left its output unwritten or wrote the wrong element fails.
	return cpuReference(in), nil, nil
}

func (r *cpuShape) exec(role, set int) error {
	if set < 0 || set >= len(r.in) {
		return fmt.Errorf("cpu: input set %d was not loaded", set)
	}
	ref := cpuReference(r.in[set][role])
	out := r.outs[set][role]
	if len(ref) != len(out) {
		return fmt.Errorf("cpu: reference has %d elements, output %d", len(ref), len(out))
	}
	for i, x := range ref {
		out[i] = nvfp4.F16FromFloat64(x)
	}
	return nil
}

func (r *cpuShape) Check(ctx context.Context, role, set int) ([]uint16, string, string, error) {
	if set < 0 || set >= len(r.in) {
		return nil, "", "", fmt.Errorf("cpu: input set %d was not loaded", set)
	}
	out := r.outs[set][role]
	h0 := r.in[set][role].hash()
	if err := r.exec(role, set); err != nil {
		return nil, "", "", err
	}
	return append([]uint16{}, out...), h0, r.in[set][role].hash(), nil
}

func (r *cpuShape) Sample(ctx context.Context, role, set int) (float64, error) {
	t0 := time.Now()
	if err := r.exec(role, set); err != nil {
		return 0, err
	}
	return float64(time.Since(t0).Nanoseconds()), nil
}

func (r *cpuShape) Output(ctx context.Context, role, set int) ([]uint16, error) {
	if set < 0 || set >= len(r.in) {
		return nil, fmt.Errorf("cpu: input set %d was not loaded", set)
	}
	return append([]uint16{}, r.outs[set][role]...), nil
}

func (r *cpuShape) Plan(role int) result.LaunchPlan {
	pl := result.LaunchPlan{Mode: "cpu", Streams: 0, Launches: []result.Launch{}}
	threads := uint32(runtime.GOMAXPROCS(0))
	for g := range r.shape.M {
		name := "nvfp4.GemmRef"
		if r.problem.Kind == kernels.DualGEMM {
			name = "nvfp4.DualGemmRef"
		}
		pl.Launches = append(pl.Launches, result.Launch{Kernel: name, Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{threads, 1, 1}, Group: g})
	}
	return pl
}

func (r *cpuShape) Close() error { return nil }

// Scramble does on the host what the GPU harness does on the device, to
// the role's own copy of the inputs.
func (r *cpuShape) Scramble(ctx context.Context, role, set int, poisonSeed, flipSeed uint64) error {
	if set < 0 || set >= len(r.in) {
		return fmt.Errorf("cpu: input set %d was not loaded", set)
	}
	if flipSeed != 0 {
		in := r.roleInputs(role, set)
		if in.dual != nil {
			flipOperandRows(in.dual.B2, flipSeed, 0)
		} else {
			base := 0
			for g, a := range in.group.A {
				flipOperandRows(a, flipSeed, base)
				flipOperandRows(in.group.B[g], flipSeed, engine.FlipColumnBase)
				base += a.Rows
			}
		}
	}
	if poisonSeed != 0 {
		rng := splitmix.New(poisonSeed)
		out := r.outs[set][role]
		for i := range out {
			out[i] = uint16(rng.Uint64())
		}
	}
	return nil
}

// flipOperandRows negates the rows flipBit selects (both FP4 sign bits of
// every byte), rows numbered from base.
func flipOperandRows(o *nvfp4.Operand, seed uint64, base int) {
	rb := o.K / 2
	for r := range o.Rows {
		if flipBit(seed, base+r) {
			for i := r * rb; i < (r+1)*rb; i++ {
				o.Data[i] ^= 0x88
			}
		}
	}
}

func (r *cpuShape) Probe(ctx context.Context, role, set int, read bool) ([]uint16, bool, error) {
	if !read {
		return nil, true, nil
	}
	out, err := r.Output(ctx, role, set)
	return out, true, err
}

func (r *cpuShape) Reload(ctx context.Context, set int, seed uint64) ([]float64, error) {
	if set < 0 || set >= len(r.in) {
		return nil, fmt.Errorf("cpu: reload input set %d of %d", set, len(r.in))
	}
	ref, _, err := r.Load(ctx, set, seed, false)
	return ref, err
}

// Relocate copies every role's inputs of set (the CPU has no addresses a
// kernel could key on, but the copy keeps the contract).
func (r *cpuShape) Relocate(ctx context.Context, set int) error {
	if set < 0 || set >= len(r.in) {
		return fmt.Errorf("cpu: relocate input set %d of %d", set, len(r.in))
	}
	for role, in := range r.in[set] {
		r.in[set][role] = in.clone()
	}
	return nil
}

func (r *cpuShape) InputHash(ctx context.Context, role, set int) (string, error) {
	if set < 0 || set >= len(r.in) {
		return "", fmt.Errorf("cpu: input set %d was not loaded", set)
	}
	return r.roleInputs(role, set).hash(), nil
}
