package runner

import "github.com/pitchtank/pitchtank/internal/stats"

// RelativeScores gives each prediction on one pitch its relative interval
// score: its interval score minus the median of the others' (Fatebook's
// relative Brier, Metaculus' peer score, as scoring.md asks); negative is
// better than the field. An entry is nil where there is no other prediction
// to compare with.
func RelativeScores(scores []Score) []*float64 {
	out := make([]*float64, len(scores))
	if len(scores) < 2 {
		return out
	}
	others := make([]float64, 0, len(scores)-1)
	for i := range scores {
		others = others[:0]
		for j := range scores {
			if j != i {
				others = append(others, scores[j].IntervalScore)
			}
		}
		rel := stats.RelativeScore(scores[i].IntervalScore, others)
		out[i] = &rel
	}
	return out
}

// Calibration is one predictor's record over their scored predictions,
// for the calibration page.
type Calibration struct {
	N        int     // predictions
	Hits     int     // measured speedup inside the range
	Coverage float64 // Hits / N, to set against the nominal 80%
	// MeanSignedLogErr is positive when the predictor tends to predict too
	// fast; MeanIntervalScore is lower for better predictors.
	MeanSignedLogErr  float64
	MeanIntervalScore float64
	// MeanRelative is the mean relative interval score over the NRelative
	// predictions that had others to compare with (RelativeScores); 0 when
	// NRelative is 0.
	MeanRelative float64
	NRelative    int
}

// Calibrate summarises one predictor's scores; relative[i] is the relative
// score of scores[i] (nil when it had none). The zero Calibration for no
// scores.
func Calibrate(scores []Score, relative []*float64) Calibration {
	var c Calibration
	if len(scores) == 0 {
		return c
	}
	c.N = len(scores)
	hits := make([]bool, len(scores))
	var signed, is, rel float64
	for i, s := range scores {
		hits[i] = s.Hit
		if s.Hit {
			c.Hits++
		}
		signed += s.SignedLogErr
		is += s.IntervalScore
		if i < len(relative) && relative[i] != nil {
			rel += *relative[i]
			c.NRelative++
		}
	}
	n := float64(c.N)
	c.Coverage = stats.Coverage(hits)
	c.MeanSignedLogErr = signed / n
	c.MeanIntervalScore = is / n
	if c.NRelative > 0 {
		c.MeanRelative = rel / float64(c.NRelative)
	}
	return c
}
