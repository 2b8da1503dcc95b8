// Package engine runs one kernel variant's launch plan on a device: it
// compiles the variant (Build, NVRTC only), allocates and uploads one
// shape's inputs (Prepare), and enqueues complete executions (Run) that
// internal/bench times and the device tests check.
//
// All methods that touch the device must be called inside the gpu.Device.Do
// call whose Ctx made the Instance.
package engine

import (
	"fmt"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

// Inputs are one shape's host operands: exactly one of Group and Dual is set,
// matching the variant's problem.
type Inputs struct {
	Group *nvfp4.GroupInputs
	Dual  *nvfp4.DualInputs
}

// Built is one variant compiled for one device architecture: one module,
// or for a variant with auto tile sizes one module per candidate
// (Variant.Candidates), of which Prepare loads the one the shape resolves
// to (Variant.Resolve).
type Built struct {
	Variant  kernels.Variant
	Compiled *gpu.Compiled // the module; for auto tiles the first candidate's
	// Candidates holds every candidate's module by the concrete variant's
	// name when Variant has auto tile sizes; nil otherwise.
	Candidates map[string]*gpu.Compiled
	Options    []string // the exact NVRTC options (for auto tiles, the first candidate's)
	Arch       string
	// Attrs holds each entry point's resource figures (registers, local
	// bytes, ...); Prepare fills it from the loaded module the first time.
	// For auto tiles the key is "<concrete variant> <entry point>".
	Attrs map[string]gpu.FuncAttrs
	// PtxasLog is the compiler's resource report (ptxas -v) for each entry
	// (for auto tiles, each candidate's, headed by its name).
	PtxasLog string
}

// Instance is one variant on one shape with its device buffers, module,
// streams and (for graph mode) the instantiated graph.
type Instance struct {
	c       *gpu.Ctx
	b       *Built
	shape   kernels.Shape
	plan    *kernels.Plan
	dual    bool
	mod     *gpu.Module
	modName string // the concrete variant mod was compiled from (Built.ModuleFor)
	modKey  string // and its cache key
	funcs   map[string]*gpu.Function
	bufs    map[bufKey]buffer
	side    []*gpu.Stream // side streams 1..n of the plan (index i-1)
	fork    *gpu.Event
	joins   []*gpu.Event
	capture *gpu.Stream
	graph   *gpu.GraphExec
	closed  bool
}

type bufKey struct {
	buf   kernels.Buffer
	group int
}

type buffer struct {
	ptr   gpu.DevPtr
	bytes int64
}

// ErrClosed is returned by an Instance used after Close.
var ErrClosed = fmt.Errorf("engine: instance closed")
