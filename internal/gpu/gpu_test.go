package gpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

func readKernels(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kernels.cu"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requireNVRTC skips when NVRTC is missing, unless PITCHTANK_REQUIRE_NVRTC=1
// (CI installs Debian's NVRTC 11.8 and sets it).
func requireNVRTC(t *testing.T) string {
	t.Helper()
	v, err := NVRTCVersion()
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("PITCHTANK_REQUIRE_NVRTC=1 but NVRTC is missing: %v", err)
		}
		t.Skipf("NVRTC not installed here (install libnvrtc11.2 or a CUDA toolkit): %v", err)
	}
	return v
}

func wantUnavailable(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want UnavailableError{What: %q}, got nil", what)
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want errors.Is(err, ErrUnavailable), got %T: %v", err, err)
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnavailableError, got %T: %v", err, err)
	}
	if ue.What != what {
		t.Fatalf("UnavailableError.What = %q, want %q (%v)", ue.What, what, err)
	}
}

func TestNoDriverIsUnavailable(t *testing.T) {
	if _, err := openCUDA(libcudaName); err == nil {
		t.Skip("libcuda.so.1 is installed here; the GPU tests in gpu_device_test.go cover this machine")
	}
	n, err := DeviceCount()
	wantUnavailable(t, err, "libcuda.so.1")
	if n != 0 {
		t.Errorf("DeviceCount = %d without a driver", n)
	}
	d, err := Open(0)
	wantUnavailable(t, err, "libcuda.so.1")
	if d != nil {
		t.Error("Open returned a device without a driver")
	}
	if !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("error does not name the library: %v", err)
	}
}

func TestOpenNegativeOrdinal(t *testing.T) {
	if _, err := Open(-1); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("Open(-1) = %v, want an error about the negative ordinal", err)
	}
}

