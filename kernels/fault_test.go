package kernels_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// The test-only fault variant must not exist unless PITCHTANK_TEST_KERNELS=1
// is set in the resolving process.
func TestFaultVariantNeedsEnv(t *testing.T) {
	t.Setenv(kernels.TestKernelsEnv, "")
	os.Unsetenv(kernels.TestKernelsEnv)
	for _, p := range kernels.Problems() {
		for _, spec := range []string{"fault", "fault?mode=hang", "fault?mode=illegal_address"} {
			_, err := p.ResolveVariant(spec)
			if err == nil || !strings.Contains(err.Error(), "unknown variant") {
				t.Errorf("%s %q without %s: %v, want unknown variant", p.Name, spec, kernels.TestKernelsEnv, err)
			}
			if err != nil && strings.Contains(err.Error(), "known: ") && strings.Contains(strings.SplitN(err.Error(), "known: ", 2)[1], "fault") {
				t.Errorf("%s: the known list mentions the test-only variant: %v", p.Name, err)
			}
		}
	}
	for _, v := range []string{"0", "true", "yes"} {
		t.Setenv(kernels.TestKernelsEnv, v)
		if _, err := kernels.Problems()[0].ResolveVariant("fault"); err == nil {
			t.Errorf("%s=%q enables the fault variant; only \"1\" may", kernels.TestKernelsEnv, v)
		}
	}
}

func TestFaultVariantWithEnv(t *testing.T) {
	t.Setenv(kernels.TestKernelsEnv, "1")
	for _, p := range kernels.Problems() {
		for _, v := range p.Variants() {
			if v.Base == "fault" {
				t.Errorf("%s: Variants() lists the test-only fault variant", p.Name)
			}
		}
		v, err := p.ResolveVariant("fault")
		if err != nil {
			t.Fatalf("%s fault: %v", p.Name, err)
		}
		if v.Name != "fault" || v.Knobs.Mode != "illegal_address" || v.Defines()["FAULT_MODE"] != "1" || v.SourceFile != "fault.cu" {
			t.Errorf("%s fault: name %q mode %q defines %v source %s", p.Name, v.Name, v.Knobs.Mode, v.Defines(), v.SourceFile)
		}
		if v2, err := p.ResolveVariant("fault?mode=illegal_address"); err != nil || v2.Name != "fault" {
			t.Errorf("%s fault?mode=illegal_address: %v %q, want the canonical name fault", p.Name, err, v2.Name)
		}
		h, err := p.ResolveVariant("fault?mode=hang")
		if err != nil || h.Name != "fault?mode=hang" || h.Defines()["FAULT_MODE"] != "2" {
			t.Fatalf("%s fault?mode=hang: %v %q %v", p.Name, err, h.Name, h.Defines())
		}
		var ke *kernels.KnobError
		if _, err := p.ResolveVariant("fault?mode=explode"); !errors.As(err, &ke) || ke.Knob != "mode" {
			t.Errorf("%s fault?mode=explode: %v, want a KnobError on mode", p.Name, err)
		}
		if _, err := p.ResolveVariant("fault?stages=2"); !errors.As(err, &ke) || ke.Knob != "stages" {
			t.Errorf("%s fault?stages=2: %v, want unknown knob", p.Name, err)
		}

		src, err := h.Source()
		if err != nil {
			t.Fatal(err)
		}
		s := p.Tests[0]
		pl, err := h.Plan(s, kernels.Limits{SMs: 132, MaxSharedOptin: 232448})
		if err != nil {
			t.Fatalf("%s plan: %v", p.Name, err)
		}
		if pl.Mode != "sequential" || len(pl.Launches) != len(s.M) {
			t.Errorf("%s plan: mode %s, %d launches for %d groups", p.Name, pl.Mode, len(pl.Launches), len(s.M))
		}
		for _, l := range pl.Launches {
			if !strings.Contains(src, " "+l.Kernel+"(") || l.Kernel != h.KernelNames()[0] {
				t.Errorf("%s: launch of %s, entry points %v", p.Name, l.Kernel, h.KernelNames())
			}
		}
	}
}

// TestCompileFaultKernels compiles fault.cu once per mode and problem for
// sm_80 and sm_90, apart from TestCompileDeclaredSpace (which enumerates
// only Variants() and so never sees it).
func TestCompileFaultKernels(t *testing.T) {
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required (PITCHTANK_REQUIRE_NVRTC=1) but unavailable: %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v); set PITCHTANK_REQUIRE_NVRTC=1 to make this a failure", err)
	}
	t.Setenv(kernels.TestKernelsEnv, "1")
	for _, p := range kernels.Problems() {
		for _, spec := range []string{"fault?mode=illegal_address", "fault?mode=hang"} {
			v, err := p.ResolveVariant(spec)
			if err != nil {
				t.Fatal(err)
			}
			src, err := v.Source()
			if err != nil {
				t.Fatal(err)
			}
			for _, arch := range []string{"sm_80", "sm_90"} {
				c, err := gpu.Compile(v.SourceFile, src, gpu.CompileOptions{Arch: arch, Defines: v.Defines(), Flags: []string{"--ptxas-options=-v"}})
				if err != nil {
					t.Errorf("NVRTC %s: %s %s %s: %v", ver, p.Name, spec, arch, err)
					continue
				}
				if len(c.Cubin) == 0 {
					t.Errorf("%s %s %s: empty cubin", p.Name, spec, arch)
				}
				t.Logf("NVRTC %s: %s %s %s: %d bytes of cubin", ver, p.Name, spec, arch, len(c.Cubin))
			}
		}
	}
}
