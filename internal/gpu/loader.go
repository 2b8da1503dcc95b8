package gpu

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cudadl.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// libcudaName is the driver's soname; it is also the What of the
// UnavailableError returned when the driver is missing.
const libcudaName = "libcuda.so.1"

// cudaNoDevice is CUDA_ERROR_NO_DEVICE: the driver is there but sees no GPU.
const cudaNoDevice = 100

const errBufLen = 1024

// openCUDA dlopens a CUDA driver library at path.
func openCUDA(path string) (*C.pt_cu_api, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [errBufLen]C.char
	api := C.pt_cu_open(cpath, &buf[0], errBufLen)
	if api == nil {
		return nil, &UnavailableError{What: libcudaName, Err: fmt.Errorf("load %s: %s", path, C.GoString(&buf[0]))}
	}
	return api, nil
}

// The driver is loaded and initialised once per process.
var driver struct {
	once    sync.Once
	api     *C.pt_cu_api
	err     error // the library could not be loaded or cuInit failed
	noDevs  bool  // cuInit said CUDA_ERROR_NO_DEVICE
	version int
}

// loadDriver returns the driver API after cuInit. noDevs reports a driver
// that works but sees no GPU (then err is nil and api is usable only for
// error names).
func loadDriver() (api *C.pt_cu_api, noDevs bool, err error) {
	driver.once.Do(func() {
		a, err := openCUDA(libcudaName)
		if err != nil {
			driver.err = err
			return
		}
		driver.api = a
		rc := C.pt_cuInit(a, 0)
		if int(rc) == cudaNoDevice {
			driver.noDevs = true
			return
		}
		if e := cuCheck(a, "cuInit", rc); e != nil {
			driver.err = &UnavailableError{What: libcudaName, Err: e}
			return
		}
		var v C.int
		if e := cuCheck(a, "cuDriverGetVersion", C.pt_cuDriverGetVersion(a, &v)); e == nil {
			driver.version = int(v)
		}
	})
	return driver.api, driver.noDevs, driver.err
}

// cuCheck turns a driver result into an error: nil on success, an
// *UnavailableError when the symbol was not in the library, else a
// *CUDAError named through cuGetErrorName/String.
func cuCheck(api *C.pt_cu_api, op string, rc C.CUresult) error {
	if rc == 0 {
		return nil
	}
	if rc == C.PT_MISSING {
		sym, _, _ := strings.Cut(op, " ")
		return &UnavailableError{What: libcudaName, Err: fmt.Errorf("%s: symbol not in this driver (too old?)", sym)}
	}
	e := &CUDAError{Op: op, Code: int(rc), Name: "CUDA_ERROR_UNKNOWN_CODE", Msg: "unknown error code"}
	var s *C.char
	if C.pt_cuGetErrorName(api, rc, &s) == 0 && s != nil {
		e.Name = C.GoString(s)
	}
	s = nil
	if C.pt_cuGetErrorString(api, rc, &s) == 0 && s != nil {
		e.Msg = C.GoString(s)
	}
	e.Sticky = isSticky(int(rc))
	return e
}

// isSticky reports the driver errors after which the context is corrupt
// and every later call fails: the process must drop the context.
func isSticky(code int) bool {
	switch code {
	case 214, // CUDA_ERROR_ECC_UNCORRECTABLE
		700, // CUDA_ERROR_ILLEGAL_ADDRESS
		702, // CUDA_ERROR_LAUNCH_TIMEOUT
		710, // CUDA_ERROR_ASSERT
		714, // CUDA_ERROR_HARDWARE_STACK_ERROR
		715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
		716, // CUDA_ERROR_MISALIGNED_ADDRESS
		717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
		718, // CUDA_ERROR_INVALID_PC
		719: // CUDA_ERROR_LAUNCH_FAILED
		return true
	}
	return false
}

// nvrtcSonames are tried in order in each directory, then bare (the
// loader's search path). libnvrtc.so.11.2 is Debian's NVRTC 11.8.
var nvrtcSonames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}

// nvrtcCandidates lists the NVRTC paths to try: $CUDA_HOME/lib64,
// /usr/local/cuda/lib64, then the loader path.
func nvrtcCandidates(cudaHome string) []string {
	var dirs []string
	if cudaHome != "" {
		dirs = append(dirs, filepath.Join(cudaHome, "lib64"))
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	var out []string
	for _, d := range dirs {
		for _, s := range nvrtcSonames {
			out = append(out, filepath.Join(d, s))
		}
	}
	return append(out, nvrtcSonames...)
}

// openNVRTC loads the first candidate that dlopens with every symbol.
// Absolute paths that do not exist are skipped quietly; other failures are
// listed in the error.
func openNVRTC(candidates []string) (*C.pt_nvrtc_api, string, error) {
	var tried []string
	for _, c := range candidates {
		if filepath.IsAbs(c) {
			if _, err := os.Stat(c); errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		cpath := C.CString(c)
		var buf [errBufLen]C.char
		api := C.pt_nvrtc_open(cpath, &buf[0], errBufLen)
		C.free(unsafe.Pointer(cpath))
		if api != nil {
			return api, c, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", c, C.GoString(&buf[0])))
	}
	msg := "no libnvrtc found (looked in $CUDA_HOME/lib64, /usr/local/cuda/lib64 and the loader path for " + strings.Join(nvrtcSonames, ", ") + ")"
	if len(tried) > 0 {
		msg += "; failed: " + strings.Join(tried, "; ")
	}
	return nil, "", &UnavailableError{What: "NVRTC", Err: errors.New(msg)}
}

var nvrtcLib struct {
	once    sync.Once
	api     *C.pt_nvrtc_api
	version string
	err     error
}

// loadNVRTC loads NVRTC once per process, from $CUDA_HOME as it was then.
func loadNVRTC() (*C.pt_nvrtc_api, error) {
	nvrtcLib.once.Do(func() {
		api, path, err := openNVRTC(nvrtcCandidates(os.Getenv("CUDA_HOME")))
		if err != nil {
			nvrtcLib.err = err
			return
		}
		v, err := nvrtcVersionOf(api)
		if err != nil {
			nvrtcLib.err = &UnavailableError{What: "NVRTC", Err: fmt.Errorf("%s: %w", path, err)}
			return
		}
		nvrtcLib.api, nvrtcLib.version = api, v
	})
	return nvrtcLib.api, nvrtcLib.err
}

func nvrtcVersionOf(api *C.pt_nvrtc_api) (string, error) {
	var major, minor C.int
	if rc := C.pt_nvrtcVersion(api, &major, &minor); rc != 0 {
		return "", fmt.Errorf("nvrtcVersion: %s (%d)", C.GoString(C.pt_nvrtcGetErrorString(api, rc)), int(rc))
	}
	return fmt.Sprintf("%d.%d", int(major), int(minor)), nil
}

// NVRTCVersion is the version of the NVRTC that Compile uses, e.g. "13.0".
func NVRTCVersion() (string, error) {
	if _, err := loadNVRTC(); err != nil {
		return "", err
	}
	return nvrtcLib.version, nil
}
