package pitches

import (
	"fmt"
	"math"
	"sort"
)

// PredictorRecord is one predictor's record on the calibration page: how
// many of their predictions have a measured result, how many held it, and
// their mean interval score (scoring.md: lower is better; it rewards ranges
// that hold the result and penalises both misses and needless width).
type PredictorRecord struct {
	Name   string
	N      int
	Hits   int
	MeanIS float64
}

// MinPredictionsToJudge is how many measured predictions a predictor needs
// before the calibration page names them: one lucky range says nothing.
const MinPredictionsToJudge = 2

// TrustSentence answers "whose estimates should we trust?" in one sentence:
// the predictor with the lowest mean interval score among those with enough
// measured predictions (ties: coverage nearer the nominal 80%, then more
// predictions), with their coverage, and a warning when even their ranges
// miss more often than an 80% interval should.
func TrustSentence(group string, recs []PredictorRecord) string {
	var ok []PredictorRecord
	for _, r := range recs {
		if r.N >= MinPredictionsToJudge {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return fmt.Sprintf("Too few measured predictions to say which of the %s to trust yet: each needs at least %d.", lower(group), MinPredictionsToJudge)
	}
	cov := func(r PredictorRecord) float64 { return float64(r.Hits) / float64(r.N) }
	sort.SliceStable(ok, func(i, j int) bool {
		a, b := ok[i], ok[j]
		if math.Abs(a.MeanIS-b.MeanIS) > 1e-9 {
			return a.MeanIS < b.MeanIS
		}
		if da, db := math.Abs(cov(a)-0.8), math.Abs(cov(b)-0.8); math.Abs(da-db) > 1e-9 {
			return da < db
		}
		return a.N > b.N
	})
	best := ok[0]
	s := fmt.Sprintf("Of the %s, trust %s's estimates most: the lowest mean interval score (%.2f over %d measured predictions), with %.0f%% of ranges holding the result against the nominal 80%%",
		lower(group), best.Name, best.MeanIS, best.N, 100*cov(best))
	switch {
	case len(ok) == 1:
		s += "; nobody else has enough measured predictions to compare"
	case cov(best) < 0.5:
		s += "; even these ranges miss too often: widen them"
	}
	return s + "."
}

func lower(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if b[0] >= 'A' && b[0] <= 'Z' {
		b[0] += 'a' - 'A'
	}
	return string(b)
}
