package runner_test

import (
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
