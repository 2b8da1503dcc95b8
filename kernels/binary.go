package kernels

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// BinaryArch is one architecture a cubin or fatbin carries code for.
type BinaryArch struct {
	SM int // compute capability, e.g. 90
	// Specific marks arch-specific code (sm_90a, sm_100a): it runs on
	// exactly that architecture.
	Specific bool
	// PTX marks a fatbin's PTX entry, which the driver compiles for any
	// device at or above SM.
	PTX bool
}

func (a BinaryArch) String() string {
	s := fmt.Sprintf("sm_%d", a.SM)
	if a.PTX && a.Specific {
		return fmt.Sprintf("compute_%da (PTX)", a.SM)
	}
	if a.PTX {
		s = fmt.Sprintf("compute_%d (PTX)", a.SM)
	}
	if a.Specific && !a.PTX {
		s += "a"
	}
	return s
}

// BinaryArchList renders archs for messages.
func BinaryArchList(archs []BinaryArch) string {
	s := make([]string, len(archs))
	for i, a := range archs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// ELF header facts of a CUDA cubin: 64-bit little-endian, machine EM_CUDA.
// The SM sits in e_flags: bits 0-7 with the "a" flag at 0x800 in the ELF
// ABI version 7 layout (up to CUDA 12.8), bits 8-15 with the "a" flag at
// 0x8 in the version 8 layout (CUDA 12.9 and 13).
const (
	emCUDA           = 190
	elfABICUDAV2     = 8
	efCUDAArchAV1    = 0x800
	efCUDAArchAV2    = 0x8
	fatbinMagic      = 0xBA55ED50
	fatbinKindPTX    = 1
	fatbinKindELF    = 2
	fatbinHeaderSize = 16
)

var errNotBinary = errors.New("not a cubin (ELF for EM_CUDA) or fatbin (magic 0xba55ed50)")

// BinaryArchs lists the architectures a cubin or fatbin carries code for,
// read from the cubin's ELF header or the fatbin's entry headers.
func BinaryArchs(b []byte) ([]BinaryArch, error) {
	if bytes.HasPrefix(b, []byte{0x7f, 'E', 'L', 'F'}) {
		a, err := cubinArch(b)
		if err != nil {
			return nil, err
		}
		return []BinaryArch{a}, nil
	}
	if len(b) >= fatbinHeaderSize && binary.LittleEndian.Uint32(b) == fatbinMagic {
		return fatbinArchs(b)
	}
	return nil, errNotBinary
}

func cubinArch(b []byte) (BinaryArch, error) {
	if len(b) < 64 {
		return BinaryArch{}, errors.New("truncated ELF header")
	}
	if b[4] != 2 || b[5] != 1 {
		return BinaryArch{}, errors.New("not a 64-bit little-endian ELF file")
	}
	if m := binary.LittleEndian.Uint16(b[18:]); m != emCUDA {
		return BinaryArch{}, fmt.Errorf("ELF machine %d is not CUDA (%d)", m, emCUDA)
	}
	flags := binary.LittleEndian.Uint32(b[48:])
	if b[8] >= elfABICUDAV2 {
		return BinaryArch{SM: int(flags>>8) & 0xff, Specific: flags&efCUDAArchAV2 != 0}, nil
	}
	return BinaryArch{SM: int(flags & 0xff), Specific: flags&efCUDAArchAV1 != 0}, nil
}

// fatbinArchs walks a fatbin's entries: a 16-byte header (magic, version,
// header size, size of the entries), then per entry a header holding its
// kind (1 PTX, 2 ELF) at 0, its header size at 4, its payload size at 8
// and its SM at 28, followed by the payload.
func fatbinArchs(b []byte) ([]BinaryArch, error) {
	le := binary.LittleEndian
	hsize := int(le.Uint16(b[6:]))
	size := le.Uint64(b[8:])
	if hsize < fatbinHeaderSize || uint64(hsize)+size > uint64(len(b)) {
		return nil, errors.New("truncated fatbin")
	}
	var out []BinaryArch
	off, end := hsize, hsize+int(size)
	for off+32 <= end {
		kind := le.Uint16(b[off:])
		eh := int(le.Uint32(b[off+4:]))
		payload := le.Uint64(b[off+8:])
		sm := int(le.Uint32(b[off+28:]))
		if eh < 32 || uint64(off+eh)+payload > uint64(end) {
			return nil, errors.New("truncated fatbin entry")
		}
		switch kind {
		case fatbinKindPTX:
			out = append(out, BinaryArch{SM: sm, PTX: true})
		case fatbinKindELF:
			out = append(out, BinaryArch{SM: sm})
		}
		off += eh + int(payload)
	}
	if len(out) == 0 {
		return nil, errors.New("fatbin without code entries")
	}
	return out, nil
}

// RunsOn reports whether code for archs runs on a device of arch (e.g.
// "sm_90a"): a cubin of the same major version and a minor at or below
// the device's (exactly the device's for arch-specific code), or PTX for
// an SM at or below the device's.
func RunsOn(archs []BinaryArch, arch string) bool {
	dev := archNumber(arch)
	for _, a := range archs {
		switch {
		case a.PTX && a.Specific && a.SM == dev:
			return true
		case a.PTX && !a.Specific && a.SM <= dev:
			return true
		case !a.PTX && a.Specific && a.SM == dev:
			return true
		case !a.PTX && !a.Specific && a.SM/10 == dev/10 && a.SM <= dev:
			return true
		}
	}
	return false
}

var ptxTargetRE = regexp.MustCompile(`(?m)^\s*\.target\s+sm_(\d+)([af]?)`)

// PTXTarget is the architecture a PTX module's .target names: the driver
// JIT-compiles it for any device at or above it, an arch-specific target
// (sm_90a) only for exactly that architecture.
func PTXTarget(src []byte) (BinaryArch, error) {
	m := ptxTargetRE.FindSubmatch(src)
	if m == nil {
		return BinaryArch{}, errors.New("no .target sm_XX directive")
	}
	sm, _ := strconv.Atoi(string(m[1]))
	return BinaryArch{SM: sm, PTX: len(m[2]) == 0, Specific: len(m[2]) > 0}, nil
}
