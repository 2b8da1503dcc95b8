package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

// Bad shapes and mismatched inputs are rejected before any device work, so
// these run without a device (a nil Ctx is never touched).
func TestPrepareRejectsBadInput(t *testing.T) {
	g, _ := kernels.LookupProblem("nvfp4_group_gemm")
	d, _ := kernels.LookupProblem("nvfp4_dual_gemm")
	gv, _ := g.ResolveVariant("baseline")
	dv, _ := d.ResolveVariant("baseline")
	gb := &engine.Built{Variant: gv, Attrs: map[string]gpu.FuncAttrs{}}
	db := &engine.Built{Variant: dv, Attrs: map[string]gpu.FuncAttrs{}}
	s := kernels.Shape{M: []int{3, 5}, N: 64, K: 128}
	good := engine.Inputs{Group: nvfp4.GenGroupGemm(1, s.M, s.N, s.K)}
	for _, tc := range []struct {
		name string
		b    *engine.Built
		s    kernels.Shape
		in   engine.Inputs
		want string
	}{
		{"N rule", gb, kernels.Shape{M: []int{3}, N: 100, K: 128}, good, "multiple of 64"},
		{"K rule", gb, kernels.Shape{M: []int{3}, N: 64, K: 96}, good, "multiple of 128"},
		{"no inputs", gb, s, engine.Inputs{}, "group inputs"},
		{"dual inputs for group", gb, s, engine.Inputs{Dual: nvfp4.GenDualGemm(1, 3, 64, 128)}, "group inputs"},
		{"wrong group count", gb, kernels.Shape{M: []int{3}, N: 64, K: 128}, good, "for 1 groups"},
		{"wrong M", gb, kernels.Shape{M: []int{3, 6}, N: 64, K: 128}, good, "A[1]"},
		{"wrong K", gb, kernels.Shape{M: []int{3, 5}, N: 64, K: 256}, good, "A[0]"},
		{"group inputs for dual", db, kernels.Shape{M: []int{3}, N: 64, K: 128}, good, "dual inputs"},
		{"dual wrong N", db, kernels.Shape{M: []int{3}, N: 128, K: 128}, engine.Inputs{Dual: nvfp4.GenDualGemm(1, 3, 64, 128)}, "B1"},
	} {
		_, err := engine.Prepare(nil, tc.b, tc.s, kernels.Limits{}, tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := engine.RunReference(nil, gb, s, good); err == nil || !strings.Contains(err.Error(), "reference") {
		t.Errorf("RunReference with a non-reference variant: %v", err)
	}
}

// Build needs only NVRTC: it compiles here when NVRTC is installed.
func TestBuildWithoutDevice(t *testing.T) {
	if _, err := gpu.NVRTCVersion(); err != nil {
		t.Skipf("NVRTC is not installed here: %v", err)
	}
	g, _ := kernels.LookupProblem("nvfp4_group_gemm")
	v, _ := g.ResolveVariant("baseline?tile_m=64&stages=2")
	b, err := engine.Build(gpu.DeviceInfo{CCMajor: 8, CCMinor: 0}, v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b.Arch != "sm_80" || len(b.Compiled.Cubin) == 0 || !strings.Contains(strings.Join(b.Options, " "), "-DTILE_M=64") {
		t.Errorf("built %s with %v", b.Arch, b.Options)
	}
	if _, err := engine.Build(gpu.DeviceInfo{CCMajor: 7, CCMinor: 5}, v, ""); err == nil || !strings.Contains(err.Error(), "sm_80") {
		t.Errorf("sm_75 accepted: %v", err)
	}
	var ce *gpu.CompileError
	if errors.As(err, &ce) {
		t.Errorf("arch check should come before compiling")
	}
}

// buildEach (the device tests' builder) hands each build back in order as
// it lands, a failed one in its place, and after stop every get still
// returns: a build, or an error saying it was never started.
func TestBuildEachInOrder(t *testing.T) {
	if _, err := gpu.NVRTCVersion(); err != nil {
		t.Skipf("NVRTC is not installed here: %v", err)
	}
	g, _ := kernels.LookupProblem("nvfp4_group_gemm")
	var vs []kernels.Variant
	for _, spec := range []string{"baseline?tile_m=64&stages=2", "wgmma", "baseline"} {
		vs = append(vs, mustVariant(t, g, spec))
	}
	info := gpu.DeviceInfo{CCMajor: 8, CCMinor: 0}
	get, stop := buildEach(info, vs)
	for i, v := range vs {
		b, err := get(i)
		if i == 1 {
			// wgmma needs sm_90: refused before compiling, in its place.
			if err == nil || !strings.Contains(err.Error(), "sm_90") {
				t.Errorf("%s on sm_80: %v", v.Name, err)
			}
			continue
		}
		if err != nil || b == nil || b.Variant.Name != v.Name {
			t.Errorf("get(%d): %v, want %s built", i, err, v.Name)
		}
	}
	stop()
	stop() // a second stop is harmless
	many := append(append(append([]kernels.Variant{}, vs...), vs...), vs...)
	get, stop = buildEach(info, many)
	stop()
	for i := range many {
		b, err := get(i)
		if err != nil && !strings.Contains(err.Error(), "stopped") && !strings.Contains(err.Error(), "sm_90") {
			t.Errorf("get(%d) after stop: %v", i, err)
		}
		if (b == nil) == (err == nil) {
			t.Errorf("get(%d) after stop: build %v and error %v", i, b != nil, err)
		}
	}
}

// ResidentBlocks follows the register, shared-memory and thread limits of
// an SM: the fused defaults' figures from docs/kernel-notes.md.
func TestResidentBlocks(t *testing.T) {
	for _, tc := range []struct {
		regs, threads, shared, want int
	}{
		{255, 128, 82944, 2},  // group fused default: registers allow 2, shared memory 2
		{168, 128, 50688, 3},  // dual fused default: 168 registers -> 3 blocks
		{128, 128, 82944, 2},  // shared memory is the limit
		{32, 1024, 0, 2},      // the 2048-thread limit
		{255, 256, 200000, 1}, // never below 1
		{0, 0, 0, 1},
	} {
		got := engine.ResidentBlocks(gpu.FuncAttrs{NumRegs: tc.regs}, tc.threads, tc.shared, 233472)
		if got != tc.want {
			t.Errorf("%d regs x %d threads, %d B shared: %d blocks, want %d", tc.regs, tc.threads, tc.shared, got, tc.want)
		}
	}
}

// A variant with auto tile sizes builds one module per candidate tile
// (the tile is a compile-time macro), each with its own defines, and
// Prepare's choice (Variant.Resolve) is among them on every benchmark
// shape. Needs only NVRTC.
func TestBuildAutoTileCandidates(t *testing.T) {
	if _, err := gpu.NVRTCVersion(); err != nil {
		t.Skipf("NVRTC is not installed here: %v", err)
	}
	g, _ := kernels.LookupProblem("nvfp4_group_gemm")
	v, err := g.ResolveVariant("baseline?tile_m=auto&tile_n=auto&swap_ab=true")
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.Build(gpu.DeviceInfo{CCMajor: 9, CCMinor: 0, Arch: "sm_90"}, v, t.TempDir()) // sm_90: NVRTC 11.8 (CI) has no sm_90a
	if err != nil {
		t.Fatal(err)
	}
	cands := v.Candidates()
	if len(cands) != 5 || len(b.Candidates) != len(cands) {
		t.Fatalf("%d candidates, %d modules", len(cands), len(b.Candidates))
	}
	for _, cv := range cands {
		c := b.Candidates[cv.Name]
		if c == nil || len(c.Cubin) == 0 {
			t.Errorf("%s: no module", cv.Name)
			continue
		}
		opts := strings.Join(c.Options, " ")
		if !strings.Contains(opts, "-DTILE_M="+cv.Defines()["TILE_M"]) || !strings.Contains(opts, "-DTILE_N="+cv.Defines()["TILE_N"]) || !strings.Contains(opts, "-DSWAP_AB=1") {
			t.Errorf("%s compiled with %s", cv.Name, opts)
		}
		if !strings.Contains(b.PtxasLog, "== candidate "+cv.Name) {
			t.Errorf("ptxas log lacks %s", cv.Name)
		}
	}
	lim := kernels.Limits{SMs: 132, MaxSharedOptin: 232448, Arch: "sm_90"}
	for _, s := range g.Benchmarks {
		cv, err := v.Resolve(s, lim)
		if err != nil || b.Candidates[cv.Name] == nil {
			t.Errorf("%v resolves to %q (%v), not a built candidate", s, cv.Name, err)
		}
	}
	// ModuleKeys names the same cache files without compiling.
	ver, _ := gpu.NVRTCVersion()
	keys, err := engine.ModuleKeys(v, "sm_90", ver)
	if err != nil || len(keys) != len(cands) {
		t.Fatalf("ModuleKeys: %d keys, %v", len(keys), err)
	}
	for _, cv := range cands {
		if c := b.Candidates[cv.Name]; c != nil && keys[cv.Name] != c.Key {
			t.Errorf("%s: ModuleKeys %q, Build's key %q", cv.Name, keys[cv.Name], c.Key)
		}
	}
}