func TestOpenCUDAMissingOrWrongLibrary(t *testing.T) {
	_, err := openCUDA(filepath.Join(t.TempDir(), "libcuda.so.1"))
	wantUnavailable(t, err, "libcuda.so.1")

	// A real library without the driver's symbols: the loader must refuse it
	// rather than leave NULL pointers to call through.
	_, err = openCUDA("libm.so.6")
	wantUnavailable(t, err, "libcuda.so.1")
	if !strings.Contains(err.Error(), "cuInit") {
		t.Errorf("error should name the missing symbol: %v", err)
	}

	// A file that is not a shared object.
	bogus := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(bogus, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openCUDA(bogus)
	wantUnavailable(t, err, "libcuda.so.1")
}

func TestMissingSymbolIsUnavailableNotACrash(t *testing.T) {
	// A nil API table stands for a library that lacked the symbol: the C
	// wrapper must return PT_MISSING, which becomes UnavailableError.
	err := cuCheck(nil, "cuGraphLaunch", missingResult())
	wantUnavailable(t, err, "libcuda.so.1")
	if !strings.Contains(err.Error(), "cuGraphLaunch") {
		t.Errorf("error should name the symbol: %v", err)
	}
	if rc := callWithNilAPI(); rc != missingResult() {
		t.Fatalf("wrapper with a nil table returned %d, want PT_MISSING", rc)
	}
}

func TestNVRTCCandidatesOrder(t *testing.T) {
	c := nvrtcCandidates("/opt/cuda-x")
	if c[0] != "/opt/cuda-x/lib64/libnvrtc.so.13" {
		t.Errorf("first candidate = %q, want $CUDA_HOME/lib64/libnvrtc.so.13", c[0])
	}
	idx := func(s string) int {
		for i, x := range c {
			if x == s {
				return i
			}
		}
		return -1
	}
	if !(idx("/opt/cuda-x/lib64/libnvrtc.so") < idx("/usr/local/cuda/lib64/libnvrtc.so.13") &&
		idx("/usr/local/cuda/lib64/libnvrtc.so") < idx("libnvrtc.so.13") &&
		idx("libnvrtc.so.13") < idx("libnvrtc.so.12") && idx("libnvrtc.so.12") < idx("libnvrtc.so.11.2") &&
		idx("libnvrtc.so.11.2") < idx("libnvrtc.so")) {
		t.Errorf("candidate order wrong: %v", c)
	}
	if c := nvrtcCandidates(""); c[0] != "/usr/local/cuda/lib64/libnvrtc.so.13" {
		t.Errorf("without CUDA_HOME the first candidate = %q", c[0])
	}
}

func TestMissingNVRTCIsUnavailable(t *testing.T) {
	home := t.TempDir()
	// Empty CUDA_HOME: nothing there, nothing else tried.
	_, _, err := openNVRTC(nvrtcCandidates(home)[:len(nvrtcSonames)])
	wantUnavailable(t, err, "NVRTC")

	// Broken files where NVRTC should be, and a library lacking its symbols.
	lib := filepath.Join(home, "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	bogus := filepath.Join(lib, "libnvrtc.so.13")
	if err := os.WriteFile(bogus, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = openNVRTC([]string{bogus, "libm.so.6", "libnvrtc-does-not-exist.so"})
	wantUnavailable(t, err, "NVRTC")
	for _, want := range []string{bogus, "nvrtcVersion", "libnvrtc-does-not-exist.so"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error should mention %q: %v", want, err)
		}
	}

	// The real search still finds a working NVRTC behind a broken
	// $CUDA_HOME when the system has one.
	if _, err := NVRTCVersion(); err == nil {
		if _, path, err := openNVRTC(nvrtcCandidates(home)); err != nil {
			t.Errorf("broken CUDA_HOME hid the system NVRTC: %v", err)
		} else if strings.HasPrefix(path, home) {
			t.Errorf("loaded the broken library %s", path)
		}
	}
}

func TestTelemetryWithoutNVML(t *testing.T) {
	if TelemetryUnavailable() == nil {
		t.Skip("NVML is installed here; gpu_device_test.go reads real telemetry")
	}
	d := &Device{info: DeviceInfo{UUID: "GPU-00000000-0000-0000-0000-000000000000"}}
	_, err := d.Telemetry()
	wantUnavailable(t, err, "NVML")
}

func TestArchFor(t *testing.T) {
	for _, c := range []struct {
		maj, min int
		want     string
	}{{9, 0, "sm_90a"}, {10, 0, "sm_100a"}, {12, 0, "sm_120a"}, {8, 0, "sm_80"}, {8, 9, "sm_89"}, {8, 6, "sm_86"}, {10, 3, "sm_103"}} {
		if got := ArchFor(c.maj, c.min); got != c.want {
			t.Errorf("ArchFor(%d, %d) = %q, want %q", c.maj, c.min, got, c.want)
		}
	}
}

func TestReasonFlags(t *testing.T) {
	got := ReasonFlags(0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x1 | 0x100)
	want := []string{"power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "power_brake"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ReasonFlags = %v, want %v", got, want)
	}
	if ReasonFlags(0x1) != nil {
		t.Error("GPU idle (0x1) must not flag")
	}
}

func TestCompileSMArchs(t *testing.T) {
	ver := requireNVRTC(t)
	src := readKernels(t)
	for _, arch := range []string{"sm_80", "sm_90"} {
		c, err := Compile("kernels.cu", src, CompileOptions{Arch: arch})
		if err != nil {
			t.Fatalf("compile for %s with NVRTC %s: %v", arch, ver, err)
		}
		if !bytes.HasPrefix(c.Cubin, []byte("\x7fELF")) {
			t.Fatalf("%s: output is not an ELF cubin (%d bytes, starts %q)", arch, len(c.Cubin), c.Cubin[:min(8, len(c.Cubin))])
		}
		if c.Arch != arch || c.NVRTCVersion != ver || c.CacheHit || len(c.Key) != 64 {
			t.Errorf("%s: Compiled fields wrong: arch %q version %q hit %v key %q", arch, c.Arch, c.NVRTCVersion, c.CacheHit, c.Key)
		}
		// The kernel names are in the cubin's symbol table.
		for _, k := range []string{"saxpy", "add_u32", "spin", "oob_write"} {
			if !bytes.Contains(c.Cubin, []byte(k)) {
				t.Errorf("%s: cubin lacks kernel %s", arch, k)
			}
		}
	}
}

func TestCompilePTX(t *testing.T) {
	requireNVRTC(t)
	c, err := Compile("kernels.cu", readKernels(t), CompileOptions{Arch: "compute_80"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(c.Cubin, []byte(".entry saxpy")) || c.Cubin[len(c.Cubin)-1] != 0 {
		t.Fatalf("compute_80 should give NUL-terminated PTX with .entry saxpy; got %.200q", c.Cubin)
	}
}

func TestCompileErrorHasLog(t *testing.T) {
	requireNVRTC(t)
	src := "extern \"C\" __global__ void broken(int *p) { p[0] = undeclared_thing + ; }\n"
	before := nvrtcCompiles.Load()
	_, err := Compile("broken.cu", src, CompileOptions{Arch: "sm_80", CacheDir: t.TempDir()})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("want *CompileError, got %T: %v", err, err)
	}
	if !strings.Contains(ce.Log, "undeclared_thing") || !strings.Contains(ce.Log, "broken.cu") {
		t.Errorf("log should point at the error in broken.cu:\n%s", ce.Log)
	}
	if ce.Arch != "sm_80" || ce.Name != "broken.cu" {
		t.Errorf("CompileError fields: %+v", ce)
	}
	if nvrtcCompiles.Load() != before+1 {
		t.Errorf("NVRTC calls: %d, want 1", nvrtcCompiles.Load()-before)
	}
}

func TestCompileDefines(t *testing.T) {
	requireNVRTC(t)
	src := readKernels(t)
	with, err := Compile("kernels.cu", src, CompileOptions{Arch: "compute_80", Defines: map[string]string{"PT_DEFINED_VALUE": "12345", "ZZ": ""}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(with.Cubin, []byte("defined_value")) || !bytes.Contains(with.Cubin, []byte("12345")) {
		t.Error("the define did not reach the compiler")
	}
	want := []string{"--gpu-architecture=compute_80", "-std=c++17", "-DPT_DEFINED_VALUE=12345", "-DZZ"}
	if strings.Join(with.Options, " ") != strings.Join(want, " ") {
		t.Errorf("options = %q, want %q", with.Options, want)
	}
}

// CacheKey names the cache files Compile writes: the same key for the same
// source, options and NVRTC version, another for another version.
func TestCacheKeyIsCompilesKey(t *testing.T) {
	ver := requireNVRTC(t)
	src := readKernels(t)
	opt := CompileOptions{Arch: "compute_80", Defines: map[string]string{"PT_DEFINED_VALUE": "7"}, Flags: []string{"-lineinfo"}, CacheDir: t.TempDir()}
	c, err := Compile("kernels.cu", src, opt)
	if err != nil {
		t.Fatal(err)
	}
	k, err := CacheKey(src, opt, ver)
	if err != nil || k != c.Key {
		t.Fatalf("CacheKey = %q, %v; Compile's key %q", k, err, c.Key)
	}
	if _, err := os.Stat(filepath.Join(opt.CacheDir, k+".ptx")); err != nil {
		t.Errorf("no cache file under the key: %v", err)
	}
	if other, _ := CacheKey(src, opt, ver+".1"); other == k {
		t.Error("another NVRTC version gave the same key")
	}
	if _, err := CacheKey(src, CompileOptions{Arch: "90a"}, ver); err == nil || !strings.Contains(err.Error(), "arch") {
		t.Errorf("a bad arch: err = %v, want it named", err)
	}
}

func TestCompileRejectsBadInput(t *testing.T) {
	before := nvrtcCompiles.Load()
	for _, c := range []struct {
		name, src string
		opt       CompileOptions
		want      string
	}{
		{"k.cu", "x", CompileOptions{Arch: "sm90"}, "arch"},
		{"k.cu", "x", CompileOptions{Arch: ""}, "arch"},
		{"k.cu", "x", CompileOptions{Arch: "sm_90 -G"}, "arch"},
		{"k.cu", "", CompileOptions{Arch: "sm_90"}, "empty source"},
		{"", "x", CompileOptions{Arch: "sm_90"}, "name"},
		{"k.cu", "x", CompileOptions{Arch: "sm_90", Defines: map[string]string{"1BAD": "1"}}, "identifier"},
		{"k.cu", "x", CompileOptions{Arch: "sm_90", Defines: map[string]string{"OK": "a\nb"}}, "line break"},
		{"k.cu", "x", CompileOptions{Arch: "sm_90", Flags: []string{"-arch=sm_80"}}, "Arch"},
	} {
		_, err := Compile(c.name, c.src, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%q, %+v) = %v, want an error mentioning %q", c.name, c.opt, err, c.want)
		}
	}
	if nvrtcCompiles.Load() != before {
		t.Error("bad input reached NVRTC")
	}
}

func TestCompileCache(t *testing.T) {
	requireNVRTC(t)
	src := readKernels(t)
	dir := filepath.Join(t.TempDir(), "cache") // created by Compile
	opt := CompileOptions{Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"A": "1"}}

	calls := func(f func()) int64 {
		before := nvrtcCompiles.Load()
		f()
		return nvrtcCompiles.Load() - before
	}
	var first, second *Compiled
	if n := calls(func() {
		var err error
		if first, err = Compile("kernels.cu", src, opt); err != nil {
			t.Fatal(err)
		}
	}); n != 1 || first.CacheHit {
		t.Fatalf("first compile: %d NVRTC calls, hit %v; want 1, false", n, first.CacheHit)
	}
	if n := calls(func() {
		var err error
		if second, err = Compile("kernels.cu", src, opt); err != nil {
			t.Fatal(err)
		}
	}); n != 0 || !second.CacheHit {
		t.Fatalf("second compile: %d NVRTC calls, hit %v; want 0, true", n, second.CacheHit)
	}
	if !bytes.Equal(first.Cubin, second.Cubin) || first.Key != second.Key || first.Log != second.Log {
		t.Error("cache hit returned different output")
	}
	if _, err := os.Stat(filepath.Join(dir, first.Key+".cubin")); err != nil {
		t.Errorf("cache file not named by key: %v", err)
	}

	// Everything that changes the output misses.
	for name, o := range map[string]CompileOptions{
		"define value": {Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"A": "2"}},
		"extra define": {Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"A": "1", "B": "1"}},
		"arch":         {Arch: "sm_90", CacheDir: dir, Defines: map[string]string{"A": "1"}},
		"flags":        {Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"A": "1"}, Flags: []string{"-lineinfo"}},
	} {
		var c *Compiled
		if n := calls(func() {
			var err error
			if c, err = Compile("kernels.cu", src, o); err != nil {
				t.Fatal(err)
			}
		}); n != 1 || c.CacheHit || c.Key == first.Key {
			t.Errorf("%s: %d NVRTC calls, hit %v, same key %v; want a miss", name, n, c.CacheHit, c.Key == first.Key)
		}
	}
	if n := calls(func() {
		if _, err := Compile("kernels.cu", src+"\n// changed\n", opt); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("changed source: %d NVRTC calls, want 1", n)
	}

	// A corrupt entry is recompiled and replaced, not returned.
	if err := os.WriteFile(filepath.Join(dir, first.Key+".cubin"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	var again *Compiled
	if n := calls(func() {
		var err error
		if again, err = Compile("kernels.cu", src, opt); err != nil {
			t.Fatal(err)
		}
	}); n != 1 || again.CacheHit || !bytes.Equal(again.Cubin, first.Cubin) {
		t.Errorf("corrupt entry: %d calls, hit %v", n, again.CacheHit)
	}
	// No temp files left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temp file left in cache: %s", e.Name())
		}
	}
}

