// Package gpu runs CUDA work on the local GPU: the CUDA driver API and NVRTC
// reached through dlopen from cgo, and NVML (go-nvml) for telemetry.
//
// The package builds and its tests run on machines without a GPU, a driver or
// a CUDA toolkit: every entry point then returns an *UnavailableError that
// names what is missing (errors.Is(err, ErrUnavailable)). No C function
// pointer is ever called before it was found by dlsym.
//
// Threading: a CUDA context is current per OS thread. A *Device owns one
// goroutine locked to its OS thread with the device's primary context
// current; all GPU work runs there through Device.Do. A *Ctx, and every
// Module, Function, Stream, Event, Graph and GraphExec made from it, may be
// used only inside a fn passed to Do (their methods return ErrCtxOutsideDo
// otherwise). The objects themselves live until destroyed or until Close,
// so one Do may create a stream that later Do calls use. Do not call Do or
// Close from inside Do: it deadlocks.
//
// Compilation (Compile, NVRTCVersion) needs only NVRTC, no device: CI
// compile-checks kernels with it.
//
// A sticky CUDA error (an illegal address, a device-side trap, a launch
// failure) poisons the context for good: the call that saw it returns a
// *CUDAError with Sticky set, and every later Do returns a *PoisonedError
// (errors.Is(err, ErrPoisoned)) without running its fn. The process cannot
// use that GPU again (checked on driver 580: even after the last release
// and cuDevicePrimaryCtxReset, a new Open fails with the same sticky
// error), so whoever runs untrusted kernels should do it in a child
// process and restart that process after a poisoning.
package gpu

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable is the sentinel behind every *UnavailableError.
var ErrUnavailable = errors.New("gpu: unavailable")

// ErrPoisoned is the sentinel behind *PoisonedError.
var ErrPoisoned = errors.New("gpu: device poisoned by a sticky CUDA error")

// ErrClosed is returned by Do and Telemetry after Close.
var ErrClosed = errors.New("gpu: device closed")

// ErrCtxOutsideDo is returned by a Ctx (or object made from one) used
// outside the Do call that handed it out.
var ErrCtxOutsideDo = errors.New("gpu: Ctx used outside Device.Do")

// UnavailableError says which piece is missing: "libcuda.so.1", "NVRTC",
// "NVML" or "CUDA device N".
type UnavailableError struct {
	What string
	Err  error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("gpu: %s unavailable", e.What)
	}
	return fmt.Sprintf("gpu: %s unavailable: %v", e.What, e.Err)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func (e *UnavailableError) Unwrap() error { return e.Err }

// CUDAError is a failed CUDA driver call. Name and Msg come from
// cuGetErrorName / cuGetErrorString, e.g. CUDA_ERROR_ILLEGAL_ADDRESS (700).
type CUDAError struct {
	Op     string // the driver call and what it was doing, e.g. "cuCtxSynchronize"
	Code   int
	Name   string
	Msg    string
	Sticky bool // the error poisoned the context; the Device is unusable now
}

func (e *CUDAError) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%d): %s", e.Op, e.Name, e.Code, e.Msg)
	if e.Sticky {
		s += " [sticky: the CUDA context is poisoned; this process cannot use the GPU again, restart it]"
	}
	return s
}

// PoisonedError is what Do returns after a sticky error poisoned the
// device's context. Cause is the call that first saw it.
type PoisonedError struct {
	Ordinal int
	Cause   *CUDAError
}

func (e *PoisonedError) Error() string {
	return fmt.Sprintf("gpu: device %d is unusable after an earlier sticky error (restart the process): %v", e.Ordinal, e.Cause)
}

func (e *PoisonedError) Unwrap() []error { return []error{ErrPoisoned, e.Cause} }

// CompileError is an NVRTC compilation that failed; Log is NVRTC's log.
type CompileError struct {
	Name string // the program name given to Compile
	Arch string
	Code int    // nvrtcResult
	Msg  string // nvrtcGetErrorString
	Log  string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("nvrtc: compile %s for %s: %s (%d):\n%s", e.Name, e.Arch, e.Msg, e.Code, e.Log)
}

