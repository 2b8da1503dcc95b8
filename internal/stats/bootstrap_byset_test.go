package stats

import (
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/splitmix"
)

func TestPairedSpeedupBySetWidensForSetEffects(t *testing.T) {
	// Four input sets whose placement shifts the variant by -1%..+1.2%,
	// with tiny round-to-round noise: the rounds-only bootstrap is sure of
	// a number no set agrees with; drawing sets too widens the interval
	// over the spread of the sets.
	offsets := []float64{1.012, 0.995, 1.004, 0.99}
	var base, variant []float64
	var sets []int
	for r := 0; r < 200; r++ {
		s := (r / 2) % 4
		base = append(base, 10000*noise(0, 0, r, 0.0005))
		variant = append(variant, 10000*noise(0, 1, r, 0.0005)/offsets[s])
		sets = append(sets, s)
	}
	rounds := PairedSpeedup(base, variant, 2000, 1)
	bySet := PairedSpeedupBySet(base, variant, sets, 2000, 1)
	if math.Abs(rounds.Point-bySet.Point) > 1e-12 {
		t.Fatalf("points differ: %v vs %v", rounds.Point, bySet.Point)
	}
	if !(bySet.Hi-bySet.Lo > 3*(rounds.Hi-rounds.Lo)) {
		t.Fatalf("interval by set [%v, %v] not wider than rounds-only [%v, %v]", bySet.Lo, bySet.Hi, rounds.Lo, rounds.Hi)
	}
	if !(bySet.Lo <= bySet.Point && bySet.Point <= bySet.Hi) || !(bySet.Lo < 1 && 1 < bySet.Hi) {
		t.Fatalf("interval by set [%v, %v], point %v: want it to contain the point and 1", bySet.Lo, bySet.Hi, bySet.Point)
	}
	again := PairedSpeedupBySet(base, variant, sets, 2000, 1)
	if again != bySet {
		t.Fatalf("not deterministic per seed: %+v vs %+v", again, bySet)
	}
}

func TestPairedSpeedupBySetIdenticalAndInvalid(t *testing.T) {
	xs := []float64{5, 6, 7, 8, 9, 10}
	iv := PairedSpeedupBySet(xs, xs, []int{0, 0, 1, 1, 0, 0}, 500, 3)
	if iv.Point != 1 || iv.Lo != 1 || iv.Hi != 1 {
		t.Fatalf("identical samples: %+v, want [1, 1] at 1", iv)
	}
	bad := PairedSpeedupBySet(xs, xs[:3], []int{0, 0, 0}, 500, 3)
	if !math.IsNaN(bad.Point) {
		t.Fatalf("mismatched lengths gave %+v", bad)
	}
}

// noise is a deterministic pseudo-random factor in [1-a, 1+a] for stream
// (shape, role) at index k.
func noise(shape, role, k int, a float64) float64 {
	r := splitmix.New(uint64(shape*7+role)<<32 | uint64(k))
	u := float64(r.Uint64()>>11) / float64(1<<53)
	return 1 + a*(2*u-1)
}
