package kernelcheck

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// Which architectures a check compiles, per NVRTC release and min_arch,
// and why it skips the others.
func TestPlan(t *testing.T) {
	cases := []struct {
		ver     string
		minArch int
		archs   []string
		skipped []string
	}{
		{"11.8", 80, []string{"sm_80", "sm_90"}, []string{"sm_90a", "sm_100a", "sm_120a"}},
		{"12.4", 80, []string{"sm_80", "sm_90a"}, []string{"sm_100a", "sm_120a"}},
		{"12.8", 80, []string{"sm_80", "sm_90a", "sm_100a", "sm_120a"}, nil},
		{"13.0", 90, []string{"sm_90a", "sm_100a", "sm_120a"}, []string{"sm_80"}},
		{"13.0", 100, []string{"sm_100a", "sm_120a"}, []string{"sm_80", "sm_90a"}},
	}
	for _, c := range cases {
		archs, skipped := Plan(c.ver, c.minArch)
		var sk []string
		for _, s := range skipped {
			sk = append(sk, s.Arch)
			if s.Reason == "" {
				t.Errorf("%s: skip of %s without a reason", c.ver, s.Arch)
			}
		}
		if !slices.Equal(archs, c.archs) || !slices.Equal(sk, c.skipped) {
			t.Errorf("NVRTC %s min_arch %d: archs %v skipped %v, want %v %v", c.ver, c.minArch, archs, sk, c.archs, c.skipped)
		}
	}
	_, skipped := Plan("11.8", 80)
	if !strings.Contains(skipped[0].Reason, "compiled for sm_90 instead") || !strings.Contains(skipped[1].Reason, "needs 12.8 or newer") {
		t.Errorf("reasons %+v", skipped)
	}
}

// ptxas -v's figures per entry point, as NVRTC 11.8 prints them.
func TestParsePtxas(t *testing.T) {
	log := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm_grouped' for 'sm_80'
ptxas info    : Function properties for gemm_grouped
ptxas         .     8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 213 registers, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'clear_gemm' for 'sm_80'
ptxas info    : Function properties for clear_gemm
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 46 registers, 33280 bytes smem, 376 bytes cmem[0]
`
	got := ParsePtxas(log)
	want := []Entry{
		{Name: "gemm_grouped", Registers: 213, StackBytes: 8, SpillStores: 12, SpillLoads: 16},
		{Name: "clear_gemm", Registers: 46, SharedStatic: 33280},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// NVRTC's "file(line): " becomes "file:line: ".
func TestFileLine(t *testing.T) {
	in := "clear_gemm.cu(42): error: expected a \";\"\n\n1 error detected in the compilation of \"clear_gemm.cu\".\n"
	if got := FileLine(in); !strings.HasPrefix(got, "clear_gemm.cu:42: error: expected") || !strings.Contains(got, `compilation of "clear_gemm.cu"`) {
		t.Errorf("%q", got)
	}
}

// nvrtcVersion is the local NVRTC's version; without NVRTC the test skips
// (why names what needs it), or fails under PITCHTANK_REQUIRE_NVRTC=1.
func nvrtcVersion(t *testing.T, why string) string {
	t.Helper()
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("PITCHTANK_REQUIRE_NVRTC=1 but NVRTC did not load: %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v)%s", err, why)
	}
	return ver
}

// The ELF header of a cubin the local NVRTC builds reads back as its arch.
func TestBinaryArchsOfNVRTCCubins(t *testing.T) {
	ver := nvrtcVersion(t, "")
	archs := []string{"sm_80", "sm_90"}
	if nvrtcNumber(ver) >= 120 {
		archs = append(archs, "sm_90a")
	}
	if nvrtcNumber(ver) >= 128 {
		archs = append(archs, "sm_100a", "sm_120a")
	}
	for _, arch := range archs {
		c, err := gpu.Compile("k.cu", "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n", gpu.CompileOptions{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		got, err := kernels.BinaryArchs(c.Cubin)
		if err != nil || len(got) != 1 || "sm_"+strconv.Itoa(got[0].SM) != strings.TrimSuffix(arch, "a") {
			t.Errorf("NVRTC %s cubin for %s reads as %v (%v)", ver, arch, got, err)
			continue
		}
		// The "a" (arch-specific) flag of the ELF version 8 layout is not
		// decoded yet: on the H100 (NVRTC 13.0, 2026-11-23) cubins for
		// sm_90a, sm_100a and sm_120a read as sm_90, sm_100, sm_120. Such a
		// cubin is then accepted on any device of that SM, which is where
		// it runs anyway; only the report loses the "a".
		if kernels.BinaryArchList(got) != arch {
			t.Logf("NVRTC %s cubin for %s reads as %s (the arch-specific flag is not decoded)", ver, arch, kernels.BinaryArchList(got))
		}
	}
}

// A cubin is not compiled: the report says on which targets it runs.
func TestCheckCubin(t *testing.T) {
	ver := nvrtcVersion(t, ": the cubin is built by it")
	c, err := gpu.Compile("k.cu", "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n", gpu.CompileOptions{Arch: "sm_80"})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"name": "bin", "problem": "nvfp4_group_gemm", "kind": "cubin", "source": "k.cubin", "min_arch": 80, "entry": "k",
		"launch": {"mode": "sequential", "block": [32, 1, 1], "tile_m": 16, "tile_n": 16}}`)
	s, err := kernels.SubmissionFromFiles(map[string][]byte{kernels.ManifestFile: raw, "k.cubin": c.Cubin})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Archs) != 4 || !rep.Archs[0].OK || rep.Archs[1].OK || !strings.Contains(rep.Archs[1].Variants[0].Messages, "k.cubin has no code for sm_90a (it carries sm_80)") {
		t.Errorf("NVRTC %s: report %+v", ver, rep)
	}
	if txt := Text(rep); !strings.Contains(txt, "sm_80    kernel: ok loaded as is; it carries sm_80") {
		t.Errorf("text:\n%s", txt)
	}
}
