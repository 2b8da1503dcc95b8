// Tests that need a CUDA GPU. Without one they skip with the reason (set
// PITCHTANK_REQUIRE_GPU=1 to make that a failure). To run them on the GPU
// machine, build here and run there from the package directory, so that
// testdata/ resolves:
//
//	CGO_ENABLED=1 go test -c -o bin/gpu.test ./internal/gpu
//	cd internal/gpu && set -o pipefail && ../../bin/gpu.test -test.v -test.count=1 2>&1 | tee $OUT/gpu-test.log
package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openDevice opens GPU 0 or skips, saying why.
func openDevice(t *testing.T) *Device {
	t.Helper()
	d, err := Open(0)
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_GPU") == "1" {
			t.Fatalf("PITCHTANK_REQUIRE_GPU=1 but no GPU: %v", err)
		}
		t.Skipf("no CUDA GPU here: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

// deviceKernels compiles testdata/kernels.cu for the device's own arch.
func deviceKernels(t *testing.T, d *Device) *Compiled {
	t.Helper()
	c, err := Compile("kernels.cu", readKernels(t), CompileOptions{Arch: d.Info().Arch, CacheDir: filepath.Join(os.TempDir(), "pitchtank-gpu-test-cache")})
	if err != nil {
		t.Fatalf("compile test kernels for %s: %v", d.Info().Arch, err)
	}
	return c
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func TestDeviceInventory(t *testing.T) {
	d := openDevice(t)
	info := d.Info()
	t.Logf("device: %+v", info)
	if info.Name == "" || !strings.HasPrefix(info.UUID, "GPU-") || len(info.UUID) != 40 {
		t.Errorf("name %q / UUID %q missing or malformed", info.Name, info.UUID)
	}
	for name, v := range map[string]int64{
		"CCMajor": int64(info.CCMajor), "SMs": int64(info.SMs), "L2Bytes": info.L2Bytes, "MemBytes": info.MemBytes,
		"MaxSharedPerBlockOptin": int64(info.MaxSharedPerBlockOptin), "MaxSharedPerSM": int64(info.MaxSharedPerSM),
		"CUDADriverVersion": int64(info.CUDADriverVersion), "ClockSMMHz": int64(info.ClockSMMHz),
		"ClockMemMHz": int64(info.ClockMemMHz), "MaxClockSMMHz": int64(info.MaxClockSMMHz),
	} {
		if v <= 0 {
			t.Errorf("%s = %d, want > 0", name, v)
		}
	}
	if info.DriverVersion == "" || info.NVRTCVersion == "" || info.PowerLimitW <= 0 {
		t.Errorf("driver %q, NVRTC %q, power limit %v: want all set", info.DriverVersion, info.NVRTCVersion, info.PowerLimitW)
	}
	if info.Arch != ArchFor(info.CCMajor, info.CCMinor) {
		t.Errorf("Arch %q for %d.%d", info.Arch, info.CCMajor, info.CCMinor)
	}
	if info.CCMajor == 9 && info.CCMinor == 0 {
		if info.Arch != "sm_90a" {
			t.Errorf("Hopper Arch = %q, want sm_90a", info.Arch)
		}
		// Hopper: 227 KiB opt-in shared per block, 228 KiB per SM.
		if info.MaxSharedPerBlockOptin != 232448 || info.MaxSharedPerSM != 233472 {
			t.Errorf("Hopper shared memory limits %d / %d, want 232448 / 233472", info.MaxSharedPerBlockOptin, info.MaxSharedPerSM)
		}
	}
	if strings.Contains(info.Name, "H100") && (info.SMs != 132 || info.L2Bytes != 50*1024*1024) {
		t.Errorf("H100 with %d SMs and %d bytes of L2; want 132 and 50 MiB", info.SMs, info.L2Bytes)
	}
	n, err := DeviceCount()
	if err != nil || n < 1 {
		t.Errorf("DeviceCount = %d, %v", n, err)
	}
	if _, err := Open(n); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "CUDA device") {
		t.Errorf("Open(%d) past the last device = %v, want UnavailableError naming the device", n, err)
	}
}

func TestDeviceTelemetry(t *testing.T) {
	d := openDevice(t)
	tel, err := d.Telemetry()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("telemetry: %+v", tel)
	if tel.SMClockMHz <= 0 || tel.MemClockMHz <= 0 || tel.TempC <= 0 || tel.PowerW <= 0 || tel.PowerLimitW <= 0 || time.Since(tel.At) > time.Minute {
		t.Errorf("implausible telemetry %+v", tel)
	}
}

func TestDeviceSaxpy(t *testing.T) {
	d := openDevice(t)
	comp := deviceKernels(t, d)
	const n = 100_003 // not a multiple of the block: the tail is checked too
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = rng.Float32()*8-4, rng.Float32()*8-4
	}
	const a, scale, shift, bias = float32(1.5), float32(-0.75), float32(0.25), int32(3)
	aff := make([]byte, 12)
	binary.LittleEndian.PutUint32(aff[0:], math.Float32bits(scale))
	binary.LittleEndian.PutUint32(aff[4:], math.Float32bits(shift))
	binary.LittleEndian.PutUint32(aff[8:], uint32(bias))
	got := make([]byte, 4*n)

	err := d.Do(func(c *Ctx) error {
		m, err := c.LoadModule(comp.Cubin)
		if err != nil {
			return err
		}
		defer m.Unload()
		f, err := m.Function("saxpy")
		if err != nil {
			return err
		}
		attrs, err := f.Attributes()
		if err != nil {
			return err
		}
		t.Logf("saxpy attributes: %+v", attrs)
		if attrs.NumRegs <= 0 || attrs.MaxThreads <= 0 || attrs.BinaryVersion <= 0 {
			t.Errorf("implausible attributes %+v", attrs)
		}
		if _, err := m.Function("no_such_kernel"); err == nil {
			t.Error("lookup of a missing kernel succeeded")
		}
		dx, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(dx)
		dy, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(dy)
		if err := c.CopyHtoD(dx, f32bytes(x)); err != nil {
			return err
		}
		if err := c.CopyHtoD(dy, f32bytes(y)); err != nil {
			return err
		}
		grid := [3]uint32{(n + 255) / 256, 1, 1}
		block := [3]uint32{256, 1, 1}
		// Argument mistakes are caught before the launch.
		if err := c.Launch(f, grid, block, 0, nil, a, dx, dy, int32(n)); err == nil || !strings.Contains(err.Error(), "parameters") {
			t.Errorf("launch with a missing argument: %v", err)
		}
		if err := c.Launch(f, grid, block, 0, nil, a, dx, dy, int64(n), aff); err == nil || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("launch with an int64 for an int: %v", err)
		}
		if err := c.Launch(f, grid, block, 0, nil, a, dx, dy, n, aff); err == nil || !strings.Contains(err.Error(), "ambiguous") {
			t.Errorf("launch with a plain int: %v", err)
		}
		if err := c.Launch(f, grid, block, 0, nil, a, dx, dy, int32(n), aff); err != nil {
			return err
		}
		if err := c.Synchronize(); err != nil {
			return err
		}
		return c.CopyDtoH(got, dy)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := bytesf32(got)
	bad := 0
	for i := range out {
		inner := float64(a)*float64(x[i]) + float64(y[i])
		want := inner*float64(scale) + float64(shift) + float64(bias)
		// float32 on the GPU (with FMA contraction) against float64 here.
		tol := 1e-5 * math.Max(1, math.Max(math.Abs(want), math.Abs(inner)))
		if !(math.Abs(float64(out[i])-want) <= tol) {
			if bad < 5 {
				t.Errorf("y[%d] = %v, want %v", i, out[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements wrong", bad, n)
	}
}

// withKernels runs fn inside Do with the test kernels loaded.
func withKernels(t *testing.T, d *Device, fn func(c *Ctx, fn func(string) *Function) error) {
	t.Helper()
	comp := deviceKernels(t, d)
	err := d.Do(func(c *Ctx) error {
		m, err := c.LoadModule(comp.Cubin)
		if err != nil {
			return err
		}
		defer m.Unload()
		var lookupErr error
		get := func(name string) *Function {
			f, err := m.Function(name)
			if err != nil && lookupErr == nil {
				lookupErr = err
			}
			return f
		}
		if err := fn(c, get); err != nil {
			return err
		}
		return lookupErr
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeviceEventsTimeAKernel(t *testing.T) {
	d := openDevice(t)
	withKernels(t, d, func(c *Ctx, get func(string) *Function) error {
		spin := get("spin")
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		flag, err := c.Alloc(4)
		if err != nil {
			return err
		}
		defer c.Free(flag)
		start, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer start.Destroy()
		stop, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer stop.Destroy()
		for _, ns := range []uint64{200_000, 2_000_000} {
			if err := start.Record(s); err != nil {
				return err
			}
			if err := c.Launch(spin, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, s, ns, flag); err != nil {
				return err
			}
			if err := stop.Record(s); err != nil {
				return err
			}
			if err := stop.Synchronize(); err != nil {
				return err
			}
			ms, err := ElapsedMs(start, stop)
			if err != nil {
				return err
			}
			t.Logf("spin %d ns measured %.4f ms", ns, ms)
			want := float64(ns) / 1e6
			if float64(ms) < want*0.99 || float64(ms) > want+5 {
				t.Errorf("spin of %.3f ms measured as %.4f ms", want, ms)
			}
		}
		return nil
	})
}

func TestDeviceStreamsWaitEvent(t *testing.T) {
	d := openDevice(t)
	const n = 1 << 20
	withKernels(t, d, func(c *Ctx, get func(string) *Function) error {
		spin, add := get("spin"), get("add_u32")
		s1, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s1.Destroy()
		s2, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s2.Destroy()
		buf, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(buf)
		flag, err := c.Alloc(4)
		if err != nil {
			return err
		}
		defer c.Free(flag)
		e, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer e.Destroy()
		// s1: 20 ms of spinning, then fill with 0x05. s2 waits for that
		// before adding 1: without the wait the add would run first and the
		// fill would erase it.
		if err := c.Launch(spin, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, s1, uint64(20_000_000), flag); err != nil {
			return err
		}
		if err := c.MemsetD8(buf, 0x05, 4*n, s1); err != nil {
			return err
		}
		if err := e.Record(s1); err != nil {
			return err
		}
		if err := s2.WaitEvent(e); err != nil {
			return err
		}
		if err := c.Launch(add, [3]uint32{n / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, s2, buf, uint32(1), int64(n)); err != nil {
			return err
		}
		if err := s2.Synchronize(); err != nil {
			return err
		}
		host := make([]byte, 4*n)
		if err := c.CopyDtoH(host, buf); err != nil {
			return err
		}
		for i, v := range u32s(host) {
			if v != 0x05050506 {
				t.Errorf("word %d = %#x, want 0x05050506 (WaitEvent did not order the streams)", i, v)
				break
			}
		}
		return nil
	})
}

func TestDeviceGraphCaptureReplay(t *testing.T) {
	d := openDevice(t)
	const n = 4096
	withKernels(t, d, func(c *Ctx, get func(string) *Function) error {
		add := get("add_u32")
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		buf, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(buf)
		if err := c.MemsetD8(buf, 0, 4*n, s); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		if err := s.BeginCapture(); err != nil {
			return err
		}
		for _, v := range []uint32{1, 2, 3} {
			if err := c.Launch(add, [3]uint32{n / 128, 1, 1}, [3]uint32{128, 1, 1}, 0, s, buf, v, int64(n)); err != nil {
				return err
			}
		}
		g, err := s.EndCapture()
		if err != nil {
			return err
		}
		defer g.Destroy()
		ge, err := g.Instantiate()
		if err != nil {
			return err
		}
		defer ge.Destroy()
		host := make([]byte, 4*n)
		check := func(want uint32, when string) error {
			if err := s.Synchronize(); err != nil {
				return err
			}
			if err := c.CopyDtoH(host, buf); err != nil {
				return err
			}
			for i, v := range u32s(host) {
				if v != want {
					t.Errorf("%s: word %d = %d, want %d", when, i, v, want)
					break
				}
			}
			return nil
		}
		if err := check(0, "after capture (captured work must not run)"); err != nil {
			return err
		}
		if err := ge.Launch(s); err != nil {
			return err
		}
		if err := check(6, "after one replay"); err != nil {
			return err
		}
		if err := ge.Launch(s); err != nil {
			return err
		}
		if err := check(12, "after two replays"); err != nil {
			return err
		}
		if err := ge.Launch(nil); err != nil { // replay on the legacy stream too
			return err
		}
		if err := c.Synchronize(); err != nil {
			return err
		}
		return check(18, "after a replay on the default stream")
	})
}

func TestDeviceMemsetD8(t *testing.T) {
	d := openDevice(t)
	const n = 1<<20 + 7
	err := d.Do(func(c *Ctx) error {
		p, err := c.Alloc(n)
		if err != nil {
			return err
		}
		defer c.Free(p)
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		if err := c.MemsetD8(p, 0xAB, n, nil); err != nil {
			return err
		}
		if err := c.MemsetD8(p+100, 0x11, 1000, s); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		if err := c.Synchronize(); err != nil {
			return err
		}
		host := make([]byte, n)
		if err := c.CopyDtoH(host, p); err != nil {
			return err
		}
		for i, b := range host {
			want := byte(0xAB)
			if i >= 100 && i < 1100 {
				want = 0x11
			}
			if b != want {
				t.Errorf("byte %d = %#x, want %#x", i, b, want)
				break
			}
		}
		free, total, err := c.MemInfo()
		t.Logf("memory free %d of %d bytes", free, total)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeviceMisuse(t *testing.T) {
	d := openDevice(t)
	var kept *Ctx
	if err := d.Do(func(c *Ctx) error { kept = c; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Alloc(16); !errors.Is(err, ErrCtxOutsideDo) {
		t.Errorf("Ctx used after Do: %v, want ErrCtxOutsideDo", err)
	}
	if err := d.Do(func(c *Ctx) error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic in Do: %v", err)
	}
	if err := d.Do(func(c *Ctx) error { _, err := c.Alloc(-1); return err }); err == nil {
		t.Error("negative Alloc accepted")
	}
	if err := d.Do(func(c *Ctx) error { _, err := c.Alloc(1 << 50); return err }); err == nil {
		t.Error("a petabyte Alloc succeeded")
	} else {
		var ce *CUDAError
		if !errors.As(err, &ce) || ce.Code != 2 || ce.Sticky {
			t.Errorf("huge alloc: %v, want CUDA_ERROR_OUT_OF_MEMORY (2), not sticky", err)
		}
	}
	if err := d.Do(func(c *Ctx) error { _, _, err := c.MemInfo(); return err }); err != nil {
		t.Errorf("device unusable after recoverable errors: %v", err)
	}
}

func TestDeviceLaunchOverhead(t *testing.T) {
	d := openDevice(t)
	withKernels(t, d, func(c *Ctx, get func(string) *Function) error {
		add := get("add_u32")
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		buf, err := c.Alloc(4)
		if err != nil {
			return err
		}
		defer c.Free(buf)
		if err := c.MemsetD8(buf, 0, 4, s); err != nil {
			return err
		}
		// One warm launch loads the kernel (lazy module loading).
		if err := c.Launch(add, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, s, buf, uint32(0), int64(1)); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		// The first 256 launches fit the launch queue: host cost alone. The
		// rest run at the GPU's pace once the queue is full.
		const launches = 20000
		var firstBatch time.Duration
		start := time.Now()
		for i := 0; i < launches; i++ {
			if err := c.Launch(add, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, s, buf, uint32(1), int64(1)); err != nil {
				return err
			}
			if i == 255 {
				firstBatch = time.Since(start)
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		total := time.Since(start)
		out := make([]byte, 4)
		if err := c.CopyDtoH(out, buf); err != nil {
			return err
		}
		if got := binary.LittleEndian.Uint32(out); got != launches {
			t.Errorf("counter = %d after %d launches", got, launches)
		}
		t.Logf("Launch: %.0f ns host time per launch (first 256), %.0f ns per launch end to end over %d", float64(firstBatch.Nanoseconds())/256, float64(total.Nanoseconds())/launches, launches)
		return nil
	})
	const dos = 2000
	start := time.Now()
	for i := 0; i < dos; i++ {
		if err := d.Do(func(c *Ctx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("Do round trip: %.0f ns", float64(time.Since(start).Nanoseconds())/dos)
}

// TestDeviceIllegalAddressPoisons runs the faulting kernel in a child
// process: the sticky error would poison this process's primary context
// for every later test. The child passing shows the error came back as a
// value instead of a crash.
func TestDeviceIllegalAddressPoisons(t *testing.T) {
	if os.Getenv("PITCHTANK_GPU_CHILD") == "1" {
		t.Skip("in the child")
	}
	openDevice(t) // skips without a GPU
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeviceIllegalAddressChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "PITCHTANK_GPU_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil {
		t.Fatalf("child process failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestDeviceIllegalAddressChild") {
		t.Fatal("child did not run the test")
	}
}

func TestDeviceIllegalAddressChild(t *testing.T) {
	if os.Getenv("PITCHTANK_GPU_CHILD") != "1" {
		t.Skip("runs only as TestDeviceIllegalAddressPoisons's child process")
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	comp := deviceKernels(t, d)
	var m *Module
	err = d.Do(func(c *Ctx) error {
		var err error
		if m, err = c.LoadModule(comp.Cubin); err != nil {
			return err
		}
		f, err := m.Function("oob_write")
		if err != nil {
			return err
		}
		p, err := c.Alloc(4)
		if err != nil {
			return err
		}
		if err := c.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, p, int64(1)<<38); err != nil {
			return err
		}
		return c.Synchronize()
	})
	var ce *CUDAError
	if !errors.As(err, &ce) || ce.Code != 700 || ce.Name != "CUDA_ERROR_ILLEGAL_ADDRESS" || !ce.Sticky {
		t.Fatalf("out-of-bounds kernel: %v, want sticky CUDA_ERROR_ILLEGAL_ADDRESS (700)", err)
	}
	t.Logf("fault reported as: %v", err)
	if d.Poisoned() == nil {
		t.Error("device does not report itself poisoned")
	}
	called := false
	err = d.Do(func(c *Ctx) error { called = true; return nil })
	var pe *PoisonedError
	if !errors.Is(err, ErrPoisoned) || !errors.As(err, &pe) || !errors.As(err, &ce) || called {
		t.Errorf("Do after the fault: %v (fn called: %v), want *PoisonedError wrapping the CUDAError", err, called)
	}
	t.Logf("later Do: %v", err)
	if err := d.Close(); err != nil {
		t.Logf("close after the fault: %v", err)
	}
	// Reopening in the same process must not crash. On driver 580 it fails
	// with the same sticky error (the process must restart); a driver that
	// recovers must give a working device.
	d2, err := Open(0)
	if err != nil {
		if !errors.As(err, &ce) || !ce.Sticky {
			t.Fatalf("reopen after the fault: %v, want a working device or the sticky error", err)
		}
		t.Logf("reopen after the fault fails as documented: %v", err)
		return
	}
	defer d2.Close()
	err = d2.Do(func(c *Ctx) error {
		p, err := c.Alloc(64)
		if err != nil {
			return err
		}
		defer c.Free(p)
		if err := c.MemsetD8(p, 7, 64, nil); err != nil {
			return err
		}
		return c.Synchronize()
	})
	if err != nil {
		t.Errorf("reopened device does not work: %v", err)
	}
	t.Log("reopen after the fault gave a working device")
}

// A gate holds its stream: work enqueued behind it does not run until the
// host opens it, and the next hold closes it again.
func TestDeviceGateHoldsTheStream(t *testing.T) {
	d := openDevice(t)
	err := d.Do(func(c *Ctx) error {
		g, err := c.NewGate()
		if err != nil {
			return fmt.Errorf("new gate: %w", err)
		}
		defer g.Free()
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		p, err := c.Alloc(4096)
		if err != nil {
			return err
		}
		defer c.Free(p)
		for round := 0; round < 2; round++ {
			if err := g.Hold(s); err != nil {
				return err
			}
			if err := c.MemsetD8(p, byte(round+1), 4096, s); err != nil {
				g.Open()
				return err
			}
			time.Sleep(20 * time.Millisecond)
			idle, err := s.Idle()
			if err != nil || idle {
				g.Open()
				return fmt.Errorf("round %d: stream idle %v (%v) while the gate is closed", round, idle, err)
			}
			g.Open()
			if err := s.Synchronize(); err != nil {
				return err
			}
			host := make([]byte, 4096)
			if err := c.CopyDtoH(host, p); err != nil {
				return err
			}
			if host[0] != byte(round+1) || host[4095] != byte(round+1) {
				return fmt.Errorf("round %d: memset behind the gate wrote %d, %d", round, host[0], host[4095])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
