package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/pitchtank/pitchtank/internal/splitmix"
)

// Interval is a point estimate with a confidence interval at Level (0.95).
type Interval struct {
	Point, Lo, Hi float64
	Level         float64
}

// Defaults of the paired comparison (measurement.md rule 7).
const (
	DefaultResamples = 2000
	DefaultMinEffect = 0.01 // a verdict needs at least a 1% effect
	intervalLevel    = 0.95
)

// Verdicts of a paired comparison.
const (
	VerdictFaster  = "faster"
	VerdictSlower  = "slower"
	VerdictNoClear = "no clear difference"
)

// CheckPaired says why base and variant cannot be paired, or returns nil:
// they need the same, non-zero number of rounds, and positive finite times.
func CheckPaired(base, variant []float64) error {
	if len(base) != len(variant) {
		return fmt.Errorf("stats: paired samples: %d baseline rounds but %d variant rounds", len(base), len(variant))
	}
	if len(base) == 0 {
		return fmt.Errorf("stats: paired samples: no rounds")
	}
	if err := CheckPositive(base); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := CheckPositive(variant); err != nil {
		return fmt.Errorf("variant: %w", err)
	}
	return nil
}

// PairedSpeedup estimates the speedup of variant over base from paired
// rounds: round i ran both, and its ratio is base[i]/variant[i] (> 1: the
// variant is faster). Point is the geometric mean of the ratios; Lo and Hi
// are a 95% percentile bootstrap interval over rounds: resample the round
// indices with replacement (resamples times; DefaultResamples when <= 0),
// take each resample's geometric mean, and read the 2.5% and 97.5%
// quantiles. Resampling whole rounds keeps each pair together, so drift that
// hits both kernels of a round cancels (measurement.md rule 7). The same seed
// gives the same interval. Invalid input (see CheckPaired) gives NaN bounds.
func PairedSpeedup(base, variant []float64, resamples int, seed uint64) Interval {
	iv := Interval{Level: intervalLevel}
	if CheckPaired(base, variant) != nil {
		iv.Point, iv.Lo, iv.Hi = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	n := len(base)
	logs := make([]float64, n)
	var sum float64
	for i := range n {
		logs[i] = math.Log(base[i]) - math.Log(variant[i])
		sum += logs[i]
	}
	iv.Point = math.Exp(sum / float64(n))
	r := splitmix.New(seed)
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for range n {
			s += logs[r.Intn(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	alpha := 1 - intervalLevel
	iv.Lo = math.Exp(quantileSorted(means, alpha/2))
	iv.Hi = math.Exp(quantileSorted(means, 1-alpha/2))
	return iv
}

// PairedSpeedupBySet is PairedSpeedup's point (the geometric mean of the
// per-round ratios base/variant) with a two-level percentile bootstrap: each
// resample draws input sets with replacement, then rounds with replacement
// within each drawn set. sets[i] names the input set round i ran on.
//
// Resampling only rounds treats every round as independent; on a GPU the
// rounds of one input set share its buffers' placement, which moved small
// kernels by up to ~1% between two instances of the same kernel (the bench
// harness's A/A runs, 2026-11-21), far more than the round-to-round noise.
// Drawing sets too puts that spread into the interval. With one set it is
// the rounds-only bootstrap (on a different random stream).
func PairedSpeedupBySet(base, variant []float64, sets []int, resamples int, seed uint64) Interval {
	iv := Interval{Level: intervalLevel}
	if CheckPaired(base, variant) != nil || len(sets) != len(base) {
		iv.Point, iv.Lo, iv.Hi = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	if resamples <= 0 {
		resamples = DefaultResamples
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
	slices.Sort(keys)
	iv.Point = math.Exp(sum / float64(len(base)))
	r := splitmix.New(seed)
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		var c int
		for range keys {
			logs := bySet[keys[r.Intn(len(keys))]]
			for range logs {
				s += logs[r.Intn(len(logs))]
				c++
			}
		}
		means[b] = s / float64(c)
	}
	slices.Sort(means)
	alpha := 1 - intervalLevel
	iv.Lo = math.Exp(quantileSorted(means, alpha/2))
	iv.Hi = math.Exp(quantileSorted(means, 1-alpha/2))
	// The point is the mean over all rounds; keep it inside its interval
	// when sets of unequal size shift the resampled means.
	iv.Lo, iv.Hi = math.Min(iv.Lo, iv.Point), math.Max(iv.Hi, iv.Point)
	return iv
}

// Verdict calls a comparison "faster" or "slower" only when the interval
// excludes 1 and the point estimate differs from 1 by at least minEffect
// (DefaultMinEffect = 1%); otherwise, and for an interval with NaN bounds,
// "no clear difference".
func Verdict(iv Interval, minEffect float64) string {
	switch {
	case iv.Lo > 1 && iv.Point-1 >= minEffect:
		return VerdictFaster
	case iv.Hi < 1 && 1-iv.Point >= minEffect:
		return VerdictSlower
	}
	return VerdictNoClear
}