// DeviceInfo is the device's inventory, read once by Open. The NVML fields
// (DriverVersion, clocks, power limit) are zero when NVML is unavailable,
// NVRTCVersion is "" when NVRTC is.
type DeviceInfo struct {
	Ordinal                int
	Name, UUID             string // UUID as NVML writes it: "GPU-xxxxxxxx-xxxx-..."
	CCMajor, CCMinor       int
	SMs                    int
	L2Bytes, MemBytes      int64
	MaxSharedPerBlockOptin int
	MaxSharedPerSM         int
	DriverVersion          string // NVML, e.g. "580.95.05"
	CUDADriverVersion      int    // cuDriverGetVersion, e.g. 13000
	NVRTCVersion           string // "13.0"
	ClockSMMHz             int    // at Open
	ClockMemMHz            int    // at Open
	MaxClockSMMHz          int
	PowerLimitW            float64
	Arch                   string // ArchFor(CCMajor, CCMinor)
}

// ArchFor is the NVRTC architecture to build for on a device of compute
// capability major.minor: the arch-specific target ("a") where one exists
// for the chips this project runs on (wgmma and setmaxnreg need sm_90a),
// else the plain sm_XY.
func ArchFor(major, minor int) string {
	switch {
	case major == 9 && minor == 0:
		return "sm_90a"
	case major == 10 && minor == 0:
		return "sm_100a"
	case major == 12 && minor == 0:
		return "sm_120a"
	}
	return fmt.Sprintf("sm_%d%d", major, minor)
}

// CompileOptions configure Compile.
type CompileOptions struct {
	Arch     string            // "sm_90a", "sm_80", or "compute_90" for PTX
	Defines  map[string]string // passed as -DK=V in sorted key order; V "" gives -DK
	Flags    []string          // extra NVRTC options, e.g. "-lineinfo", in order
	CacheDir string            // "" = no cache
	// Headers are the files an #include "name" finds, by name (passed to
	// nvrtcCreateProgram); the cache key covers every name and content.
	Headers map[string]string
}

// Compiled is the output of Compile. Cubin holds a cubin (ELF) for an sm_
// arch, or NUL-terminated PTX for a compute_ arch; both load with
// Ctx.LoadModule.
type Compiled struct {
	Cubin        []byte
	Log          string
	Arch         string
	Key          string // hex sha256 of source, headers, options, arch and NVRTC version
	CacheHit     bool
	NVRTCVersion string
	Duration     time.Duration // of the NVRTC call, or of the cache read on a hit
	Options      []string      // the exact NVRTC options
}

// FuncAttrs are a kernel's resource figures (cuFuncGetAttribute).
type FuncAttrs struct {
	NumRegs          int
	SharedStatic     int // bytes of static shared memory
	ConstBytes       int
	LocalBytes       int // local memory per thread: spills and stack
	MaxThreads       int // most threads per block this kernel can launch with
	MaxDynamicShared int // the current dynamic shared-memory limit
	PTXVersion       int // e.g. 90 for 9.0
	BinaryVersion    int // e.g. 90
}

// DevPtr is a device address.
type DevPtr uint64

// Telemetry is one NVML reading.
type Telemetry struct {
	At                time.Time
	SMClockMHz        int
	MemClockMHz       int
	TempC             int
	PowerW            float64
	PowerLimitW       float64
	ClockEventReasons uint64
	// Flags names the throttling reasons set: "power_cap" (0x4),
	// "hw_slowdown" (0x8), "sw_thermal" (0x20), "hw_thermal" (0x40),
	// "power_brake" (0x80).
	Flags []string
}

// Clock-event reason bits (nvmlClocksEventReason*) that flag a measurement.
const (
	ReasonPowerCap   uint64 = 0x4
	ReasonHWSlowdown uint64 = 0x8
	ReasonSWThermal  uint64 = 0x20
	ReasonHWThermal  uint64 = 0x40
	ReasonPowerBrake uint64 = 0x80
)

// ReasonFlags names the flagged bits of an NVML clock-event reason mask.
func ReasonFlags(reasons uint64) []string {
	var out []string
	for _, r := range []struct {
		bit  uint64
		name string
	}{
		{ReasonPowerCap, "power_cap"},
		{ReasonHWSlowdown, "hw_slowdown"},
		{ReasonSWThermal, "sw_thermal"},
		{ReasonHWThermal, "hw_thermal"},
		{ReasonPowerBrake, "power_brake"},
	} {
		if reasons&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}
