package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

// PtxasFlag makes NVRTC's log carry ptxas's resource report (registers,
// spills, stack) so every build records what it cost.
const PtxasFlag = "--ptxas-options=-v"

// buildFlags are the NVRTC flags of every build. NVRTC 12.9 and newer keep
// their own cache and print no ptxas report on a hit, so they get
// --no-cache (NVIDIA/Fuser#4694 does the same); our own cache (cacheDir)
// stores the log with the cubin.
func buildFlags() []string {
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		return []string{PtxasFlag}
	}
	return buildFlagsFor(ver)
}

// buildFlagsFor is buildFlags for NVRTC version ver ("13.0").
func buildFlagsFor(ver string) []string {
	flags := []string{PtxasFlag}
	var major, minor int
	if _, err := fmt.Sscanf(ver, "%d.%d", &major, &minor); err == nil && (major > 12 || major == 12 && minor >= 9) {
		flags = append(flags, "--no-cache")
	}
	return flags
}

// ModuleKeys returns the cache key (gpu.CacheKey) of every module Build
// compiles for v, by the name of the concrete variant it holds (v's own
// name, or each candidate's for an auto variant), as NVRTC version ver
// would build them for arch. It compiles nothing: the keys name another
// machine's cached cubins and ptxas reports.
func ModuleKeys(v kernels.Variant, arch, ver string) (map[string]string, error) {
	if v.Kernel != nil && v.Kernel.Manifest.Kind != kernels.KindCUDA {
		return nil, fmt.Errorf("engine: module keys of %s: a %s submission is loaded as given, not compiled", v.Name, v.Kernel.Manifest.Kind)
	}
	src, hdrs, err := moduleInputs(v)
	if err != nil {
		return nil, fmt.Errorf("engine: module keys of %s: %w", v.Name, err)
	}
	keys := map[string]string{}
	for _, cv := range v.Candidates() {
		k, err := gpu.CacheKey(src, gpu.CompileOptions{Arch: arch, Defines: cv.Defines(), Flags: buildFlagsFor(ver), Headers: hdrs}, ver)
		if err != nil {
			return nil, fmt.Errorf("engine: module keys of %s: %w", cv.Name, err)
		}
		keys[cv.Name] = k
	}
	return keys, nil
}

// moduleInputs is what NVRTC compiles for v: its source and headers, the
// same for every candidate of an auto variant (only the defines differ).
func moduleInputs(v kernels.Variant) (string, map[string]string, error) {
	src, err := v.Source()
	if err != nil {
		return "", nil, err
	}
	hdrs, err := v.Headers()
	if err != nil {
		return "", nil, err
	}
	return src, hdrs, nil
}