func TestCacheKeyUnambiguous(t *testing.T) {
	a := cacheKey("src", []string{"-DA=1", "-DB"}, "sm_80", "11.8")
	b := cacheKey("src", []string{"-DA=1-DB"}, "sm_80", "11.8")
	c := cacheKey("src", []string{"-DA=1", "-DB"}, "sm_80", "12.0")
	if a == b || a == c {
		t.Error("distinct inputs share a cache key")
	}
}

func TestCompileArchFeatureMacro(t *testing.T) {
	ver := requireNVRTC(t)
	var major int
	if _, err := fmt.Sscanf(ver, "%d.", &major); err != nil || major < 12 {
		t.Skipf("NVRTC %s predates sm_90a (12.0)", ver)
	}
	src := `extern "C" __global__ void feat(int *out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	*out = 777001;
#else
	*out = 777000;
#endif
}
`
	for arch, want := range map[string]string{"compute_90a": "777001", "compute_90": "777000"} {
		c, err := Compile("feat.cu", src, CompileOptions{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(c.Cubin, []byte(want)) {
			t.Errorf("%s: PTX lacks %s", arch, want)
		}
	}
	if _, err := Compile("feat.cu", src, CompileOptions{Arch: "sm_90a"}); err != nil {
		t.Errorf("sm_90a cubin: %v", err)
	}
}

func TestLaunchArgEncoding(t *testing.T) {
	buf := make([]byte, 16)
	for _, c := range []struct {
		arg  any
		want []byte
	}{
		{DevPtr(0x1122334455667788), []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}},
		{int32(-2), []byte{0xfe, 0xff, 0xff, 0xff}},
		{uint32(7), []byte{7, 0, 0, 0}},
		{int64(-1), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{uint64(1 << 40), []byte{0, 0, 0, 0, 0, 1, 0, 0}},
		{float32(1.5), []byte{0, 0, 0xc0, 0x3f}},
		{float64(-2), []byte{0, 0, 0, 0, 0, 0, 0, 0xc0}},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	} {
		n, err := argSize(c.arg)
		if err != nil || n != len(c.want) {
			t.Errorf("argSize(%T) = %d, %v; want %d", c.arg, n, err, len(c.want))
			continue
		}
		clear(buf)
		putArg(unsafe.Pointer(&buf[0]), c.arg)
		if !bytes.Equal(buf[:n], c.want) {
			t.Errorf("putArg(%T %v) = % x, want % x", c.arg, c.arg, buf[:n], c.want)
		}
	}
	for _, bad := range []any{3, int16(1), "x", []byte{}, nil, &struct{}{}} {
		if _, err := argSize(bad); err == nil {
			t.Errorf("argSize(%T) accepted", bad)
		}
	}
}

func TestCompileConcurrent(t *testing.T) {
	requireNVRTC(t)
	src := readKernels(t)
	dir := t.TempDir()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			// Pairs share a key: concurrent writers of one cache entry must
			// leave a valid file (rename is atomic).
			_, err := Compile("kernels.cu", src, CompileOptions{Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"PT_DEFINED_VALUE": fmt.Sprint(i / 2)}})
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range 4 {
		c, err := Compile("kernels.cu", src, CompileOptions{Arch: "sm_80", CacheDir: dir, Defines: map[string]string{"PT_DEFINED_VALUE": fmt.Sprint(i)}})
		if err != nil || !c.CacheHit {
			t.Errorf("entry %d after concurrent writes: hit %v, %v", i, c != nil && c.CacheHit, err)
		}
	}
}
