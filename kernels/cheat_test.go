package kernels_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// The test-only cheat family resolves only with PITCHTANK_TEST_KERNELS=1,
// every mode maps to its CHEAT_MODE, and its plan brackets the compute
// launches with cheat_before and cheat_after (detached: on a side stream
// the engine never joins).
func TestCheatVariant(t *testing.T) {
	os.Unsetenv(kernels.TestKernelsEnv)
	if _, err := kernels.Problems()[0].ResolveVariant("cheat"); err == nil {
		t.Fatal("the cheat variant resolves without " + kernels.TestKernelsEnv)
	}
	t.Setenv(kernels.TestKernelsEnv, "1")
	for _, p := range kernels.Problems() {
		for i, mode := range kernels.CheatModes {
			v, err := p.ResolveVariant("cheat?mode=" + mode)
			if err != nil {
				t.Fatalf("%s cheat?mode=%s: %v", p.Name, mode, err)
			}
			if got := v.Defines()["CHEAT_MODE"]; got != string(rune('1'+i)) {
				t.Errorf("%s %s: CHEAT_MODE %s, want %d", p.Name, mode, got, i+1)
			}
			s := p.Tests[len(p.Tests)-1]
			pl, err := v.Plan(s, kernels.Limits{SMs: 132, MaxSharedOptin: 232448, Arch: "sm_90a"})
			if err != nil {
				t.Fatal(err)
			}
			n := len(pl.Launches)
			if n != len(s.M)+2 || pl.Launches[0].Kernel != "cheat_before" || pl.Launches[n-1].Kernel != "cheat_after" {
				t.Fatalf("%s %s: launches %+v", p.Name, mode, pl.Launches)
			}
			if (mode == "detached") != pl.Detached || (mode == "detached") != (pl.Launches[1].Stream == 1) {
				t.Errorf("%s %s: detached %v, compute on stream %d", p.Name, mode, pl.Detached, pl.Launches[1].Stream)
			}
			if !slices.Equal(v.KernelNames(), []string{"cheat_before", "cheat_compute", "cheat_after"}) {
				t.Errorf("kernel names %v", v.KernelNames())
			}
		}
		for _, v := range p.Variants() {
			if v.Base == "cheat" {
				t.Errorf("%s: Variants() lists the test-only cheat family", p.Name)
			}
		}
	}
}

// TestCompileCheatAndHarness compiles every cheat mode of both problems
// and the bench's harness.cu with the local NVRTC (CI's 11.8 included).
func TestCompileCheatAndHarness(t *testing.T) {
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required (PITCHTANK_REQUIRE_NVRTC=1) but unavailable: %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v); set PITCHTANK_REQUIRE_NVRTC=1 to make this a failure", err)
	}
	t.Setenv(kernels.TestKernelsEnv, "1")
	name, hsrc, err := kernels.HarnessSource()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		if _, err := gpu.Compile(name, hsrc, gpu.CompileOptions{Arch: arch}); err != nil {
			t.Errorf("NVRTC %s: harness.cu for %s: %v", ver, arch, err)
		}
	}
	for _, p := range kernels.Problems() {
		for _, mode := range kernels.CheatModes {
			v, err := p.ResolveVariant("cheat?mode=" + mode)
			if err != nil {
				t.Fatal(err)
			}
			src, err := v.Source()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range v.KernelNames() {
				if !strings.Contains(src, " "+k+"(") {
					t.Errorf("cheat.cu has no entry point %s", k)
				}
			}
			c, err := gpu.Compile(v.SourceFile, src, gpu.CompileOptions{Arch: "sm_80", Defines: v.Defines()})
			if err != nil || len(c.Cubin) == 0 {
				t.Errorf("NVRTC %s: %s cheat?mode=%s: %v", ver, p.Name, mode, err)
			}
		}
	}
}
