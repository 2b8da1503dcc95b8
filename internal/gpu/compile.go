package gpu

/*
#include <stdlib.h>
#include "cudadl.h"
*/
import "C"

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

var (
	archRE   = regexp.MustCompile(`^(sm|compute)_[0-9]{2,3}[af]?$`)
	defineRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// nvrtcCompiles counts nvrtcCompileProgram calls, so tests can prove that a
// cache hit skipped NVRTC.
var nvrtcCompiles atomic.Int64

// nvrtcMu serialises NVRTC programs: older NVRTC releases do not promise
// thread safety, and a compile is long next to the wait.
var nvrtcMu sync.Mutex

// cacheFormat changes when the cache file layout does, so old entries miss.
const cacheFormat = "pitchtank-gpu-compile-v1"

// Compile compiles CUDA C++ source with NVRTC for opt.Arch: a cubin for an
// sm_ arch (nvrtcGetCUBIN), PTX for a compute_ arch. Options are
// --gpu-architecture=<arch>, -std=c++17, the defines as -DK=V in sorted key
// order, then opt.Flags. A failed compilation returns *CompileError with
// NVRTC's log; a missing NVRTC returns *UnavailableError.
//
// With opt.CacheDir set, the output is stored under
// CacheDir/<Key>.{cubin,ptx} (Key = sha256 of source, options, arch and
// NVRTC version) by temp file and rename, and a later identical compile
// reads it back without calling NVRTC.
func Compile(name, src string, opt CompileOptions) (*Compiled, error) {
	if name == "" || strings.ContainsAny(name, "\x00\n") {
		return nil, fmt.Errorf("gpu: compile: program name %q must be non-empty, one line", name)
	}
	if src == "" {
		return nil, fmt.Errorf("gpu: compile %s: empty source", name)
	}
	if strings.IndexByte(src, 0) >= 0 {
		return nil, fmt.Errorf("gpu: compile %s: source contains a NUL byte", name)
	}
	opts, hdrNames, err := keyInputs(opt)
	if err != nil {
		return nil, fmt.Errorf("gpu: compile %s: %w", name, err)
	}
	api, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	ptx := strings.HasPrefix(opt.Arch, "compute_")
	key := cacheKeyHeaders(src, opts, opt.Arch, nvrtcLib.version, hdrNames, opt.Headers)
	out := &Compiled{Arch: opt.Arch, Key: key, NVRTCVersion: nvrtcLib.version, Options: opts}

	ext := ".cubin"
	if ptx {
		ext = ".ptx"
	}
	var cachePath string
	if opt.CacheDir != "" {
		cachePath = filepath.Join(opt.CacheDir, key+ext)
		start := time.Now()
		if bin, err := os.ReadFile(cachePath); err == nil && validOutput(bin, ptx) {
			log, _ := os.ReadFile(filepath.Join(opt.CacheDir, key+".log"))
			out.Cubin, out.Log, out.CacheHit, out.Duration = bin, string(log), true, time.Since(start)
			return out, nil
		}
	}

	start := time.Now()
	bin, log, err := nvrtcCompile(api, name, src, opt.Arch, opts, ptx, hdrNames, opt.Headers)
	out.Duration = time.Since(start)
	if err != nil {
		return nil, err
	}
	out.Cubin, out.Log = bin, log
	if cachePath != "" {
		if err := os.MkdirAll(opt.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("gpu: compile %s: cache dir: %w", name, err)
		}
		// The log goes first: a reader that finds the binary finds its log.
		if err := writeAtomic(filepath.Join(opt.CacheDir, key+".log"), []byte(log)); err != nil {
			return nil, fmt.Errorf("gpu: compile %s: cache log: %w", name, err)
		}
		if err := writeAtomic(cachePath, bin); err != nil {
			return nil, fmt.Errorf("gpu: compile %s: cache: %w", name, err)
		}
	}
	return out, nil
}

// compileOptions builds the NVRTC option list for opt.
func compileOptions(opt CompileOptions) ([]string, error) {
	opts := []string{"--gpu-architecture=" + opt.Arch, "-std=c++17"}
	keys := make([]string, 0, len(opt.Defines))
	for k := range opt.Defines {
		if !defineRE.MatchString(k) {
			return nil, fmt.Errorf("define name %q is not a C identifier", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opt.Defines[k]
		if strings.ContainsAny(v, "\x00\n\r") {
			return nil, fmt.Errorf("define %s: value %q has a NUL or line break", k, v)
		}
		if v == "" {
			opts = append(opts, "-D"+k)
		} else {
			opts = append(opts, "-D"+k+"="+v)
		}
	}
	for _, f := range opt.Flags {
		if f == "" || strings.ContainsAny(f, "\x00\n\r") {
			return nil, fmt.Errorf("flag %q is empty or has a NUL or line break", f)
		}
		if strings.HasPrefix(f, "--gpu-architecture") || strings.HasPrefix(f, "-arch") {
			return nil, fmt.Errorf("flag %q: set the architecture through CompileOptions.Arch", f)
		}
		opts = append(opts, f)
	}
	return opts, nil
}

// headerNames checks the header names (one line, no NUL, not empty, no
// NUL in the contents) and returns them sorted.
func headerNames(h map[string]string) ([]string, error) {
	names := make([]string, 0, len(h))
	for n, body := range h {
		if n == "" || strings.ContainsAny(n, "\x00\n\r") {
			return nil, fmt.Errorf("header name %q must be non-empty, one line", n)
		}
		if strings.IndexByte(body, 0) >= 0 {
			return nil, fmt.Errorf("header %s contains a NUL byte", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// CacheKey is the Key that Compile gives src under opt with NVRTC version
// (as NVRTCVersion reports it, e.g. "13.0"), without compiling: it names
// another machine's cache files (<Key>.cubin, <Key>.log, its ptxas report)
// from here. opt.CacheDir plays no part.
func CacheKey(src string, opt CompileOptions, version string) (string, error) {
	opts, hdrNames, err := keyInputs(opt)
	if err != nil {
		return "", fmt.Errorf("gpu: cache key: %w", err)
	}
	return cacheKeyHeaders(src, opts, opt.Arch, version, hdrNames, opt.Headers), nil
}

// keyInputs checks opt and returns what its cache key hashes besides the
// source: the NVRTC options and the header names, sorted.
func keyInputs(opt CompileOptions) (opts, hdrNames []string, err error) {
	if !archRE.MatchString(opt.Arch) {
		return nil, nil, fmt.Errorf("arch %q is not of the form sm_90a, sm_80 or compute_90", opt.Arch)
	}
	if hdrNames, err = headerNames(opt.Headers); err != nil {
		return nil, nil, err
	}
	if opts, err = compileOptions(opt); err != nil {
		return nil, nil, err
	}
	return opts, hdrNames, nil
}

// cacheKey hashes everything that decides the output of a compile without
// headers. Fields are length-prefixed so no two inputs share an encoding.
func cacheKey(src string, opts []string, arch, version string) string {
	return cacheKeyHeaders(src, opts, arch, version, nil, nil)
}

// cacheKeyHeaders is cacheKey with headers: they come after the source, by
// sorted name, and only when there are any, so keys of header-less
// compiles are those of earlier releases.
func cacheKeyHeaders(src string, opts []string, arch, version string, hdrNames []string, hdrs map[string]string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(cacheFormat)
	field("nvrtc " + version)
	field("arch " + arch)
	field(fmt.Sprint(len(opts)))
	for _, o := range opts {
		field(o)
	}
	field(src)
	if len(hdrNames) > 0 {
		field(fmt.Sprintf("headers %d", len(hdrNames)))
		for _, n := range hdrNames {
			field(n)
			field(hdrs[n])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

var elfMagic = []byte{0x7f, 'E', 'L', 'F'}

// validOutput rejects a truncated or foreign cache entry.
func validOutput(bin []byte, ptx bool) bool {
	if ptx {
		return len(bin) > 1 && bin[len(bin)-1] == 0
	}
	return bytes.HasPrefix(bin, elfMagic)
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// nvrtcCompile runs one NVRTC program and returns its output and log.
func nvrtcCompile(api *C.pt_nvrtc_api, name, src, arch string, opts []string, ptx bool, hdrNames []string, hdrs map[string]string) ([]byte, string, error) {
	nvrtcMu.Lock()
	defer nvrtcMu.Unlock()

	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	// The option array lives in C memory: cgo forbids passing Go memory
	// that holds Go pointers.
	copts := (**C.char)(C.malloc(C.size_t(len(opts)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(copts))
	optSlice := unsafe.Slice(copts, len(opts))
	for i, o := range opts {
		optSlice[i] = C.CString(o)
	}
	defer func() {
		for _, p := range optSlice {
			C.free(unsafe.Pointer(p))
		}
	}()

	fail := func(op string, rc C.nvrtcResult) error {
		return fmt.Errorf("nvrtc: %s %s: %s (%d)", op, name, C.GoString(C.pt_nvrtcGetErrorString(api, rc)), int(rc))
	}
	// Headers: two C arrays of C strings (contents, names), as NVRTC takes
	// them.
	nh := len(hdrNames)
	var hsrc, hname **C.char
	if nh > 0 {
		psize := C.size_t(unsafe.Sizeof(uintptr(0)))
		hsrc = (**C.char)(C.malloc(C.size_t(nh) * psize))
		hname = (**C.char)(C.malloc(C.size_t(nh) * psize))
		defer C.free(unsafe.Pointer(hsrc))
		defer C.free(unsafe.Pointer(hname))
		srcs, names := unsafe.Slice(hsrc, nh), unsafe.Slice(hname, nh)
		for i, n := range hdrNames {
			srcs[i], names[i] = C.CString(hdrs[n]), C.CString(n)
		}
		defer func() {
			for i := range nh {
				C.free(unsafe.Pointer(srcs[i]))
				C.free(unsafe.Pointer(names[i]))
			}
		}()
	}
	var prog C.nvrtcProgram
	if rc := C.pt_nvrtcCreateProgram(api, &prog, csrc, cname, C.int(nh), hsrc, hname); rc != 0 {
		return nil, "", fail("nvrtcCreateProgram", rc)
	}
	defer C.pt_nvrtcDestroyProgram(api, &prog)

	nvrtcCompiles.Add(1)
	crc := C.pt_nvrtcCompileProgram(api, prog, C.int(len(opts)), copts)

	var logSize C.size_t
	log := ""
	if rc := C.pt_nvrtcGetProgramLogSize(api, prog, &logSize); rc == 0 && logSize > 1 {
		buf := make([]byte, int(logSize))
		if rc := C.pt_nvrtcGetProgramLog(api, prog, (*C.char)(unsafe.Pointer(&buf[0]))); rc == 0 {
			log = string(bytes.TrimRight(buf, "\x00"))
		}
	}
	if crc != 0 {
		return nil, log, &CompileError{Name: name, Arch: arch, Code: int(crc), Msg: C.GoString(C.pt_nvrtcGetErrorString(api, crc)), Log: log}
	}

	var size C.size_t
	var rc C.nvrtcResult
	if ptx {
		rc = C.pt_nvrtcGetPTXSize(api, prog, &size)
	} else {
		rc = C.pt_nvrtcGetCUBINSize(api, prog, &size)
	}
	if rc != 0 {
		return nil, log, fail("get output size of", rc)
	}
	if size == 0 {
		return nil, log, fmt.Errorf("nvrtc: %s: empty output for %s", name, arch)
	}
	bin := make([]byte, int(size))
	if ptx {
		rc = C.pt_nvrtcGetPTX(api, prog, (*C.char)(unsafe.Pointer(&bin[0])))
	} else {
		rc = C.pt_nvrtcGetCUBIN(api, prog, (*C.char)(unsafe.Pointer(&bin[0])))
	}
	if rc != 0 {
		return nil, log, fail("get output of", rc)
	}
	return bin, log, nil
}
