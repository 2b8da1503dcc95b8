package gpu

/*
#include <stdlib.h>
#include <string.h>
#include "cudadl.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Ctx is the device's context as seen from inside Device.Do. Its methods,
// and those of the objects it makes, run CUDA calls directly on the device
// thread: no channel hop per call (a Do round trip costs about 17 us on the
// H100 machine, a Launch about 3.8 us), so timing loops belong inside one
// Do. Ctx and its objects may be used only while some Do is running.
type Ctx struct {
	d    *Device
	live atomic.Bool // true only while a Do fn runs; atomic so misuse from another goroutine is caught, not a data race

	scratch     unsafe.Pointer // C memory for kernel parameters, reused
	scratchSize int
}

// Device is the device this context belongs to.
func (c *Ctx) Device() *Device { return c.d }

// check validates that c is used inside Do.
func (c *Ctx) check() error {
	if c == nil || c.d == nil {
		return errors.New("gpu: nil Ctx")
	}
	if !c.live.Load() {
		return ErrCtxOutsideDo
	}
	return nil
}

// call turns a driver result into an error and poisons the device when the
// error is sticky.
func (c *Ctx) call(op string, rc C.CUresult) error {
	err := cuCheck(c.d.api, op, rc)
	var ce *CUDAError
	if errors.As(err, &ce) && ce.Sticky {
		c.d.poison.CompareAndSwap(nil, ce)
	}
	return err
}

// Synchronize waits for all work in the context and surfaces asynchronous
// errors (a kernel's illegal address shows up here).
func (c *Ctx) Synchronize() error {
	if err := c.check(); err != nil {
		return err
	}
	return c.call("cuCtxSynchronize", C.pt_cuCtxSynchronize(c.d.api))
}

// MemInfo is the device's free and total memory in bytes.
func (c *Ctx) MemInfo() (free, total int64, err error) {
	if err := c.check(); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := c.call("cuMemGetInfo", C.pt_cuMemGetInfo(c.d.api, &f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}

// Alloc allocates bytes of device memory (uninitialised).
func (c *Ctx) Alloc(bytes int64) (DevPtr, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	if bytes <= 0 {
		return 0, fmt.Errorf("gpu: alloc: size %d must be positive", bytes)
	}
	var p C.CUdeviceptr
	if err := c.call(fmt.Sprintf("cuMemAlloc %d bytes", bytes), C.pt_cuMemAlloc(c.d.api, &p, C.size_t(bytes))); err != nil {
		return 0, err
	}
	return DevPtr(p), nil
}

// Free releases memory from Alloc. Freeing 0 is a no-op.
func (c *Ctx) Free(p DevPtr) error {
	if err := c.check(); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	return c.call("cuMemFree", C.pt_cuMemFree(c.d.api, C.CUdeviceptr(p)))
}

// CopyHtoD copies src to device memory at dst; it returns once src may be
// reused.
func (c *Ctx) CopyHtoD(dst DevPtr, src []byte) error {
	if err := c.check(); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	return c.call(fmt.Sprintf("cuMemcpyHtoD %d bytes", len(src)), C.pt_cuMemcpyHtoD(c.d.api, C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

// CopyDtoH copies len(dst) bytes from device memory at src into dst. It
// waits for prior work on the legacy default stream; work on non-blocking
// streams must be synchronized first.
func (c *Ctx) CopyDtoH(dst []byte, src DevPtr) error {
	if err := c.check(); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return c.call(fmt.Sprintf("cuMemcpyDtoH %d bytes", len(dst)), C.pt_cuMemcpyDtoH(c.d.api, unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
}

// CopyDtoD copies n bytes between device buffers, asynchronously on s
// (nil = the legacy default stream).
func (c *Ctx) CopyDtoD(dst, src DevPtr, n int64, s *Stream) error {
	if err := c.check(); err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("gpu: copy device to device: negative size %d", n)
	}
	hs, err := s.handle(c)
	if err != nil {
		return err
	}
	return c.call("cuMemcpyDtoDAsync", C.pt_cuMemcpyDtoDAsync(c.d.api, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), hs))
}

// MemsetD8 sets n bytes at p to v, asynchronously on s (nil = the legacy
// default stream).
func (c *Ctx) MemsetD8(p DevPtr, v byte, n int64, s *Stream) error {
	if err := c.check(); err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("gpu: memset: negative size %d", n)
	}
	hs, err := s.handle(c)
	if err != nil {
		return err
	}
	return c.call(fmt.Sprintf("cuMemsetD8Async %d bytes", n), C.pt_cuMemsetD8Async(c.d.api, C.CUdeviceptr(p), C.uchar(v), C.size_t(n), hs))
}

// Module is a loaded cubin or PTX image.
type Module struct {
	c *Ctx
	h C.CUmodule
}

// LoadModule loads a cubin (or NUL-terminated PTX) from Compile.
func (c *Ctx) LoadModule(image []byte) (*Module, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(image) == 0 {
		return nil, errors.New("gpu: load module: empty image")
	}
	// The driver reads the image during the call only; a C copy keeps the
	// cgo pointer rules simple and guarantees PTX a terminating NUL.
	buf := C.malloc(C.size_t(len(image) + 1))
	defer C.free(buf)
	C.memcpy(buf, unsafe.Pointer(&image[0]), C.size_t(len(image)))
	*(*byte)(unsafe.Add(buf, len(image))) = 0
	var m C.CUmodule
	if err := c.call("cuModuleLoadData", C.pt_cuModuleLoadData(c.d.api, &m, buf)); err != nil {
		return nil, err
	}
	return &Module{c: c, h: m}, nil
}

// Unload unloads the module; its Functions become invalid.
func (m *Module) Unload() error {
	if m == nil || m.h == nil {
		return nil
	}
	if err := m.c.check(); err != nil {
		return err
	}
	err := m.c.call("cuModuleUnload", C.pt_cuModuleUnload(m.c.d.api, m.h))
	m.h = nil
	return err
}

// Function is a kernel entry point in a Module.
type Function struct {
	m    *Module
	h    C.CUfunction
	name string

	// params holds each kernel parameter's size, from cuFuncGetParamInfo
	// (driver 12.4+); nil when the driver cannot say.
	params      []int
	paramsKnown bool
}

// Function looks up an extern "C" kernel by name.
func (m *Module) Function(name string) (*Function, error) {
	if m == nil || m.h == nil {
		return nil, errors.New("gpu: function lookup in an unloaded module")
	}
	if err := m.c.check(); err != nil {
		return nil, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.CUfunction
	if err := m.c.call("cuModuleGetFunction "+name, C.pt_cuModuleGetFunction(m.c.d.api, &f, m.h, cname)); err != nil {
		return nil, err
	}
	return &Function{m: m, h: f, name: name}, nil
}

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// CUfunction_attribute values.
const (
	funcMaxThreadsPerBlock  = 0
	funcSharedSizeBytes     = 1
	funcConstSizeBytes      = 2
	funcLocalSizeBytes      = 3
	funcNumRegs             = 4
	funcPTXVersion          = 5
	funcBinaryVersion       = 6
	funcMaxDynamicSharedMem = 8
)

// Attributes reads the kernel's registers, shared, local memory and limits.
func (f *Function) Attributes() (FuncAttrs, error) {
	var a FuncAttrs
	if err := f.m.c.check(); err != nil {
		return a, err
	}
	for _, x := range []struct {
		attr int
		dst  *int
	}{
		{funcMaxThreadsPerBlock, &a.MaxThreads},
		{funcSharedSizeBytes, &a.SharedStatic},
		{funcConstSizeBytes, &a.ConstBytes},
		{funcLocalSizeBytes, &a.LocalBytes},
		{funcNumRegs, &a.NumRegs},
		{funcPTXVersion, &a.PTXVersion},
		{funcBinaryVersion, &a.BinaryVersion},
		{funcMaxDynamicSharedMem, &a.MaxDynamicShared},
	} {
		var v C.int
		if err := f.m.c.call(fmt.Sprintf("cuFuncGetAttribute %d of %s", x.attr, f.name), C.pt_cuFuncGetAttribute(f.m.c.d.api, &v, C.int(x.attr), f.h)); err != nil {
			return a, err
		}
		*x.dst = int(v)
	}
	return a, nil
}

// SetMaxDynamicShared raises the kernel's dynamic shared-memory limit, which
// a launch needs before it may ask for more than 48 KiB.
func (f *Function) SetMaxDynamicShared(bytes int) error {
	if err := f.m.c.check(); err != nil {
		return err
	}
	if bytes < 0 {
		return fmt.Errorf("gpu: %s: negative dynamic shared memory %d", f.name, bytes)
	}
	return f.m.c.call(fmt.Sprintf("cuFuncSetAttribute max dynamic shared %d of %s", bytes, f.name),
		C.pt_cuFuncSetAttribute(f.m.c.d.api, f.h, funcMaxDynamicSharedMem, C.int(bytes)))
}

// paramSizes asks the driver for the kernel's parameter sizes, once.
func (f *Function) paramSizes() []int {
	if f.paramsKnown {
		return f.params
	}
	f.paramsKnown = true
	api := f.m.c.d.api
	var sizes []int
	for i := 0; i < 4096; i++ {
		var off, size C.size_t
		rc := C.pt_cuFuncGetParamInfo(api, f.h, C.size_t(i), &off, &size)
		if rc == C.PT_MISSING {
			return nil // driver older than 12.4: no check
		}
		if rc != 0 {
			break // CUDA_ERROR_INVALID_VALUE past the last parameter
		}
		sizes = append(sizes, int(size))
	}
	f.params = sizes
	if f.params == nil {
		f.params = []int{}
	}
	return f.params
}

// argSize is the size in bytes of one kernel argument.
func argSize(a any) (int, error) {
	switch v := a.(type) {
	case DevPtr, int64, uint64, float64:
		return 8, nil
	case int32, uint32, float32:
		return 4, nil
	case []byte:
		if len(v) == 0 {
			return 0, errors.New("empty []byte struct argument")
		}
		return len(v), nil
	case int:
		return 0, errors.New("plain int is ambiguous: pass int32 or int64")
	}
	return 0, fmt.Errorf("unsupported argument type %T (use DevPtr, int32, uint32, int64, uint64, float32, float64 or []byte)", a)
}

// putArg writes a (already sized by argSize) at dst, in host byte order.
func putArg(dst unsafe.Pointer, a any) {
	switch v := a.(type) {
	case DevPtr:
		*(*uint64)(dst) = uint64(v)
	case int64:
		*(*int64)(dst) = v
	case uint64:
		*(*uint64)(dst) = v
	case float64:
		*(*float64)(dst) = v
	case int32:
		*(*int32)(dst) = v
	case uint32:
		*(*uint32)(dst) = v
	case float32:
		*(*float32)(dst) = v
	case []byte:
		copy(unsafe.Slice((*byte)(dst), len(v)), v)
	}
}

// maxLaunchArgs bounds the argument list so sizes live on the stack.
const maxLaunchArgs = 64

// Launch launches f on s (nil = the legacy default stream). args are the
// kernel's parameters in order: DevPtr, int32, uint32, int64, uint64,
// float32, float64, or []byte for a struct passed by value (its bytes laid
// out as the kernel declares it). Where the driver reports parameter sizes
// (12.4+), the count and sizes are checked before launching.
func (c *Ctx) Launch(f *Function, grid, block [3]uint32, sharedBytes uint32, s *Stream, args ...any) error {
	return c.launch(f, grid, block, sharedBytes, s, false, args)
}

// LaunchOverlapped is Launch with programmatic dependent launch allowed
// (sm_90+): f's blocks may start while the kernel before it on s is still
// running, once every block of that kernel has executed
// griddepcontrol.launch_dependents, so f's prologue overlaps that kernel's
// last wave. f must execute griddepcontrol.wait before it reads anything
// that kernel writes. Where the driver has no cuLaunchKernelEx (before CUDA
// 12.0) it is a plain launch, which the wait then finds complete.
func (c *Ctx) LaunchOverlapped(f *Function, grid, block [3]uint32, sharedBytes uint32, s *Stream, args ...any) error {
	return c.launch(f, grid, block, sharedBytes, s, true, args)
}

func (c *Ctx) launch(f *Function, grid, block [3]uint32, sharedBytes uint32, s *Stream, overlap bool, args []any) error {
	if err := c.check(); err != nil {
		return err
	}
	if f == nil || f.h == nil || f.m == nil || f.m.h == nil {
		return errors.New("gpu: launch: nil function or unloaded module")
	}
	for i := 0; i < 3; i++ {
		if grid[i] == 0 || block[i] == 0 {
			return fmt.Errorf("gpu: launch %s: grid %v and block %v need every dimension >= 1", f.name, grid, block)
		}
	}
	if len(args) > maxLaunchArgs {
		return fmt.Errorf("gpu: launch %s: %d arguments, at most %d", f.name, len(args), maxLaunchArgs)
	}
	hs, err := s.handle(c)
	if err != nil {
		return err
	}
	var sizes [maxLaunchArgs]int
	// Pointer array first, then each value on a 16-byte boundary.
	total := (len(args)*8 + 15) &^ 15
	for i, a := range args {
		n, err := argSize(a)
		if err != nil {
			return fmt.Errorf("gpu: launch %s: argument %d: %w", f.name, i, err)
		}
		sizes[i] = n
		total += (n + 15) &^ 15
	}
	if want := f.paramSizes(); want != nil {
		if len(want) != len(args) {
			return fmt.Errorf("gpu: launch %s: kernel takes %d parameters, got %d arguments", f.name, len(want), len(args))
		}
		for i, sz := range want {
			if sz != sizes[i] {
				return fmt.Errorf("gpu: launch %s: parameter %d is %d bytes, argument %d (%T) is %d", f.name, i, sz, i, args[i], sizes[i])
			}
		}
	}
	// kernelParams is an array of pointers to the values. It lives in C
	// memory (cgo forbids Go memory holding Go pointers), reused across
	// launches: the driver copies the values before cuLaunchKernel returns.
	if total > c.scratchSize {
		if c.scratch != nil {
			C.free(c.scratch)
		}
		size := max(total, 1024)
		c.scratch = C.malloc(C.size_t(size))
		if c.scratch == nil {
			c.scratchSize = 0
			return fmt.Errorf("gpu: launch %s: out of host memory for %d parameter bytes", f.name, size)
		}
		c.scratchSize = size
	}
	var params unsafe.Pointer
	if len(args) > 0 {
		params = c.scratch
		// uintptr, not unsafe.Pointer: these are C addresses in C memory.
		ptrs := unsafe.Slice((*uintptr)(c.scratch), len(args))
		off := (len(args)*8 + 15) &^ 15
		for i, a := range args {
			dst := unsafe.Add(c.scratch, off)
			putArg(dst, a)
			ptrs[i] = uintptr(dst)
			off += (sizes[i] + 15) &^ 15
		}
	}
	if overlap {
		rc := C.pt_launch_overlapped(c.d.api, f.h, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
			C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(sharedBytes), hs, (*unsafe.Pointer)(params))
		if rc != C.PT_MISSING {
			if rc != 0 {
				return c.call(fmt.Sprintf("cuLaunchKernelEx (programmatic serialization) %s grid %v block %v shared %d", f.name, grid, block, sharedBytes), rc)
			}
			return nil
		}
	}
	rc := C.pt_cuLaunchKernel(c.d.api, f.h, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(sharedBytes), hs, (*unsafe.Pointer)(params), nil)
	if rc != 0 {
		return c.call(fmt.Sprintf("cuLaunchKernel %s grid %v block %v shared %d", f.name, grid, block, sharedBytes), rc)
	}
	return nil
}

// Stream is a CUDA stream created non-blocking: it does not synchronize
// with the legacy default stream.
type Stream struct {
	c *Ctx
	h C.CUstream
}

const cuStreamNonBlocking = 1

// NewStream creates a non-blocking stream.
func (c *Ctx) NewStream() (*Stream, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var s C.CUstream
	if err := c.call("cuStreamCreate", C.pt_cuStreamCreate(c.d.api, &s, cuStreamNonBlocking)); err != nil {
		return nil, err
	}
	return &Stream{c: c, h: s}, nil
}

// handle is the stream's driver handle: 0 (legacy default) for nil.
func (s *Stream) handle(c *Ctx) (C.CUstream, error) {
	if s == nil {
		return nil, nil
	}
	if s.h == nil {
		return nil, errors.New("gpu: stream already destroyed")
	}
	if s.c != c {
		return nil, errors.New("gpu: stream belongs to another device")
	}
	return s.h, nil
}

// Synchronize waits for the stream's work.
func (s *Stream) Synchronize() error {
	if err := s.c.check(); err != nil {
		return err
	}
	if s.h == nil {
		return errors.New("gpu: stream already destroyed")
	}
	return s.c.call("cuStreamSynchronize", C.pt_cuStreamSynchronize(s.c.d.api, s.h))
}

// cudaErrorNotReady is CUDA_ERROR_NOT_READY: cuStreamQuery's answer for a
// stream with work still in flight.
const cudaErrorNotReady = 600

// Idle reports whether every piece of work enqueued on s so far has
// finished, without waiting for it.
func (s *Stream) Idle() (bool, error) {
	if err := s.c.check(); err != nil {
		return false, err
	}
	if s.h == nil {
		return false, errors.New("gpu: stream already destroyed")
	}
	rc := C.pt_cuStreamQuery(s.c.d.api, s.h)
	if rc == cudaErrorNotReady {
		return false, nil
	}
	return true, s.c.call("cuStreamQuery", rc)
}

// WaitEvent makes later work on s wait until e has completed.
func (s *Stream) WaitEvent(e *Event) error {
	if err := s.c.check(); err != nil {
		return err
	}
	if s.h == nil || e == nil || e.h == nil {
		return errors.New("gpu: stream wait: destroyed stream or event")
	}
	return s.c.call("cuStreamWaitEvent", C.pt_cuStreamWaitEvent(s.c.d.api, s.h, e.h, 0))
}

// Destroy releases the stream (its queued work still completes).
func (s *Stream) Destroy() error {
	if s == nil || s.h == nil {
		return nil
	}
	if err := s.c.check(); err != nil {
		return err
	}
	err := s.c.call("cuStreamDestroy", C.pt_cuStreamDestroy(s.c.d.api, s.h))
	s.h = nil
	return err
}

// Event is a CUDA event with timing enabled.
type Event struct {
	c *Ctx
	h C.CUevent
}

// NewEvent creates an event that records time.
func (c *Ctx) NewEvent() (*Event, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var e C.CUevent
	if err := c.call("cuEventCreate", C.pt_cuEventCreate(c.d.api, &e, 0)); err != nil {
		return nil, err
	}
	return &Event{c: c, h: e}, nil
}

// Record enqueues the event on s (nil = the legacy default stream).
func (e *Event) Record(s *Stream) error {
	if err := e.c.check(); err != nil {
		return err
	}
	if e.h == nil {
		return errors.New("gpu: event already destroyed")
	}
	hs, err := s.handle(e.c)
	if err != nil {
		return err
	}
	return e.c.call("cuEventRecord", C.pt_cuEventRecord(e.c.d.api, e.h, hs))
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	if err := e.c.check(); err != nil {
		return err
	}
	if e.h == nil {
		return errors.New("gpu: event already destroyed")
	}
	return e.c.call("cuEventSynchronize", C.pt_cuEventSynchronize(e.c.d.api, e.h))
}

// Destroy releases the event.
func (e *Event) Destroy() error {
	if e == nil || e.h == nil {
		return nil
	}
	if err := e.c.check(); err != nil {
		return err
	}
	err := e.c.call("cuEventDestroy", C.pt_cuEventDestroy(e.c.d.api, e.h))
	e.h = nil
	return err
}

// ElapsedMs is the time between two completed events, in milliseconds
// (resolution about half a microsecond). Call it inside Do.
func ElapsedMs(start, end *Event) (float32, error) {
	if start == nil || end == nil || start.h == nil || end.h == nil {
		return 0, errors.New("gpu: elapsed time: nil or destroyed event")
	}
	if start.c != end.c {
		return 0, errors.New("gpu: elapsed time: events from different devices")
	}
	if err := start.c.check(); err != nil {
		return 0, err
	}
	var ms C.float
	if err := start.c.call("cuEventElapsedTime", C.pt_cuEventElapsedTime(start.c.d.api, &ms, start.h, end.h)); err != nil {
		return 0, err
	}
	return float32(ms), nil
}

// Graph is a captured CUDA graph.
type Graph struct {
	c *Ctx
	h C.CUgraph
}

// GraphExec is an instantiated graph, ready to launch.
type GraphExec struct {
	c *Ctx
	h C.CUgraphExec
}

const cuStreamCaptureModeThreadLocal = 1

// BeginCapture starts recording the work enqueued on s into a graph
// instead of running it. Capture needs a stream from NewStream.
func (s *Stream) BeginCapture() error {
	if err := s.c.check(); err != nil {
		return err
	}
	if s.h == nil {
		return errors.New("gpu: begin capture: stream destroyed")
	}
	return s.c.call("cuStreamBeginCapture", C.pt_cuStreamBeginCapture(s.c.d.api, s.h, cuStreamCaptureModeThreadLocal))
}

// EndCapture ends the capture begun by BeginCapture and returns the graph.
func (s *Stream) EndCapture() (*Graph, error) {
	if err := s.c.check(); err != nil {
		return nil, err
	}
	if s.h == nil {
		return nil, errors.New("gpu: end capture: stream destroyed")
	}
	var g C.CUgraph
	if err := s.c.call("cuStreamEndCapture", C.pt_cuStreamEndCapture(s.c.d.api, s.h, &g)); err != nil {
		return nil, err
	}
	return &Graph{c: s.c, h: g}, nil
}

// Instantiate prepares the graph for launching.
func (g *Graph) Instantiate() (*GraphExec, error) {
	if err := g.c.check(); err != nil {
		return nil, err
	}
	if g.h == nil {
		return nil, errors.New("gpu: instantiate: graph destroyed")
	}
	var ge C.CUgraphExec
	if err := g.c.call("cuGraphInstantiateWithFlags", C.pt_cuGraphInstantiateWithFlags(g.c.d.api, &ge, g.h, 0)); err != nil {
		return nil, err
	}
	return &GraphExec{c: g.c, h: ge}, nil
}

// Destroy releases the graph (instantiated copies stay valid).
func (g *Graph) Destroy() error {
	if g == nil || g.h == nil {
		return nil
	}
	if err := g.c.check(); err != nil {
		return err
	}
	err := g.c.call("cuGraphDestroy", C.pt_cuGraphDestroy(g.c.d.api, g.h))
	g.h = nil
	return err
}

// Launch replays the graph on s.
func (ge *GraphExec) Launch(s *Stream) error {
	if err := ge.c.check(); err != nil {
		return err
	}
	if ge.h == nil {
		return errors.New("gpu: graph launch: destroyed")
	}
	hs, err := s.handle(ge.c)
	if err != nil {
		return err
	}
	return ge.c.call("cuGraphLaunch", C.pt_cuGraphLaunch(ge.c.d.api, ge.h, hs))
}

// Destroy releases the executable graph.
func (ge *GraphExec) Destroy() error {
	if ge == nil || ge.h == nil {
		return nil
	}
	if err := ge.c.check(); err != nil {
		return err
	}
	err := ge.c.call("cuGraphExecDestroy", C.pt_cuGraphExecDestroy(ge.c.d.api, ge.h))
	ge.h = nil
	return err
}
