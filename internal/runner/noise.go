package runner

import (
	"encoding/json"
	"math"

	"github.com/pitchtank/pitchtank/internal/stats"
)

// The "Noise (rel SEM)" figure of a run's shapes: the relative standard
// error of the variant's mean, SEM/mean, as the result document states it
// (docs/bench-result.md, stats.rel_sem). The stored shape rows keep the SEM
// and the median, not the mean; SEM/median is not the document's figure and
// with a skewed sample (a few slow outliers) it is far off: a document
// saying 37.7% was shown as 305%.

// noiseDoc is the part of a result document the noise figure needs: a bench
// document's per-shape stats, or an import's raw variant samples.
type noiseDoc struct {
	Shapes []struct {
		Index   *int `json:"index"`
		Variant *struct {
			Stats struct {
				RelSEM *float64 `json:"rel_sem"`
			} `json:"stats"`
		} `json:"variant_timing"`
		VariantSamplesUs []float64 `json:"variant_samples_us"`
	} `json:"shapes"`
}

// VariantRelSEM returns the variant's relative SEM per shape index, for the
// shapes whose document gives it (bench: stats.rel_sem; import: computed
// from variant_samples_us, at least two samples). Shapes without it are
// absent: the page shows "—" rather than a figure of another definition.
// run.Result must be loaded (Runner.Get).
func VariantRelSEM(run *Run) map[int]float64 {
	out := map[int]float64{}
	if len(run.Result) == 0 {
		return out
	}
	var d noiseDoc
	if json.Unmarshal(run.Result, &d) != nil {
		return out
	}
	for i, s := range d.Shapes {
		idx := i
		if s.Index != nil {
			idx = *s.Index
		}
		switch {
		case s.Variant != nil && s.Variant.Stats.RelSEM != nil:
			if x := *s.Variant.Stats.RelSEM; x >= 0 && !math.IsInf(x, 0) {
				out[idx] = x
			}
		case len(s.VariantSamplesUs) >= 2:
			if x, ok := relSEM(s.VariantSamplesUs); ok {
				out[idx] = x
			}
		}
	}
	return out
}

// relSEM is stddev(n-1)/sqrt(n)/mean (stats.Summarize), the definition
// bench uses; false when the mean is not a positive finite time.
func relSEM(xs []float64) (float64, bool) {
	s := stats.Summarize(xs)
	if !(s.Mean > 0) || math.IsInf(s.Mean, 0) {
		return 0, false
	}
	return s.RelSEM, true
}
