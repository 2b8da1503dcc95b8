package bench

import (
	"math"
	"sort"

	"github.com/pitchtank/pitchtank/internal/stats"
)

// BootstrapMethod names how the speedup interval is resampled; it is
// recorded with every pairing.
const BootstrapMethod = "sets_then_rounds"

// pairedSpeedupBySet is stats.PairedSpeedup's point (the geometric mean of
// the per-round ratios base/variant) with a two-level percentile bootstrap:
// each resample draws input sets with replacement, then rounds with
// replacement within each drawn set. Resampling only rounds (stats'
// version) treats every round as independent; on the device the rounds of
// one input set share its buffers' placement, which moved small kernels by
// up to ~1% between two instances of the same kernel (A/A, 2026-11-21), far
// more than the round-to-round noise. Drawing sets too puts that spread
// into the interval. With one set it reduces to the rounds-only bootstrap.
func pairedSpeedupBySet(base, variant []float64, sets []int, resamples int, seed uint64) stats.Interval {
	iv := stats.Interval{Level: 0.95}
	n := len(base)
	if n == 0 || len(variant) != n || len(sets) != n {
		iv.Point, iv.Lo, iv.Hi = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	bySet := map[int][]float64{}
	var keys []int
	var sum float64
	for i := range base {
		l := math.Log(base[i]) - math.Log(variant[i])
		sum += l
		if _, ok := bySet[sets[i]]; !ok {
			keys = append(keys, sets[i])
		}
		bySet[sets[i]] = append(bySet[sets[i]], l)
	}
	sort.Ints(keys)
	iv.Point = math.Exp(sum / float64(n))
	if resamples <= 0 {
		resamples = DefaultBootstrap
	}
	rng := seed
	next := func(k int) int {
		rng += 0x9E3779B97F4A7C15
		z := rng
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		return int(z % uint64(k))
	}
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		var c int
		for range keys {
			logs := bySet[keys[next(len(keys))]]
			for range logs {
				s += logs[next(len(logs))]
				c++
			}
		}
		means[b] = s / float64(c)
	}
	sort.Float64s(means)
	iv.Lo = math.Exp(quantile(means, 0.025))
	iv.Hi = math.Exp(quantile(means, 0.975))
	// The point is the mean over all rounds; keep it inside its interval
	// when sets of unequal size shift the resampled means.
	iv.Lo, iv.Hi = math.Min(iv.Lo, iv.Point), math.Max(iv.Hi, iv.Point)
	return iv
}

// quantile of sorted xs, linear interpolation between order statistics.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(lo)
	return xs[lo]*(1-f) + xs[lo+1]*f
}
