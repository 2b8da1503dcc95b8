package engine_test

import (
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// TestPairCover: the device tests' pairwise subsets of the fused and wgmma
// spaces are much smaller than the spaces and still contain every pair of
// knob values that any valid combination has.
func TestPairCover(t *testing.T) {
	for _, fam := range []string{"fused", "wgmma"} {
		for _, p := range kernels.Problems() {
			vs := familyVariants(t, p, fam)
			cover := pairCover(p.Name, fam, vs)
			if len(cover) == 0 || len(cover) >= len(vs) && len(vs) > 20 {
				t.Errorf("%s %s: cover of %d from %d combinations", p.Name, fam, len(cover), len(vs))
			}
			t.Logf("%s %s: %d of %d combinations", p.Name, fam, len(cover), len(vs))
		}
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
