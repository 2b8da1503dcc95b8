package runner_test

import (
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// A run of the pitch's kernel with its knobs written in another order (an
// import whose document spells the spec in the kernel's order, or a run
// launched before the pitch's spelling was made canonical) is the pitch's
// measurement; other knobs are not.
func TestResultOfIgnoresKnobOrder(t *testing.T) {
	const g = "nvfp4_group_gemm"
	m := runner.Measurement{Problem: g, Suite: "benchmarks", Baseline: "baseline", AllowImports: true,
		Variant: "wgmma?stages=2&tile_n=auto", ForPitch: true}
	same := run(2, g, "benchmarks", "baseline", "H100", true, runner.StatusSucceeded, 1.5)
	same.Variant = "wgmma?tile_n=auto&stages=2"
	other := run(1, g, "benchmarks", "baseline", "H100", true, runner.StatusSucceeded, 1.9)
	other.Variant = "wgmma?tile_n=auto&stages=3"
	pr := runner.ResultOf(m, []runner.Run{same, other})
	if pr.N != 1 || pr.Counted[0].ID != 2 {
		t.Fatalf("counted %+v, want run 2 only", pr.Counted)
	}
	if len(pr.Other) != 1 || pr.Other[0].Run.ID != 1 || pr.Other[0].Field != "variant" {
		t.Fatalf("other %+v, want run 1 left out for its variant", pr.Other)
	}
	if field, why := m.Mismatch(&same); field != "" {
		t.Fatalf("reordered knobs: mismatch %s: %s", field, why)
	}
}

// A round that names no device class pools a pitch's runs of one device
// only: that of its first run that counts. A later run on a faster device
// neither joins the pool nor replaces it (no re-roll), and runs that do not
// count yet do not pick the device.
func TestResultOfWithoutDeviceClassKeepsTheFirstDevice(t *testing.T) {
	const g = "nvfp4_group_gemm"
	m := runner.Measurement{Problem: g, Suite: "benchmarks", Baseline: "baseline", AllowImports: true, Variant: "v", ForPitch: true}
	failed := run(1, g, "benchmarks", "baseline", "NVIDIA B200", false, runner.StatusFailed, 0)
	first := run(2, g, "benchmarks", "baseline", "NVIDIA H100 80GB HBM3", false, runner.StatusSucceeded, 1.0)
	b200 := run(3, g, "benchmarks", "baseline", "NVIDIA B200", false, runner.StatusSucceeded, 2.0)
	again := run(4, g, "benchmarks", "baseline", "nvidia h100 80gb hbm3", false, runner.StatusSucceeded, 1.1)
	queued := run(5, g, "benchmarks", "baseline", "", false, runner.StatusQueued, 0)
	pr := runner.ResultOf(m, []runner.Run{queued, again, b200, first, failed}) // newest first
	if pr.N != 2 || pr.Counted[0].ID != 4 || pr.Counted[1].ID != 2 {
		t.Fatalf("counted %+v, want runs 4 and 2 (the H100's)", pr.Counted)
	}
	if len(pr.Other) != 2 || pr.Other[0].Run.ID != 3 || pr.Other[0].Field != "device" || pr.Other[1].Run.ID != 1 ||
		!strings.Contains(pr.Other[0].Why, `first measured on "NVIDIA H100 80GB HBM3"`) {
		t.Fatalf("other %+v, want runs 3 and 1 left out for their device", pr.Other)
	}
	if len(pr.NotCounted) != 1 || pr.NotCounted[0].Run.ID != 5 {
		t.Fatalf("not counted %+v, want the queued run", pr.NotCounted)
	}
	// A round that names its class pools every run of the class, as before.
	m.DeviceClass = "nvidia"
	if pr := runner.ResultOf(m, []runner.Run{again, b200, first}); pr.N != 3 {
		t.Fatalf("with a device class: n %d, want 3", pr.N)
	}
}
