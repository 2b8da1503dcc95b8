package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/kernels"
)

// refVsCPUTol bounds the GPU reference's distance to the CPU reference.
// Both sum exact products in float64 (nvfp4.GemmRef explains why every
// product and partial sum is exact for the generator's inputs), so they
// agree to float64 rounding at worst; anything past 1e-9 relative is a bug.
const refVsCPUTol = 1e-9

// GPUBackend runs variants through the engine on one CUDA device: CUDA
// events on a non-default stream, the L2 flushed by a memset of twice its
// size on the same stream before every sample, outside the event pair.
type GPUBackend struct {
	problem  *kernels.Problem
	dev      *gpu.Device
	info     gpu.DeviceInfo
	cacheDir string
	lim      kernels.Limits

	builds map[string]*engine.Built // by role
	ref    *engine.Built
	refRec *result.Build
	// harness is the guard's device code (engine.Harness), loaded once.
	harness *engine.LoadedHarness

	stream     *gpu.Stream
	start, end *gpu.Event
	flush      gpu.DevPtr
	flushBytes int64
	// gate holds the timing stream until a sample's launches are all
	// enqueued (gpu.Gate); nil where the driver cannot, and Timer says so.
	gate *gpu.Gate
}

// OpenGPU opens CUDA device ordinal and prepares the timing stream, the
// event pair, the flush buffer and, unless ungated (web bench --ungated),
// the gate: under a profiler that serializes launches (ncu) a gated stream
// would wait for the host to open it while the host waits inside the
// profiled launch. A machine without a driver returns the gpu package's
// *UnavailableError naming what is missing.
func OpenGPU(ordinal int, p *kernels.Problem, cacheDir string, ungated bool) (*GPUBackend, error) {
	d, err := gpu.Open(ordinal)
	if err != nil {
		return nil, err
	}
	info := d.Info()
	b := &GPUBackend{
		problem: p, dev: d, info: info, cacheDir: cacheDir, builds: map[string]*engine.Built{},
		lim:        kernels.Limits{SMs: info.SMs, MaxSharedOptin: info.MaxSharedPerBlockOptin, Arch: info.Arch},
		flushBytes: 2 * info.L2Bytes,
	}
	if b.flushBytes <= 0 {
		d.Close()
		return nil, fmt.Errorf("device %d reports an L2 size of %d bytes: cannot size the cache flush", ordinal, info.L2Bytes)
	}
	err = d.Do(func(c *gpu.Ctx) error {
		var err error
		if b.stream, err = c.NewStream(); err != nil {
			return fmt.Errorf("create timing stream: %w", err)
		}
		if b.start, err = c.NewEvent(); err != nil {
			return fmt.Errorf("create start event: %w", err)
		}
		if b.end, err = c.NewEvent(); err != nil {
			return fmt.Errorf("create end event: %w", err)
		}
		if b.flush, err = c.Alloc(b.flushBytes); err != nil {
			return fmt.Errorf("allocate the %d-byte L2 flush buffer: %w", b.flushBytes, err)
		}
		if ungated {
			return nil // timed ungated; Timer records it
		}
		if b.gate, err = c.NewGate(); errors.Is(err, gpu.ErrGateUnsupported) {
			b.gate, err = nil, nil // timed ungated; Timer records it
		} else if err != nil {
			return fmt.Errorf("create the timing gate: %w", err)
		}
		return nil
	})
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *GPUBackend) Device() result.Device {
	i := b.info
	return result.Device{
		Kind: "gpu", Ordinal: i.Ordinal, Name: i.Name, UUID: i.UUID,
		ComputeCapability: fmt.Sprintf("%d.%d", i.CCMajor, i.CCMinor), Arch: i.Arch,
		SMs: i.SMs, L2Bytes: i.L2Bytes, MemBytes: i.MemBytes,
		DriverVersion: i.DriverVersion, CUDADriverVersion: i.CUDADriverVersion, NVRTCVersion: i.NVRTCVersion,
		MaxClockSMMHz: i.MaxClockSMMHz, PowerLimitW: i.PowerLimitW, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
	}
}

