package tracking

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A threshold's kinds: a percentage bound against a pinned baseline run
// (Evaluate), or a statistical boundary over the run's own recent history
// (EvaluateZScore), as Bencher's z-score threshold is: the bound comes from
// the latest runs of the same measure on the same testbed.
const (
	KindPercent = "percent"
	KindZScore  = "zscore"
)

// The limits of a zscore threshold (CheckKind).
const (
	DefaultWindow = 20 // Bencher's rolling windows are of this order; enough runs for a stable sd
	MinWindow     = 5
	MaxWindow     = 100
	MinZ          = 1
	MaxZ          = 10
	// MinHistory is how many comparable earlier runs a zscore threshold
	// needs before it judges a run: fewer give no usable sd.
	MinHistory = 5
	// MinSD is the least standard deviation (of log times) a boundary
	// uses: 0.005, about 0.5%. A history of identical times (an import's
	// repeated figures) has sd 0, and a very quiet one an sd below what a
	// GPU timing repeats to across runs; a boundary that tight would fire
	// on noise. 0.5% is of the order of the run-to-run spread of one
	// kernel's median on one card (measurement.md), and a fixed floor
	// keeps the rule the same for imports, which carry no SEM.
	MinSD = 0.005
)

// KindOrDefault is t's kind, KindPercent when unset (thresholds stored
// before there were kinds).
func (t Threshold) KindOrDefault() string {
	if t.Kind == "" {
		return KindPercent
	}
	return t.Kind
}

// CheckKind checks t's kind and the fields that go with it, and fills the
// defaults: an empty kind is percent; a zscore threshold without a window
// gets DefaultWindow. A percent threshold has no window nor z; a zscore one
// has no baseline run nor percent, a window of MinWindow..MaxWindow runs
// and a z of MinZ..MaxZ. The error names kind, window, z, baseline_run or
// percent. The percent kind's own fields are the caller's to check
// (CheckBaselineRun).
func CheckKind(t *Threshold) error {
	t.Kind = t.KindOrDefault()
	switch t.Kind {
	case KindPercent:
		if t.Window != 0 {
			return pitches.Errorf(pitches.EINVALID, "window", "only a zscore threshold has a window; a percent threshold compares with its baseline run")
		}
		if t.Z != 0 {
			return pitches.Errorf(pitches.EINVALID, "z", "only a zscore threshold has a z; a percent threshold has a percent")
		}
		return nil
	case KindZScore:
	default:
		return pitches.Errorf(pitches.EINVALID, "kind", "kind must be %q (against a baseline run) or %q (against the run's recent history), not %q", KindPercent, KindZScore, t.Kind)
	}
	if t.BaselineRun != 0 {
		return pitches.Errorf(pitches.EINVALID, "baseline_run", "a zscore threshold has no baseline run: its reference is the run's own latest comparable runs")
	}
	if t.Percent != 0 {
		return pitches.Errorf(pitches.EINVALID, "percent", "a zscore threshold has no percent: give z, the boundary in standard deviations")
	}
	if t.Window == 0 {
		t.Window = DefaultWindow
	}
	if t.Window < MinWindow || t.Window > MaxWindow {
		return pitches.Errorf(pitches.EINVALID, "window", "window must be between %d and %d runs, e.g. %d", MinWindow, MaxWindow, DefaultWindow)
	}
	if math.IsNaN(t.Z) || t.Z < MinZ || t.Z > MaxZ {
		return pitches.Errorf(pitches.EINVALID, "z", "z must be between %d and %d standard deviations, e.g. 3", MinZ, MaxZ)
	}
	return nil
}

// CheckZScoreRound checks that a zscore threshold of a round can fire: not
// in a closed round (no run of its pitches is measured again). round is
// nil for a variant's threshold. The error names round.
func CheckZScoreRound(round *pitches.Round) error {
	if round != nil && round.Status == pitches.RoundClosed {
		return pitches.Errorf(pitches.EINVALID, "round", "round %d is closed: no run of its pitches is measured again, so the threshold would never be checked", round.Number)
	}
	return nil
}

// InHistory says why cand cannot be in run's history for a zscore
// threshold ("" when it can): an earlier run (a lower id) that counts as a
// result (runner.Run.Counts: succeeded, or suspect and accepted) and is
// comparable with run (NotComparable: device fingerprint or import label,
// problem, suite). The baseline spec is left out on purpose: the
// threshold judges the variant's own time, which the baseline kernel
// measured beside it does not change, so runs against another baseline
// are as good a reference and make the history longer. Both from Get.
func InHistory(run, cand *runner.Run) string {
	switch {
	case cand.ID >= run.ID:
		return "not an earlier run"
	case !cand.Counts():
		return "does not count as a result"
	}
	return NotComparable(run, cand)
}

