package bench

import (
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
)

// The parallel compare gives nvfp4.Compare's figures on outputs larger
// than one chunk, with errors and NaNs spread over several chunks.
func TestCompareParallelMatchesSerial(t *testing.T) {
	n := 3<<20 + 12345
	ref := make([]float64, n)
	got := make([]uint16, n)
	for i := range ref {
		ref[i] = float64(int(seedFor(9, i, 0)%2001)-1000) / 16
		got[i] = nvfp4.F16FromFloat64(ref[i])
	}
	for _, i := range []int{5, 1<<20 + 7, 2<<20 + 99, n - 1} {
		got[i] = nvfp4.F16FromFloat64(ref[i] + 3)
	}
	got[1<<21] = 0x7E00
	want := nvfp4.Compare(got, ref, 1e-2, 2e-3)
	have := compareParallel(got, ref, 1e-2, 2e-3)
	if have.Elements != want.Elements || have.Mismatches != want.Mismatches || have.NaNs != want.NaNs ||
		have.MaxAbsErr != want.MaxAbsErr || have.MaxRelErr != want.MaxRelErr || have.FirstBad != want.FirstBad ||
		have.Pass != want.Pass || math.Abs(have.RelL2Err-want.RelL2Err) > 1e-12*want.RelL2Err {
		t.Fatalf("parallel %+v\nserial   %+v", have, want)
	}
	if have.Mismatches != 5 || have.NaNs != 1 {
		t.Fatalf("mismatches %d NaNs %d, want 5 and 1", have.Mismatches, have.NaNs)
	}
}