func (b *GPUBackend) Ceilings() kernels.Ceilings {
	return kernels.CeilingsFor(b.info.Name, b.info.CCMajor, b.info.CCMinor)
}

func (b *GPUBackend) CacheMode() (string, int64) { return "cold", b.flushBytes }

// Timer is "cuda_events_gated" where the timing stream is held until each
// sample's launches are all enqueued (the events then time the GPU alone),
// "cuda_events" where the driver cannot hold it.
func (b *GPUBackend) Timer() string {
	if b.gate != nil {
		return "cuda_events_gated"
	}
	return "cuda_events"
}

func (b *GPUBackend) Telemetry() (*result.Telemetry, error) {
	t, err := b.dev.Telemetry()
	if err != nil && t.At.IsZero() {
		return nil, err
	}
	return &result.Telemetry{
		At: t.At.UTC(), SMClockMHz: t.SMClockMHz, MemClockMHz: t.MemClockMHz, TempC: t.TempC,
		PowerW: t.PowerW, PowerLimitW: t.PowerLimitW, ClockEventReasons: t.ClockEventReasons,
		Flags: ThrottleFlags(t.ClockEventReasons),
	}, err
}

// Build compiles v (NVRTC for the device's arch, through the cubin cache)
// and, on the first call, the problem's GPU reference.
func (b *GPUBackend) Build(ctx context.Context, role string, v kernels.Variant) (*result.Build, error) {
	if b.ref == nil {
		rv, err := b.problem.ResolveVariant("reference")
		if err != nil {
			return nil, fmt.Errorf("find the GPU reference: %w", err)
		}
		b.ref, err = engine.Build(b.info, rv, b.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("build the GPU reference: %w", err)
		}
		rec := buildRecord(result.RoleReference, "reference", b.ref)
		b.refRec = &rec
		h, err := engine.BuildHarness(b.info, b.cacheDir)
		if err != nil {
			return nil, err
		}
		err = b.dev.Do(func(c *gpu.Ctx) error {
			var err error
			b.harness, err = h.Load(c)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	bt, err := engine.Build(b.info, v, b.cacheDir)
	if err != nil {
		return nil, err
	}
	b.builds[role] = bt
	rec := buildRecord(role, v.Name, bt)
	return &rec, nil
}

func buildRecord(role, spec string, bt *engine.Built) result.Build {
	v := bt.Variant
	r := result.Build{
		Role: role, Spec: spec, Name: v.Name, Title: v.Title, SourceFile: v.SourceFile,
		SourceHash: v.SourceHash(), Knobs: map[string]string{}, CompileOptions: append([]string{}, bt.Options...),
		Kernels: []result.KernelAttrs{},
	}
	for k, x := range v.Defines() {
		r.Knobs[k] = x
	}
	r.Knobs["launch"] = v.Knobs.Launch
	if c := bt.Compiled; c != nil {
		r.Arch, r.CubinKey, r.CacheHit, r.CompileSeconds = c.Arch, c.Key, c.CacheHit, c.Duration.Seconds()
		if len(r.CompileOptions) == 0 {
			r.CompileOptions = append([]string{}, c.Options...)
		}
	}
	names := make([]string, 0, len(bt.Attrs))
	for n := range bt.Attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := bt.Attrs[n]
		r.Kernels = append(r.Kernels, result.KernelAttrs{Name: n, Registers: a.NumRegs, SharedStatic: a.SharedStatic, LocalBytes: a.LocalBytes, MaxThreads: a.MaxThreads})
	}
	return r
}

func (b *GPUBackend) Reference() *result.Build { return b.refRec }

// BuildRecord is role's build record as of now: after a shape was prepared
// it holds the loaded module's per-kernel resources too.
func (b *GPUBackend) BuildRecord(role string) *result.Build {
	bt := b.builds[role]
	if role == result.RoleReference {
		bt = b.ref
	}
	if bt == nil {
		return nil
	}
	rec := buildRecord(role, bt.Variant.Name, bt)
	return &rec
}

// Shape makes one engine instance per role; they are prepared on the first
// Load, which has the inputs Prepare needs.
func (b *GPUBackend) Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error) {
	r := &gpuShape{b: b, shape: s, roles: roles}
	for _, role := range roles {
		if b.builds[role] == nil {
			return nil, fmt.Errorf("role %s was not built", role)
		}
	}
	return r, nil
}

func (b *GPUBackend) Close() error {
	if b.dev == nil {
		return nil
	}
	err := b.dev.Do(func(c *gpu.Ctx) error {
		errs := []error{b.harness.Close(), b.gate.Free()}
		if b.flush != 0 {
			errs = append(errs, c.Free(b.flush))
		}
		for _, e := range []*gpu.Event{b.start, b.end} {
			if e != nil {
				errs = append(errs, e.Destroy())
			}
		}
		if b.stream != nil {
			errs = append(errs, b.stream.Destroy())
		}
		return errors.Join(errs...)
	})
	if cerr := b.dev.Close(); err == nil {
		err = cerr
	}
	b.dev = nil
	return err
}

type gpuShape struct {
	b     *GPUBackend
	shape kernels.Shape
	roles []string
	inst  [][]*engine.Instance // per input set, per role: each with its own buffers
}

func (r *gpuShape) instance(role, set int) (*engine.Instance, error) {
	if set < 0 || set >= len(r.inst) || r.inst[set][role] == nil {
		return nil, fmt.Errorf("input set %d of %s was not loaded", set, r.roles[role])
	}
	return r.inst[set][role], nil
}

func engineInputs(in inputs) engine.Inputs {
	return engine.Inputs{Group: in.group, Dual: in.dual}
}

func (r *gpuShape) Load(ctx context.Context, set int, seed uint64, checkCPU bool) ([]float64, *RefCheck, error) {
	if set < 0 || set > len(r.inst) {
		return nil, nil, fmt.Errorf("input set %d after %d sets", set, len(r.inst))
	}
	if set == len(r.inst) {
		r.inst = append(r.inst, make([]*engine.Instance, len(r.roles)))
	}
	in := genInputs(r.b.problem, r.shape, seed)
	ein := engineInputs(in)
	var ref []float64
	err := r.b.dev.Do(func(c *gpu.Ctx) error {
		for k := range r.roles {
			// Odd sets allocate the roles in reverse order, so that no role
			// always gets the lower addresses.
			i := k
			if set%2 == 1 {
				i = len(r.roles) - 1 - k
			}
			role := r.roles[i]
			if r.inst[set][i] == nil {
				inst, err := engine.Prepare(c, r.b.builds[role], r.shape, r.b.lim, ein)
				if err != nil {
					return fmt.Errorf("prepare %s: %w", role, err)
				}
				r.inst[set][i] = inst
				continue
			}
			if err := r.inst[set][i].Upload(ein); err != nil {
				return fmt.Errorf("upload %s inputs: %w", role, err)
			}
		}
		var err error
		ref, err = engine.RunReference(c, r.b.ref, r.shape, ein)
		if err != nil {
			return fmt.Errorf("run the GPU reference: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !checkCPU {
		return ref, nil, nil
	}
	cpu := cpuReference(in)
	k := nvfp4.CompareF64(ref, cpu, refVsCPUTol, refVsCPUTol)
	return ref, &RefCheck{Elements: k.Elements, MaxAbsErr: k.MaxAbsErr, RelL2Err: k.RelL2Err, Tol: refVsCPUTol, Pass: k.Pass}, nil
}

func (r *gpuShape) Check(ctx context.Context, role, set int) (out []uint16, h0, h1 string, err error) {
	inst, err := r.instance(role, set)
	if err != nil {
		return nil, "", "", err
	}
	err = r.b.dev.Do(func(c *gpu.Ctx) error {
		var err error
		if h0, err = inst.InputHash(); err != nil {
			return fmt.Errorf("hash inputs before: %w", err)
		}
		if err := inst.Run(r.b.stream); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		if err := r.b.stream.Synchronize(); err != nil {
			return fmt.Errorf("synchronize after run: %w", err)
		}
		if out, err = inst.Output(); err != nil {
			return fmt.Errorf("read output: %w", err)
		}
		if h1, err = inst.InputHash(); err != nil {
			return fmt.Errorf("hash inputs after: %w", err)
		}
		return nil
	})
	return out, h0, h1, err
}

// Sample: flush (memset 2x L2 on the timing stream), then, behind the gate,
// start event, one complete execution (the engine joins side streams back
// to this stream), end event; the gate opens once all of that is enqueued,
// so the events never time the host's enqueueing. The wait for the end
// event is outside the timed region.
func (r *gpuShape) Sample(ctx context.Context, role, set int) (float64, error) {
	inst, err := r.instance(role, set)
	if err != nil {
		return 0, err
	}
	var ms float32
	b := r.b
	err = b.dev.Do(func(c *gpu.Ctx) error {
		if err := c.MemsetD8(b.flush, 0, b.flushBytes, b.stream); err != nil {
			return fmt.Errorf("flush L2: %w", err)
		}
		if err := b.enqueueTimed(inst); err != nil {
			return err
		}
		if err := b.end.Synchronize(); err != nil {
			return fmt.Errorf("wait for end event: %w", err)
		}
		var err error
		ms, err = gpu.ElapsedMs(b.start, b.end)
		return err
	})
	return float64(ms) * 1e6, err
}

// enqueueTimed enqueues the timed part of a sample behind the gate and
// opens it, on every path: a gate left closed would hold the stream for
// good.
func (b *GPUBackend) enqueueTimed(inst *engine.Instance) error {
	if b.gate != nil {
		if err := b.gate.Hold(b.stream); err != nil {
			return fmt.Errorf("hold the timing stream: %w", err)
		}
		defer b.gate.Open()
	}
	if err := b.start.Record(b.stream); err != nil {
		return fmt.Errorf("record start: %w", err)
	}
	if err := inst.Run(b.stream); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if err := b.end.Record(b.stream); err != nil {
		return fmt.Errorf("record end: %w", err)
	}
	return nil
}

func (r *gpuShape) Output(ctx context.Context, role, set int) (out []uint16, err error) {
	inst, err := r.instance(role, set)
	if err != nil {
		return nil, err
	}
	err = r.b.dev.Do(func(c *gpu.Ctx) error {
		var err error
		out, err = inst.Output()
		return err
	})
	return out, err
}

func (r *gpuShape) Plan(role int) result.LaunchPlan {
	pl := result.LaunchPlan{Launches: []result.Launch{}}
	var p *kernels.Plan
	if len(r.inst) > 0 && r.inst[0][role] != nil {
		p = r.inst[0][role].Plan()
		pl.Module, pl.CubinKey = r.inst[0][role].Module()
	} else {
		// No instance yet (the protocol records the plan before the first
		// input set loads): the module the shape resolves to, which is
		// what Prepare loads (the engine's device test checks they agree).
		bt := r.b.builds[r.roles[role]]
		var err error
		if pl.Module, pl.CubinKey, err = bt.ModuleFor(r.shape, r.b.lim); err != nil {
			fmt.Fprintf(os.Stderr, "web bench: %s's module: %v\n", r.roles[role], err)
		}
		if p, err = bt.Variant.Plan(r.shape, r.b.lim); err != nil {
			fmt.Fprintf(os.Stderr, "web bench: plan %s: %v\n", r.roles[role], err)
			return pl
		}
	}
	pl.Mode, pl.Streams = p.Mode, p.Streams
	for _, l := range p.Launches {
		pl.Launches = append(pl.Launches, result.Launch{Kernel: l.Kernel, Grid: l.Grid, Block: l.Block, SharedBytes: l.SharedBytes, Group: l.Group, Stream: l.Stream})
	}
	return pl
}

func (r *gpuShape) Close() error {
	return r.b.dev.Do(func(c *gpu.Ctx) error {
		var errs []error
		for _, set := range r.inst {
			for i, inst := range set {
				if inst != nil {
					errs = append(errs, inst.Close())
					set[i] = nil
				}
			}
		}
		return errors.Join(errs...)
	})
}

func (r *gpuShape) Scramble(ctx context.Context, role, set int, poisonSeed, flipSeed uint64) error {
	inst, err := r.instance(role, set)
	if err != nil {
		return err
	}
	return r.b.dev.Do(func(c *gpu.Ctx) error {
		return inst.Scramble(r.b.harness, poisonSeed, flipSeed, r.b.stream)
	})
}

// Probe: the stop event has completed (Sample waited for it); anything of
// the execution still running on the instance's own streams escaped the
// timer, and the output read now, without waiting for those streams, shows
// what the timed execution had really written.
func (r *gpuShape) Probe(ctx context.Context, role, set int, read bool) (out []uint16, settled bool, err error) {
	inst, err := r.instance(role, set)
	if err != nil {
		return nil, false, err
	}
	err = r.b.dev.Do(func(c *gpu.Ctx) error {
		var err error
		if read {
			if out, err = inst.OutputNow(); err != nil {
				return err
			}
		}
		settled, err = inst.Settled()
		return err
	})
	return out, settled, err
}

// Reload prepares every role's instance of set anew (new buffers, the
// module loaded again, new inputs) before releasing the old ones, so the
// new buffers cannot reuse the old addresses.
func (r *gpuShape) Reload(ctx context.Context, set int, seed uint64) ([]float64, error) {
	if set < 0 || set >= len(r.inst) {
		return nil, fmt.Errorf("reload input set %d of %d", set, len(r.inst))
	}
	in := genInputs(r.b.problem, r.shape, seed)
	ein := engineInputs(in)
	var ref []float64
	err := r.b.dev.Do(func(c *gpu.Ctx) error {
		fresh := make([]*engine.Instance, len(r.roles))
		for k, role := range r.roles {
			inst, err := engine.Prepare(c, r.b.builds[role], r.shape, r.b.lim, ein)
			if err != nil {
				for _, x := range fresh[:k] {
					_ = x.Close()
				}
				return fmt.Errorf("prepare %s at fresh addresses: %w", role, err)
			}
			fresh[k] = inst
		}
		var errs []error
		for k, old := range r.inst[set] {
			errs = append(errs, old.Close())
			r.inst[set][k] = fresh[k]
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("release the old buffers: %w", err)
		}
		var err error
		if ref, err = engine.RunReference(c, r.b.ref, r.shape, ein); err != nil {
			return fmt.Errorf("run the GPU reference: %w", err)
		}
		return nil
	})
	return ref, err
}

// Relocate copies every role's inputs of set to new buffers, allocated
// while the old ones exist, then releases the old ones.
func (r *gpuShape) Relocate(ctx context.Context, set int) error {
	if set < 0 || set >= len(r.inst) {
		return fmt.Errorf("relocate input set %d of %d", set, len(r.inst))
	}
	return r.b.dev.Do(func(c *gpu.Ctx) error {
		fresh := make([]*engine.Instance, len(r.roles))
		for k, old := range r.inst[set] {
			inst, err := old.Relocate(r.b.lim)
			if err != nil {
				for _, x := range fresh[:k] {
					_ = x.Close()
				}
				return fmt.Errorf("relocate %s: %w", r.roles[k], err)
			}
			fresh[k] = inst
		}
		var errs []error
		for k, old := range r.inst[set] {
			errs = append(errs, old.Close())
			r.inst[set][k] = fresh[k]
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("release the old buffers: %w", err)
		}
		return nil
	})
}

func (r *gpuShape) InputHash(ctx context.Context, role, set int) (h string, err error) {
	inst, err := r.instance(role, set)
	if err != nil {
		return "", err
	}
	err = r.b.dev.Do(func(c *gpu.Ctx) error {
		h, err = inst.InputHash()
		return err
	})
	return h, err
}
