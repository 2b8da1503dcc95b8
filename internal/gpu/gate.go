package gpu

/*
#include "cudadl.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Gate holds a stream at a point until the host opens it. A timed sample
// enqueues its start event, its launches and its end event behind a closed
// gate and opens it once all are enqueued, so the interval between the
// events never contains the host's own enqueueing: without it, a sample
// whose launches reach the driver late (a host thread descheduled, a
// garbage collection) times the GPU idling between them. Measured on an
// H100 with a two-launch variant, 0.4-0.7% of samples were 1.2x the median
// or slower with one build of the bench and 1.1-4.6% with another whose
// per-launch host path differed by a few instructions (docs/BENCHMARKS.md
// section 15): the tail was the host's. (nvbench holds its stream the same
// way, with a kernel spinning on a host flag; this uses the driver's
// stream wait on a word of mapped host memory, cuStreamWaitValue32.)
type Gate struct {
	c    *Ctx
	host unsafe.Pointer // 4 bytes of pinned, device-mapped host memory
	dev  C.CUdeviceptr
	n    uint32 // the value the next Hold waits for
}

// ErrGateUnsupported is returned by NewGate where the driver lacks mapped
// host memory or stream waits; callers then time without a gate.
var ErrGateUnsupported = errors.New("gpu: this driver cannot hold a stream on a host flag (cuMemHostAlloc, cuStreamWaitValue32)")

// NewGate allocates the gate's host word.
func (c *Ctx) NewGate() (*Gate, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	a := c.d.api
	if a.cuMemHostAlloc == nil || a.cuMemFreeHost == nil || a.cuMemHostGetDevicePointer == nil || a.cuStreamWaitValue32 == nil {
		return nil, ErrGateUnsupported
	}
	var p unsafe.Pointer
	if err := c.call("cuMemHostAlloc (gate)", C.pt_cuMemHostAlloc(a, &p, 4, C.PT_MEMHOSTALLOC_MAPPED)); err != nil {
		return nil, err
	}
	C.pt_store_release(p, 0)
	g := &Gate{c: c, host: p}
	if err := c.call("cuMemHostGetDevicePointer (gate)", C.pt_cuMemHostGetDevicePointer(a, &g.dev, p, 0)); err != nil {
		C.pt_cuMemFreeHost(a, p)
		return nil, err
	}
	g.n = 1
	return g, nil
}

// Hold enqueues on s a wait for the gate's next opening: work enqueued on s
// after it does not start before Open.
func (g *Gate) Hold(s *Stream) error {
	if err := g.c.check(); err != nil {
		return err
	}
	if g.host == nil {
		return errors.New("gpu: gate already freed")
	}
	hs, err := s.handle(g.c)
	if err != nil {
		return err
	}
	return g.c.call("cuStreamWaitValue32 (gate)", C.pt_cuStreamWaitValue32(g.c.d.api, hs, g.dev, C.uint(g.n), C.PT_STREAM_WAIT_GEQ))
}

// Open releases the work held by the last Hold. Every Hold must be followed
// by an Open, also when enqueueing fails half way, or the stream waits
// forever.
func (g *Gate) Open() {
	if g.host == nil {
		return
	}
	C.pt_store_release(g.host, C.uint(g.n))
	g.n++
}

// Free releases the host word; the gate must be open (no stream waiting).
func (g *Gate) Free() error {
	if g == nil || g.host == nil {
		return nil
	}
	if err := g.c.check(); err != nil {
		return err
	}
	err := g.c.call("cuMemFreeHost (gate)", C.pt_cuMemFreeHost(g.c.d.api, g.host))
	g.host = nil
	return err
}
