package runner_test

import (
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

func TestVariantRelSEM(t *testing.T) {
	bench := &runner.Run{Result: []byte(`{"shapes":[{"index":3,"variant_timing":{"stats":{"rel_sem":0.377}}},{"index":4,"variant_timing":null}]}`)}
	got := runner.VariantRelSEM(bench)
	if len(got) != 1 || got[3] != 0.377 {
		t.Fatalf("bench document: got %v, want shape 3 at the document's 0.377 and no figure for the untimed shape", got)
	}
	// An import gives raw samples: 1, 2, 3 us has mean 2, sd 1, SEM 1/sqrt(3).
	imp := &runner.Run{Result: []byte(`{"shapes":[{"variant_samples_us":[1,2,3]},{"variant_samples_us":[5]}]}`)}
	got = runner.VariantRelSEM(imp)
	if want := 1 / math.Sqrt(3) / 2; len(got) != 1 || math.Abs(got[0]-want) > 1e-12 {
		t.Fatalf("import: got %v, want shape 0 at %v and none for a single sample", got, want)
	}
	if got := runner.VariantRelSEM(&runner.Run{}); len(got) != 0 {
		t.Fatalf("no document: got %v, want nothing", got)
	}
	if got := runner.VariantRelSEM(&runner.Run{Result: []byte(`{"shapes":[{"variant_samples_us":[-1,1]}]}`)}); len(got) != 0 {
		t.Fatalf("a zero mean: got %v, want no figure", got)
	}
}
