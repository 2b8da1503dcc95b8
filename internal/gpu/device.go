package gpu

/*
#include <stdlib.h>
#include "cudadl.h"
*/
import "C"

import (
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// CUdevice_attribute values used by Open.
const (
	attrMaxThreadsPerBlock     = 1
	attrMultiprocessorCount    = 16
	attrL2CacheSize            = 38
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	attrMaxSharedPerSM         = 81
	attrMaxSharedPerBlockOptin = 97
)

// DeviceCount is the number of CUDA devices. A driver that loads but sees
// no GPU gives 0 and no error; a missing driver gives *UnavailableError
// naming libcuda.so.1.
func DeviceCount() (int, error) {
	api, noDevs, err := loadDriver()
	if err != nil {
		return 0, err
	}
	if noDevs {
		return 0, nil
	}
	var n C.int
	if err := cuCheck(api, "cuDeviceGetCount", C.pt_cuDeviceGetCount(api, &n)); err != nil {
		return 0, &UnavailableError{What: libcudaName, Err: err}
	}
	return int(n), nil
}

// Device is one GPU with its primary context current on a dedicated OS
// thread. Its methods are safe for concurrent use; work submitted through
// Do runs one fn at a time, in order of arrival.
type Device struct {
	ordinal int
	info    DeviceInfo
	api     *C.pt_cu_api
	jobs    chan job
	done    chan struct{} // closed when the device thread has exited

	closeOnce sync.Once
	closeErr  error
	closeMu   sync.RWMutex // held for reading while a job is being sent
	closed    bool

	poison atomic.Pointer[CUDAError]
	ctx    Ctx
}

type job struct {
	fn  func(*Ctx) error
	res chan error
}

// Open starts the device thread for the GPU at ordinal, retains its primary
// context and reads its inventory. Close it when done.
func Open(ordinal int) (*Device, error) {
	if ordinal < 0 {
		return nil, fmt.Errorf("gpu: open: device ordinal %d is negative", ordinal)
	}
	api, noDevs, err := loadDriver()
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("CUDA device %d", ordinal)
	if noDevs {
		return nil, &UnavailableError{What: what, Err: errors.New("the CUDA driver sees no GPU (CUDA_ERROR_NO_DEVICE)")}
	}
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal >= n {
		return nil, &UnavailableError{What: what, Err: fmt.Errorf("only %d CUDA device(s) present", n)}
	}
	d := &Device{ordinal: ordinal, api: api, jobs: make(chan job), done: make(chan struct{})}
	d.ctx.d = d
	ready := make(chan error)
	go d.loop(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	d.fillHostInfo()
	return d, nil
}

// loop is the device thread: it owns the OS thread and the context.
func (d *Device) loop(ready chan<- error) {
	runtime.LockOSThread()
	defer close(d.done)
	// The thread stays locked on purpose when it exits: the Go runtime then
	// discards it instead of handing a thread with a CUDA context to other
	// goroutines.
	api := d.api
	var dev C.CUdevice
	if err := cuCheck(api, "cuDeviceGet", C.pt_cuDeviceGet(api, &dev, C.int(d.ordinal))); err != nil {
		ready <- &UnavailableError{What: fmt.Sprintf("CUDA device %d", d.ordinal), Err: err}
		return
	}
	var cctx C.CUcontext
	if err := cuCheck(api, "cuDevicePrimaryCtxRetain", C.pt_cuDevicePrimaryCtxRetain(api, &cctx, dev)); err != nil {
		ready <- &UnavailableError{What: fmt.Sprintf("CUDA device %d", d.ordinal), Err: err}
		return
	}
	release := func() error {
		return cuCheck(api, "cuDevicePrimaryCtxRelease", C.pt_cuDevicePrimaryCtxRelease(api, dev))
	}
	if err := cuCheck(api, "cuCtxSetCurrent", C.pt_cuCtxSetCurrent(api, cctx)); err != nil {
		release()
		ready <- &UnavailableError{What: fmt.Sprintf("CUDA device %d", d.ordinal), Err: err}
		return
	}
	if err := d.readInfo(dev); err != nil {
		release()
		ready <- err
		return
	}
	ready <- nil

	for j := range d.jobs {
		j.res <- d.run(j.fn)
	}
	if d.ctx.scratch != nil {
		C.free(d.ctx.scratch)
		d.ctx.scratch = nil
	}
	C.pt_cuCtxSetCurrent(api, nil)
	d.closeErr = release()
	if d.poison.Load() != nil {
		// Reset is the documented way to drop a primary context's state.
		// On driver 580 it does not make the device usable again after a
		// sticky error (a later retain still fails), but a driver that can
		// recover gets the chance.
		if err := cuCheck(api, "cuDevicePrimaryCtxReset", C.pt_cuDevicePrimaryCtxReset(api, dev)); err != nil {
			d.closeErr = errors.Join(d.closeErr, err)
		}
	}
}

// run calls fn with the context live, turning a panic into an error so the
// device thread survives it.
func (d *Device) run(fn func(*Ctx) error) (err error) {
	if p := d.poison.Load(); p != nil {
		return &PoisonedError{Ordinal: d.ordinal, Cause: p}
	}
	d.ctx.live.Store(true)
	defer func() {
		d.ctx.live.Store(false)
		if r := recover(); r != nil {
			err = fmt.Errorf("gpu: device %d: panic in Do: %v", d.ordinal, r)
		}
	}()
	return fn(&d.ctx)
}

func (d *Device) readInfo(dev C.CUdevice) error {
	api := d.api
	info := DeviceInfo{Ordinal: d.ordinal, CUDADriverVersion: driver.version}
	var name [256]C.char
	if err := cuCheck(api, "cuDeviceGetName", C.pt_cuDeviceGetName(api, &name[0], C.int(len(name)), dev)); err != nil {
		return fmt.Errorf("gpu: open device %d: %w", d.ordinal, err)
	}
	info.Name = C.GoString(&name[0])
	var uuid C.CUuuid
	if err := cuCheck(api, "cuDeviceGetUuid", C.pt_cuDeviceGetUuid(api, &uuid, dev)); err == nil {
		b := C.GoBytes(unsafe.Pointer(&uuid.bytes[0]), 16)
		h := hex.EncodeToString(b)
		info.UUID = "GPU-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	var total C.size_t
	if err := cuCheck(api, "cuDeviceTotalMem", C.pt_cuDeviceTotalMem(api, &total, dev)); err != nil {
		return fmt.Errorf("gpu: open device %d: %w", d.ordinal, err)
	}
	info.MemBytes = int64(total)
	attrs := []struct {
		attr int
		name string
		dst  *int
	}{
		{attrComputeCapabilityMajor, "compute capability major", &info.CCMajor},
		{attrComputeCapabilityMinor, "compute capability minor", &info.CCMinor},
		{attrMultiprocessorCount, "multiprocessor count", &info.SMs},
		{attrMaxSharedPerBlockOptin, "max shared per block (opt-in)", &info.MaxSharedPerBlockOptin},
		{attrMaxSharedPerSM, "max shared per SM", &info.MaxSharedPerSM},
	}
	for _, a := range attrs {
		var v C.int
		if err := cuCheck(api, "cuDeviceGetAttribute "+a.name, C.pt_cuDeviceGetAttribute(api, &v, C.int(a.attr), dev)); err != nil {
			return fmt.Errorf("gpu: open device %d: %w", d.ordinal, err)
		}
		*a.dst = int(v)
	}
	var l2 C.int
	if err := cuCheck(api, "cuDeviceGetAttribute L2 cache size", C.pt_cuDeviceGetAttribute(api, &l2, attrL2CacheSize, dev)); err != nil {
		return fmt.Errorf("gpu: open device %d: %w", d.ordinal, err)
	}
	info.L2Bytes = int64(l2)
	info.Arch = ArchFor(info.CCMajor, info.CCMinor)
	d.info = info
	return nil
}

// fillHostInfo adds what NVRTC and NVML know; either may be missing.
func (d *Device) fillHostInfo() {
	if v, err := NVRTCVersion(); err == nil {
		d.info.NVRTCVersion = v
	}
	if s, err := nvmlStatic(d.info.UUID); err == nil {
		d.info.DriverVersion = s.driverVersion
		d.info.MaxClockSMMHz = s.maxSMClockMHz
	}
	if t, err := d.Telemetry(); err == nil {
		d.info.ClockSMMHz = t.SMClockMHz
		d.info.ClockMemMHz = t.MemClockMHz
		d.info.PowerLimitW = t.PowerLimitW
	}
}

// Info is the inventory read at Open.
func (d *Device) Info() DeviceInfo { return d.info }

// Ordinal is the device's CUDA ordinal.
func (d *Device) Ordinal() int { return d.ordinal }

// Poisoned is the sticky error that made the device unusable, or nil.
func (d *Device) Poisoned() error {
	if p := d.poison.Load(); p != nil {
		return &PoisonedError{Ordinal: d.ordinal, Cause: p}
	}
	return nil
}

// Do runs fn on the device thread with the context current and returns
// fn's error. c and everything made from it are valid only until fn
// returns. After a sticky error Do returns *PoisonedError without calling
// fn; after Close it returns ErrClosed. Do must not be called from inside
// fn.
func (d *Device) Do(fn func(c *Ctx) error) error {
	if fn == nil {
		return errors.New("gpu: Do: nil function")
	}
	if err := d.Poisoned(); err != nil {
		return err
	}
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return ErrClosed
	}
	j := job{fn: fn, res: make(chan error, 1)}
	d.jobs <- j
	d.closeMu.RUnlock()
	return <-j.res
}

// Close waits for queued work, releases the primary context and ends the
// device thread. Later calls return the first call's result.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		d.closeMu.Lock()
		d.closed = true
		close(d.jobs)
		d.closeMu.Unlock()
		<-d.done
	})
	return d.closeErr
}