// EvaluateZScore checks run against zscore threshold th over history: the
// scope's earlier runs, newest first (from Get), of which the first
// th.Window that are InHistory make the reference. Per shape of run, the
// reference is the log of the variant median times of those runs that
// measured it; the shape regressed when log(run's time) > mean + z*sd,
// sd the sample standard deviation, at least MinSD. Fewer than MinHistory
// reference runs (in all, or for a shape) judge nothing: skip says "not
// enough history: N of 5" for the run. The alert's summary names the
// worst shape by its distance in sds.
func EvaluateZScore(th Threshold, run *runner.Run, history []*runner.Run) (alert *Alert, skip string) {
	if !run.HasResult {
		return nil, "no result"
	}
	var ref []*runner.Run
	for _, c := range history {
		if len(ref) == th.Window {
			break
		}
		if InHistory(run, c) == "" {
			ref = append(ref, c)
		}
	}
	if len(ref) < MinHistory {
		return nil, fmt.Sprintf("not enough history: %d of %d", len(ref), MinHistory)
	}
	a := &Alert{RunID: run.ID, ThresholdID: th.ID, Kind: KindZScore, Window: th.Window, Z: th.Z, History: len(ref),
		Scope: th.Scope(), Shapes: []ShapeRegression{}}
	compared := 0
	for _, sh := range run.Shapes {
		if !(sh.VariantMedianUs > 0) {
			continue
		}
		var logs []float64
		for _, r := range ref {
			for _, h := range r.Shapes {
				if h.Label == sh.Label && h.VariantMedianUs > 0 {
					logs = append(logs, math.Log(h.VariantMedianUs))
					break
				}
			}
		}
		if len(logs) < MinHistory {
			continue
		}
		compared++
		mean, sd := meanSD(logs)
		sd = max(sd, MinSD)
		x := math.Log(sh.VariantMedianUs)
		if score := (x - mean) / sd; score > th.Z {
			meanUs := math.Exp(mean)
			a.Shapes = append(a.Shapes, ShapeRegression{Label: sh.Label, Ratio: runner.Interval{Value: meanUs / sh.VariantMedianUs},
				RunUs: sh.VariantMedianUs, MeanUs: meanUs, SD: sd, BoundaryUs: math.Exp(mean + th.Z*sd), ZScore: score})
		}
	}
	if compared == 0 {
		return nil, fmt.Sprintf("no shape with %d measurements in its history", MinHistory)
	}
	if len(a.Shapes) == 0 {
		return nil, ""
	}
	worst := a.Shapes[0]
	for _, s := range a.Shapes[1:] {
		if s.ZScore > worst.ZScore {
			worst = s
		}
	}
	a.Summary = fmt.Sprintf("run #%d is above the z=%s boundary of its last %d comparable runs on %d of %d shapes (%s); worst: %s at %.1f sd (%.4g us against a mean of %.4g us)",
		run.ID, strconv.FormatFloat(th.Z, 'g', -1, 64), len(ref), len(a.Shapes), compared, th.Scope(), worst.Label, worst.ZScore, worst.RunUs, worst.MeanUs)
	return a, ""
}

// meanSD is the mean and sample standard deviation of xs (len >= 2).
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// historyFactor is how many of the scope's latest runs history lists per
// run of the window: failed, cancelled and incomparable runs are among
// them too, and are read no further than their list row.
const historyFactor = 4

// history is run's candidate history for zscore threshold th, newest
// first: one List of the latest historyFactor*Window earlier runs of run's
// problem, variant (knob order ignored, a built-in kernel in the
// catalogue's spelling) and suite, of imports from run's label when run is
// one, else of runs measured here (any device index: the fingerprint
// decides, InHistory); of th's round's pitches for a round's threshold.
// Only the rows that count as results are read in full (Get, one at a
// time), until Window of them are InHistory.
func (t *Tracker) history(ctx context.Context, th Threshold, run *runner.Run) ([]*runner.Run, error) {
	f := runner.Filter{Problem: run.Problem, Variant: run.Variant, Suite: run.Suite, Imported: &run.Imported,
		BeforeID: run.ID, Limit: min(1000, historyFactor*th.Window)}
	if run.Imported {
		f.Device = run.Device
	}
	rows, err := t.cfg.Runs.List(ctx, f.CanonicalLookup(runner.KernelsCatalog{}))
	if err != nil {
		return nil, fmt.Errorf("tracking: list run %d's history: %w", run.ID, err)
	}
	rounds := map[int64]int{}
	var out []*runner.Run
	for i := range rows {
		if len(out) == th.Window {
			break
		}
		c := &rows[i]
		if c.ID >= run.ID || !c.Counts() {
			continue
		}
		if th.Round > 0 {
			if c.PitchID == 0 {
				continue
			}
			n, ok := rounds[c.PitchID]
			if !ok {
				if p, err := t.cfg.Pitches.Pitch(ctx, c.PitchID); err == nil {
					n = p.RoundNumber
				}
				rounds[c.PitchID] = n
			}
			if n != th.Round {
				continue
			}
		}
		full, err := t.cfg.Runs.Get(ctx, c.ID)
		if err != nil {
			return nil, fmt.Errorf("tracking: read run %d of run %d's history: %w", c.ID, run.ID, err)
		}
		if InHistory(run, full) == "" {
			out = append(out, full)
		}
	}
	return out, nil
}