// Build compiles v for dev's architecture with v's defines (NVRTC only, no
// device needed). cacheDir "" compiles without a cache.
func Build(dev gpu.DeviceInfo, v kernels.Variant, cacheDir string) (*Built, error) {
	arch := dev.Arch
	if arch == "" {
		arch = gpu.ArchFor(dev.CCMajor, dev.CCMinor)
	}
	if cc := dev.CCMajor*10 + dev.CCMinor; dev.CCMajor > 0 && cc < v.MinArch {
		return nil, fmt.Errorf("engine: build %s: needs sm_%d or newer, the device is sm_%d", v.Name, v.MinArch, cc)
	}
	if dev.CCMajor > 0 {
		if err := v.CheckDevice(arch); err != nil {
			return nil, fmt.Errorf("engine: build %s: %w", v.Name, err)
		}
	}
	if v.Kernel != nil && v.Kernel.Manifest.Kind != kernels.KindCUDA {
		return loadAsIs(v, arch)
	}
	src, hdrs, err := moduleInputs(v)
	if err != nil {
		return nil, fmt.Errorf("engine: build %s: %w", v.Name, err)
	}
	cands := v.Candidates()
	if len(cands) == 1 && cands[0].Name == v.Name {
		c, err := gpu.Compile(v.SourceFile, src, gpu.CompileOptions{Arch: arch, Defines: v.Defines(), Flags: buildFlags(), CacheDir: cacheDir, Headers: hdrs})
		if err != nil {
			return nil, fmt.Errorf("engine: build %s for %s: %w", v.Name, arch, err)
		}
		return &Built{Variant: v, Compiled: c, Options: c.Options, Arch: arch, PtxasLog: c.Log, Attrs: map[string]gpu.FuncAttrs{}}, nil
	}
	// Auto tile sizes: the tile is a compile-time macro and the shape is
	// not known yet, so every candidate is compiled now (in parallel: NVRTC
	// needs no device) and Prepare loads the one the shape resolves to.
	if len(cands) == 0 {
		return nil, fmt.Errorf("engine: build %s: no candidate tile fits its knobs", v.Name)
	}
	b := &Built{Variant: v, Candidates: map[string]*gpu.Compiled{}, Arch: arch, Attrs: map[string]gpu.FuncAttrs{}}
	comps := make([]*gpu.Compiled, len(cands))
	errs := make([]error, len(cands))
	var wg sync.WaitGroup
	for i, cv := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			comps[i], errs[i] = gpu.Compile(cv.SourceFile, src, gpu.CompileOptions{Arch: arch, Defines: cv.Defines(), Flags: buildFlags(), CacheDir: cacheDir, Headers: hdrs})
			if errs[i] != nil {
				errs[i] = fmt.Errorf("engine: build %s (candidate %s) for %s: %w", v.Name, cv.Name, arch, errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var log strings.Builder
	for i, cv := range cands {
		b.Candidates[cv.Name] = comps[i]
		fmt.Fprintf(&log, "== candidate %s\n%s\n", cv.Name, comps[i].Log)
	}
	b.Compiled, b.Options, b.PtxasLog = comps[0], comps[0].Options, log.String()
	return b, nil
}

// loadAsIs is Build for a submitted PTX or cubin/fatbin: nothing is
// compiled here. PTX goes to the driver's JIT when Prepare loads it (the
// loader adds the terminating NUL); a cubin or fatbin loads as is, and
// CheckDevice has refused it already when it has no code for arch.
func loadAsIs(v kernels.Variant, arch string) (*Built, error) {
	m := v.Kernel.Manifest
	img := v.Kernel.Files[m.Source]
	note := "cubin/fatbin loaded as is: no compile here; registers and spills are those of the loaded code (see kernels)"
	if m.Kind == kernels.KindPTX {
		note = "PTX compiled by the driver's JIT at load for " + arch + " (no NVRTC, no ptxas report here)"
	}
	c := &gpu.Compiled{Cubin: img, Arch: arch, Key: v.SourceHash(), Log: note, Options: []string{"kind=" + m.Kind}}
	return &Built{Variant: v, Compiled: c, Options: c.Options, Arch: arch, PtxasLog: note, Attrs: map[string]gpu.FuncAttrs{}}, nil
}

// CUDA driver errors of a module the device cannot take.
const (
	cudaErrorNoBinaryForGPU        = 209
	cudaErrorInvalidPTX            = 218
	cudaErrorUnsupportedPTXVersion = 222
)

// loadError says why b's module did not load, naming the device's
// architecture when the image has no code for it (a submitted cubin) or
// its PTX is too new for the driver.
func loadError(b *Built, err error) error {
	var ce *gpu.CUDAError
	if errors.As(err, &ce) {
		switch ce.Code {
		case cudaErrorNoBinaryForGPU:
			return fmt.Errorf("engine: load module of %s: it has no code for the device's architecture %s (build it for %s, or submit PTX or CUDA source): %w", b.Variant.Name, b.Arch, b.Arch, err)
		case cudaErrorInvalidPTX, cudaErrorUnsupportedPTXVersion:
			return fmt.Errorf("engine: load module of %s: the driver's JIT refused its PTX for %s (a PTX ISA version newer than the driver, or a .target the device lacks): %w", b.Variant.Name, b.Arch, err)
		}
	}
	return fmt.Errorf("engine: load module of %s: %w", b.Variant.Name, err)
}

// module returns the compiled module b runs on shape s, the name of the
// concrete variant it holds and the key of its entry points in b.Attrs:
// for auto tiles the candidate s resolves to.
func (b *Built) module(s kernels.Shape, lim kernels.Limits) (*gpu.Compiled, string, func(kernel string) string, error) {
	if b.Candidates == nil {
		return b.Compiled, b.Variant.Name, func(k string) string { return k }, nil
	}
	cv, err := b.Variant.Resolve(s, lim)
	if err != nil {
		return nil, "", nil, err
	}
	c, ok := b.Candidates[cv.Name]
	if !ok {
		return nil, "", nil, fmt.Errorf("engine: %s resolves to %s on %v, which was not built", b.Variant.Name, cv.Name, s)
	}
	return c, cv.Name, func(k string) string { return cv.Name + " " + k }, nil
}

// ModuleFor names the module b runs on shape s: the concrete variant it
// was compiled from (for auto tiles the candidate s resolves to, else b's
// own variant) and its cache key, so that a result can say per shape which
// cubin ran and whose resources (b.Attrs) apply.
func (b *Built) ModuleFor(s kernels.Shape, lim kernels.Limits) (name, key string, err error) {
	c, name, _, err := b.module(s, lim)
	if err != nil {
		return "", "", fmt.Errorf("engine: module of %s on %v: %w", b.Variant.Name, s, err)
	}
	if c == nil {
		return "", "", fmt.Errorf("engine: module of %s on %v: nothing was compiled", b.Variant.Name, s)
	}
	return name, c.Key, nil
}

func (in Inputs) check(p *kernels.Problem, s kernels.Shape) error {
	switch p.Kind {
	case kernels.GroupGEMM:
		g := in.Group
		if g == nil || in.Dual != nil {
			return fmt.Errorf("engine: %s needs group inputs", p.Name)
		}
		if len(g.A) != len(s.M) || len(g.B) != len(s.M) {
			return fmt.Errorf("engine: inputs have %d A and %d B operands for %d groups", len(g.A), len(g.B), len(s.M))
		}
		for i, m := range s.M {
			if err := checkOperand(g.A[i], m, s.K, fmt.Sprintf("A[%d]", i)); err != nil {
				return err
			}
			if err := checkOperand(g.B[i], s.N, s.K, fmt.Sprintf("B[%d]", i)); err != nil {
				return err
			}
		}
	case kernels.DualGEMM:
		d := in.Dual
		if d == nil || in.Group != nil {
			return fmt.Errorf("engine: %s needs dual inputs", p.Name)
		}
		if err := checkOperand(d.A, s.M[0], s.K, "A"); err != nil {
			return err
		}
		if err := checkOperand(d.B1, s.N, s.K, "B1"); err != nil {
			return err
		}
		if err := checkOperand(d.B2, s.N, s.K, "B2"); err != nil {
			return err
		}
	}
	return nil
}

func checkOperand(o *nvfp4.Operand, rows, k int, name string) error {
	if o == nil {
		return fmt.Errorf("engine: input %s is missing", name)
	}
	if o.Rows != rows || o.K != k || len(o.Data) != rows*k/2 || len(o.Scales) != rows*k/16 {
		return fmt.Errorf("engine: input %s is %dx%d (%d data, %d scale bytes), the shape needs %dx%d", name, o.Rows, o.K, len(o.Data), len(o.Scales), rows, k)
	}
	return nil
}

// operand returns the host operand behind an input buffer.
func (in Inputs) operand(b kernels.Buffer, g int) (*nvfp4.Operand, bool) {
	if in.Group != nil {
		switch b {
		case kernels.BufA, kernels.BufSA:
			return in.Group.A[g], b == kernels.BufSA
		case kernels.BufB, kernels.BufSB:
			return in.Group.B[g], b == kernels.BufSB
		}
		return nil, false
	}
	switch b {
	case kernels.BufA, kernels.BufSA:
		return in.Dual.A, b == kernels.BufSA
	case kernels.BufB, kernels.BufSB:
		return in.Dual.B1, b == kernels.BufSB
	case kernels.BufB2, kernels.BufSB2:
		return in.Dual.B2, b == kernels.BufSB2
	}
	return nil, false
}

// inputKeys lists the input buffers of a shape in a fixed order.
func inputKeys(dual bool, s kernels.Shape) []bufKey {
	var ks []bufKey
	if dual {
		for _, b := range []kernels.Buffer{kernels.BufA, kernels.BufSA, kernels.BufB, kernels.BufSB, kernels.BufB2, kernels.BufSB2} {
			ks = append(ks, bufKey{b, 0})
		}
		return ks
	}
	for g := range s.M {
		for _, b := range []kernels.Buffer{kernels.BufA, kernels.BufSA, kernels.BufB, kernels.BufSB} {
			ks = append(ks, bufKey{b, g})
		}
	}
	return ks
}

// Prepare loads b's module, allocates and uploads s's inputs, allocates the
// output, raises the kernels' dynamic shared-memory limits, creates the
// plan's side streams and events, and for graph mode captures the launches
// into a graph. On error everything it made is released.
func Prepare(c *gpu.Ctx, b *Built, s kernels.Shape, lim kernels.Limits, in Inputs) (inst *Instance, err error) {
	return prepare(c, b, s, lim, in, nil)
}

// Relocate prepares a new instance of the same variant and shape whose
// inputs are copies of i's inputs as they are now, in buffers allocated
// while i's still exist (so at other addresses), with the module loaded
// anew (so no __device__ state survives). The caller closes i.
func (i *Instance) Relocate(lim kernels.Limits) (*Instance, error) {
	if i.closed {
		return nil, ErrClosed
	}
	return prepare(i.c, i.b, i.shape, lim, Inputs{}, i)
}

// prepare is Prepare, with the inputs copied device to device from `from`
// instead of uploaded from in when from is set. Its phases, in order:
// check the request and plan the launches, load the kernels
// (loadKernels), size persistent grids to what is resident (fitGrids),
// allocate and fill the buffers (allocIO, fillInputs, allocScratch), check
// every launch's arguments, and make the plan's streams or graph
// (prepareMode). On error, the deferred Close releases what was made.
func prepare(c *gpu.Ctx, b *Built, s kernels.Shape, lim kernels.Limits, in Inputs, from *Instance) (inst *Instance, err error) {
	p, err := kernels.LookupProblem(b.Variant.Problem)
	if err != nil {
		return nil, err
	}
	if err := p.CheckShape(s); err != nil {
		return nil, err
	}
	if from == nil {
		if err := in.check(p, s); err != nil {
			return nil, err
		}
	}
	plan, err := b.Variant.Plan(s, lim)
	if err != nil {
		return nil, fmt.Errorf("engine: plan %s on %v: %w", b.Variant.Name, s, err)
	}
	i := &Instance{c: c, b: b, shape: s, plan: plan, dual: p.Kind == kernels.DualGEMM,
		funcs: map[string]*gpu.Function{}, bufs: map[bufKey]buffer{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, i.Close())
			inst = nil
		}
	}()

	attrKey, err := i.loadKernels(lim)
	if err != nil {
		return nil, err
	}
	i.fitGrids(attrKey)
	if err = i.allocIO(in, from); err != nil {
		return nil, err
	}
	if err = i.fillInputs(in, from); err != nil {
		return nil, err
	}
	if err = i.allocScratch(); err != nil {
		return nil, err
	}
	// Every launch argument must resolve before anything runs.
	for _, l := range plan.Launches {
		if _, err = i.args(l); err != nil {
			return nil, err
		}
	}
	if err = i.prepareMode(); err != nil {
		return nil, err
	}
	return i, nil
}

// loadKernels loads the variant's module for the shape, finds each launched
// kernel, records its attributes in b.Attrs (once per module) and raises its
// dynamic shared-memory limit where the plan needs more than 48 KiB. It
// returns the key of a kernel's attributes in b.Attrs.
func (i *Instance) loadKernels(lim kernels.Limits) (attrKey func(kernel string) string, err error) {
	b := i.b
	comp, name, attrKey, err := b.module(i.shape, lim)
	if err != nil {
		return nil, err
	}
	i.modName, i.modKey = name, comp.Key
	if i.mod, err = i.c.LoadModule(comp.Cubin); err != nil {
		return nil, loadError(b, err)
	}
	for _, l := range i.plan.Launches {
		f, ok := i.funcs[l.Kernel]
		if !ok {
			if f, err = i.mod.Function(l.Kernel); err != nil {
				return nil, fmt.Errorf("engine: %s: %w", b.Variant.Name, err)
			}
			i.funcs[l.Kernel] = f
			if _, have := b.Attrs[attrKey(l.Kernel)]; !have {
				a, err := f.Attributes()
				if err != nil {
					return nil, fmt.Errorf("engine: attributes of %s: %w", l.Kernel, err)
				}
				b.Attrs[attrKey(l.Kernel)] = a
			}
		}
		if l.SharedBytes > 48*1024 {
			if err = f.SetMaxDynamicShared(int(l.SharedBytes)); err != nil {
				return nil, fmt.Errorf("engine: %s: raise dynamic shared memory to %d: %w", l.Kernel, l.SharedBytes, err)
			}
		}
	}
	return attrKey, nil
}

// fitGrids gives persistent launches the grid that can really be resident:
// the plan asked for SMs x blocks_per_sm, the loaded kernel's registers and
// shared memory may allow fewer (the driver has no occupancy call here).
func (i *Instance) fitGrids(attrKey func(kernel string) string) {
	for n, l := range i.plan.Launches {
		if l.PersistentPerSM <= 0 {
			continue
		}
		info := i.c.Device().Info()
		occ := min(l.PersistentPerSM, ResidentBlocks(i.b.Attrs[attrKey(l.Kernel)], int(l.Block[0]*l.Block[1]*l.Block[2]), int(l.SharedBytes), info.MaxSharedPerSM))
		i.plan.Launches[n].Grid[0] = uint32(max(1, min(l.Tiles, info.SMs*occ)))
	}
}

// alloc allocates n bytes of device memory as buffer k.
func (i *Instance) alloc(k bufKey, n int64) error {
	ptr, err := i.c.Alloc(n)
	if err != nil {
		return fmt.Errorf("engine: allocate %s[%d] (%d bytes): %w", k.buf, k.group, n, err)
	}
	i.bufs[k] = buffer{ptr, n}
	return nil
}

// allocIO allocates the input buffers, sized as in's operands (or as
// from's buffers), and the output: C, or Ref for the reference variant.
func (i *Instance) allocIO(in Inputs, from *Instance) error {
	s := i.shape
	for _, k := range inputKeys(i.dual, s) {
		var n int64
		if from != nil {
			n = from.bufs[k].bytes
		} else {
			o, scales := in.operand(k.buf, k.group)
			n = int64(len(o.Data))
			if scales {
				n = int64(len(o.Scales))
			}
		}
		if err := i.alloc(k, n); err != nil {
			return err
		}
	}
	out := kernels.BufC
	elem := int64(2)
	if i.b.Variant.Reference {
		out, elem = kernels.BufRef, 8
	}
	for g, m := range s.M {
		if err := i.alloc(bufKey{out, g}, int64(m)*int64(s.N)*elem); err != nil {
			return err
		}
	}
	return nil
}

// fillInputs uploads in, or copies from's inputs device to device.
func (i *Instance) fillInputs(in Inputs, from *Instance) error {
	if from != nil {
		return i.copyInputs(from)
	}
	return i.Upload(in)
}

// allocScratch allocates what the plan needs besides inputs and output:
// the split-K workspace and the table of buffer addresses (uploaded).
func (i *Instance) allocScratch() error {
	plan := i.plan
	// The split-K workspace: every byte a launch reads from it is written
	// earlier in the same Run (the plan's contract), so it is allocated once
	// and never cleared between runs; Poison fills it too, so a partial sum
	// the kernel failed to write shows up as NaN in C.
	if plan.WorkspaceBytes > 0 {
		if err := i.alloc(bufKey{kernels.BufWork, 0}, plan.WorkspaceBytes); err != nil {
			return err
		}
	}
	if plan.TableBytes != nil {
		tb := plan.TableBytes(func(buf kernels.Buffer, g int) uint64 { return uint64(i.bufs[bufKey{buf, g}].ptr) })
		if err := i.alloc(bufKey{kernels.BufTable, 0}, int64(len(tb))); err != nil {
			return err
		}
		if err := i.c.CopyHtoD(i.bufs[bufKey{kernels.BufTable, 0}].ptr, tb); err != nil {
			return fmt.Errorf("engine: upload table: %w", err)
		}
	}
	return nil
}

// prepareMode makes what the plan's launch mode needs: the side streams
// and fork/join events of "streams", or the captured and instantiated
// graph of "graph".
func (i *Instance) prepareMode() (err error) {
	c := i.c
	switch i.plan.Mode {
	case "streams":
		if i.fork, err = c.NewEvent(); err != nil {
			return fmt.Errorf("engine: fork event: %w", err)
		}
		for n := 0; n < i.plan.Streams; n++ {
			st, err := c.NewStream()
			if err != nil {
				return fmt.Errorf("engine: side stream %d: %w", n+1, err)
			}
			i.side = append(i.side, st)
			ev, err := c.NewEvent()
			if err != nil {
				return fmt.Errorf("engine: join event %d: %w", n+1, err)
			}
			i.joins = append(i.joins, ev)
		}
	case "graph":
		if i.capture, err = c.NewStream(); err != nil {
			return fmt.Errorf("engine: capture stream: %w", err)
		}
		if err = i.capture.BeginCapture(); err != nil {
			return fmt.Errorf("engine: begin capture: %w", err)
		}
		lerr := i.launchAll(i.capture)
		g, cerr := i.capture.EndCapture()
		if lerr != nil || cerr != nil {
			_ = g.Destroy()
			return fmt.Errorf("engine: capture graph: %w", errors.Join(lerr, cerr))
		}
		i.graph, err = g.Instantiate()
		if derr := g.Destroy(); err == nil && derr != nil {
			err = derr
		}
		if err != nil {
			return fmt.Errorf("engine: instantiate graph: %w", err)
		}
	}
	return nil
}

// ResidentBlocks estimates how many blocks of a kernel fit on one SM from
// its registers (allocated per warp in units of 256), its shared memory
// (static + dynamic + the 1 KiB the driver reserves per block, against
// sharedPerSM; 0 means Hopper's 228 KiB) and the 2048-thread, 32-block
// limits. At least 1: a block that did not fit would fail at launch.
func ResidentBlocks(a gpu.FuncAttrs, threads, dynShared, sharedPerSM int) int {
	if sharedPerSM <= 0 {
		sharedPerSM = 233472
	}
	if threads <= 0 {
		return 1
	}
	warps := (threads + 31) / 32
	n := min(32, 2048/threads)
	if a.NumRegs > 0 {
		perWarp := (a.NumRegs*32 + 255) / 256 * 256
		n = min(n, 65536/(perWarp*warps))
	}
	if sh := a.SharedStatic + dynShared + 1024; sh > 0 {
		n = min(n, sharedPerSM/sh)
	}
	return max(1, n)
}

// args resolves a launch's arguments to device values.
func (i *Instance) args(l kernels.Launch) ([]any, error) {
	out := make([]any, 0, len(l.Args))
	for n, a := range l.Args {
		switch a.Kind {
		case kernels.ArgPtr:
			g := a.Group
			if a.Buf == kernels.BufTable || a.Buf == kernels.BufWork {
				g = 0
			}
			b, ok := i.bufs[bufKey{a.Buf, g}]
			if !ok {
				return nil, fmt.Errorf("engine: %s argument %d: no buffer %s[%d]", l.Kernel, n, a.Buf, g)
			}
			if a.Value < 0 || (a.Value > 0 && a.Value >= b.bytes) {
				return nil, fmt.Errorf("engine: %s argument %d: offset %d outside %s[%d] (%d bytes)", l.Kernel, n, a.Value, a.Buf, g, b.bytes)
			}
			out = append(out, b.ptr+gpu.DevPtr(a.Value))
		case kernels.ArgI32:
			if a.Value < math.MinInt32 || a.Value > math.MaxInt32 {
				return nil, fmt.Errorf("engine: %s argument %d: %d does not fit int32", l.Kernel, n, a.Value)
			}
			out = append(out, int32(a.Value))
		case kernels.ArgI64:
			out = append(out, a.Value)
		default:
			return nil, fmt.Errorf("engine: %s argument %d: unknown kind %d", l.Kernel, n, a.Kind)
		}
	}
	return out, nil
}

func (i *Instance) launch(l kernels.Launch, s *gpu.Stream) error {
	args, err := i.args(l)
	if err != nil {
		return err
	}
	f := i.funcs[l.Kernel]
	if l.Overlap {
		err = i.c.LaunchOverlapped(f, l.Grid, l.Block, l.SharedBytes, s, args...)
	} else {
		err = i.c.Launch(f, l.Grid, l.Block, l.SharedBytes, s, args...)
	}
	if err != nil {
		return fmt.Errorf("engine: launch %s (group %d): %w", l.Kernel, l.Group, err)
	}
	return nil
}

// launchAll issues every launch on s, in plan order.
func (i *Instance) launchAll(s *gpu.Stream) error {
	for _, l := range i.plan.Launches {
		if err := i.launch(l, s); err != nil {
			return err
		}
	}
	return nil
}

// Run enqueues one complete execution on s. In streams mode the side
// streams wait for s before starting and s waits for all of them before
// anything enqueued after Run, so events recorded on s time everything.
func (i *Instance) Run(s *gpu.Stream) error {
	if i.closed {
		return ErrClosed
	}
	switch i.plan.Mode {
	case "graph":
		if err := i.graph.Launch(s); err != nil {
			return fmt.Errorf("engine: launch graph of %s: %w", i.b.Variant.Name, err)
		}
		return nil
	case "streams":
		if err := i.fork.Record(s); err != nil {
			return fmt.Errorf("engine: record fork: %w", err)
		}
		for _, st := range i.side {
			if err := st.WaitEvent(i.fork); err != nil {
				return fmt.Errorf("engine: side stream waits for fork: %w", err)
			}
		}
		for _, l := range i.plan.Launches {
			st := s
			if l.Stream > 0 {
				if l.Stream > len(i.side) {
					return fmt.Errorf("engine: launch %s names stream %d of %d", l.Kernel, l.Stream, len(i.side))
				}
				st = i.side[l.Stream-1]
			}
			if err := i.launch(l, st); err != nil {
				return err
			}
		}
		if i.plan.Detached {
			// TEST ONLY (the cheat family): no join, so the work outlives
			// s and the bench must notice.
			return nil
		}
		for n, st := range i.side {
			if err := i.joins[n].Record(st); err != nil {
				return fmt.Errorf("engine: record join %d: %w", n+1, err)
			}
			if err := s.WaitEvent(i.joins[n]); err != nil {
				return fmt.Errorf("engine: join side stream %d: %w", n+1, err)
			}
		}
		return nil
	}
	return i.launchAll(s)
}

// Upload copies fresh inputs of the same shape to the device (synchronous).
func (i *Instance) Upload(in Inputs) error {
	if i.closed {
		return ErrClosed
	}
	p, err := kernels.LookupProblem(i.b.Variant.Problem)
	if err != nil {
		return err
	}
	if err := in.check(p, i.shape); err != nil {
		return err
	}
	// Work on non-blocking streams may still read the old inputs.
	if err := i.c.Synchronize(); err != nil {
		return fmt.Errorf("engine: upload: synchronize: %w", err)
	}
	for _, k := range inputKeys(i.dual, i.shape) {
		o, scales := in.operand(k.buf, k.group)
		src := o.Data
		if scales {
			src = o.Scales
		}
		if err := i.c.CopyHtoD(i.bufs[k].ptr, src); err != nil {
			return fmt.Errorf("engine: upload %s[%d]: %w", k.buf, k.group, err)
		}
	}
	return nil
}

func (i *Instance) outKeys() []bufKey {
	out := kernels.BufC
	if i.b.Variant.Reference {
		out = kernels.BufRef
	}
	ks := make([]bufKey, len(i.shape.M))
	for g := range i.shape.M {
		ks[g] = bufKey{out, g}
	}
	return ks
}

// Poison fills the output, and the split-K workspace where the plan has
// one, with 0xFF bytes (fp16, fp32 and float64 NaN) so that an element the
// kernels do not write fails the check. It waits until done.
func (i *Instance) Poison() error {
	if i.closed {
		return ErrClosed
	}
	if err := i.c.Synchronize(); err != nil {
		return fmt.Errorf("engine: poison: synchronize: %w", err)
	}
	keys := i.outKeys()
	if _, ok := i.bufs[bufKey{kernels.BufWork, 0}]; ok {
		keys = append(keys, bufKey{kernels.BufWork, 0})
	}
	for _, k := range keys {
		if err := i.c.MemsetD8(i.bufs[k].ptr, 0xFF, i.bufs[k].bytes, nil); err != nil {
			return fmt.Errorf("engine: poison %s[%d]: %w", k.buf, k.group, err)
		}
	}
	if err := i.c.Synchronize(); err != nil {
		return fmt.Errorf("engine: poison: synchronize: %w", err)
	}
	return nil
}

func (i *Instance) readOut() ([]byte, error) {
	if i.closed {
		return nil, ErrClosed
	}
	if err := i.c.Synchronize(); err != nil {
		return nil, fmt.Errorf("engine: read output: synchronize: %w", err)
	}
	var all []byte
	for _, k := range i.outKeys() {
		buf := make([]byte, i.bufs[k].bytes)
		if err := i.c.CopyDtoH(buf, i.bufs[k].ptr); err != nil {
			return nil, fmt.Errorf("engine: read %s[%d]: %w", k.buf, k.group, err)
		}
		all = append(all, buf...)
	}
	return all, nil
}

// Output returns all groups' C (fp16 bits), concatenated in group order.
// It waits for all device work first.
func (i *Instance) Output() ([]uint16, error) {
	if i.b.Variant.Reference {
		return nil, fmt.Errorf("engine: %s writes float64: use RunReference", i.b.Variant.Name)
	}
	raw, err := i.readOut()
	if err != nil {
		return nil, err
	}
	out := make([]uint16, len(raw)/2)
	for n := range out {
		out[n] = binary.LittleEndian.Uint16(raw[2*n:])
	}
	return out, nil
}

// InputHash is the sha256 (hex) of every input buffer read back from the
// device, in a fixed order: a kernel that writes its inputs changes it.
func (i *Instance) InputHash() (string, error) {
	if i.closed {
		return "", ErrClosed
	}
	if err := i.c.Synchronize(); err != nil {
		return "", fmt.Errorf("engine: input hash: synchronize: %w", err)
	}
	h := sha256.New()
	for _, k := range inputKeys(i.dual, i.shape) {
		buf := make([]byte, i.bufs[k].bytes)
		if err := i.c.CopyDtoH(buf, i.bufs[k].ptr); err != nil {
			return "", fmt.Errorf("engine: input hash: read %s[%d]: %w", k.buf, k.group, err)
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Plan is the launch plan the instance runs.
func (i *Instance) Plan() *kernels.Plan { return i.plan }

// Module names the module i loaded: the concrete variant it was compiled
// from (Built.ModuleFor) and its cache key.
func (i *Instance) Module() (name, key string) { return i.modName, i.modKey }

// Built is what the instance was prepared from.
func (i *Instance) Built() *Built { return i.b }

// Close frees everything the instance made; later calls return ErrClosed.
// It synchronizes first so nothing in flight uses the buffers.
func (i *Instance) Close() error {
	if i.closed {
		return nil
	}
	i.closed = true
	errs := []error{i.c.Synchronize()}
	errs = append(errs, i.graph.Destroy())
	if i.capture != nil {
		errs = append(errs, i.capture.Destroy())
	}
	for _, st := range i.side {
		errs = append(errs, st.Destroy())
	}
	errs = append(errs, i.fork.Destroy())
	for _, e := range i.joins {
		errs = append(errs, e.Destroy())
	}
	keys := make([]bufKey, 0, len(i.bufs))
	for k := range i.bufs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].buf != keys[b].buf {
			return keys[a].buf < keys[b].buf
		}
		return keys[a].group < keys[b].group
	})
	for _, k := range keys {
		errs = append(errs, i.c.Free(i.bufs[k].ptr))
	}
	if i.mod != nil {
		errs = append(errs, i.mod.Unload())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("engine: close %s: %w", i.b.Variant.Name, err)
	}
	return nil
}

// RunReference runs the reference variant b on s's inputs and returns its
// float64 output, concatenated in group order like Output.
func RunReference(c *gpu.Ctx, b *Built, s kernels.Shape, in Inputs) (out []float64, err error) {
	if !b.Variant.Reference {
		return nil, fmt.Errorf("engine: RunReference needs the reference variant, got %s", b.Variant.Name)
	}
	i, err := Prepare(c, b, s, kernels.Limits{}, in)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, i.Close()) }()
	if err := i.Poison(); err != nil {
		return nil, err
	}
	if err := i.Run(nil); err != nil {
		return nil, err
	}
	raw, err := i.readOut()
	if err != nil {
		return nil, err
	}
	out = make([]float64, len(raw)/8)
	for n := range out {
		out[n] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*n:]))
	}
	return out, nil
}

// copyInputs copies every input buffer of from into i's (same shape), and
// waits until done.
func (i *Instance) copyInputs(from *Instance) error {
	if err := i.c.Synchronize(); err != nil {
		return fmt.Errorf("engine: copy inputs: synchronize: %w", err)
	}
	for _, k := range inputKeys(i.dual, i.shape) {
		if err := i.c.CopyDtoD(i.bufs[k].ptr, from.bufs[k].ptr, i.bufs[k].bytes, nil); err != nil {
			return fmt.Errorf("engine: copy %s[%d]: %w", k.buf, k.group, err)
		}
	}
	if err := i.c.Synchronize(); err != nil {
		return fmt.Errorf("engine: copy inputs: synchronize: %w", err)
	}
	return nil
}
