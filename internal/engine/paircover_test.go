package engine_test

import (
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// TestPairCover: the device test's pairwise subset of the fused space is
// much smaller than the space and still contains every pair of knob values
// that any valid combination has.
func TestPairCover(t *testing.T) {
	for _, p := range kernels.Problems() {
		vs := familyVariants(t, p, "fused")
		cover := pairCover(p.Name, "fused", vs)
		if len(cover) == 0 || len(cover) >= len(vs) && len(vs) > 20 {
			t.Errorf("%s: cover of %d from %d combinations", p.Name, len(cover), len(vs))
		}
		t.Logf("%s fused: %d of %d combinations", p.Name, len(cover), len(vs))
	}
}

// familyVariants lists every valid combination of family fam's declared
// knob space as variants of p.
func familyVariants(t *testing.T, p *kernels.Problem, fam string) []kernels.Variant {
	t.Helper()
	base := mustVariant(t, p, fam)
	var vs []kernels.Variant
	for _, k := range p.VariantCombinations(fam) {
		v, err := p.WithKnobs(base, k)
		if err != nil {
			t.Fatalf("%s %s: enumerated combination refused: %v", p.Name, fam, err)
		}
		vs = append(vs, v)
	}
	return vs
}
