package stats

import (
	"fmt"
	"time"
)

// StopRule decides when a measurement has enough samples (measurement.md
// rule 5, after nvbench's stdrel criterion and GPU MODE's eval.py): at least
// MinSamples samples and MinTime of measured time, then stop once the relative
// standard error of the mean is at most MaxRelSEM; stop anyway at MaxTime of
// wall time or MaxSamples samples.
type StopRule struct {
	MinSamples int
	MinTime    time.Duration
	MaxRelSEM  float64
	MaxTime    time.Duration
	MaxSamples int
}

// DefaultStopRule is measurement.md rule 5.
var DefaultStopRule = StopRule{
	MinSamples: 10,
	MinTime:    500 * time.Millisecond,
	MaxRelSEM:  0.0025,
	MaxTime:    15 * time.Second,
	MaxSamples: 2000,
}

// Stop reasons, stored with each measurement. The thresholds behind them are
// the rule's fields, stored alongside.
const (
	StopConverged  = "converged"   // RelSEM <= MaxRelSEM after the minimums
	StopMaxTime    = "max_time"    // wall time reached MaxTime first
	StopMaxSamples = "max_samples" // MaxSamples samples taken first
)

// Validate says why the rule cannot work, or returns nil.
func (r StopRule) Validate() error {
	switch {
	case r.MinSamples < 2:
		return fmt.Errorf("stats: stop rule: MinSamples must be >= 2 (a standard error needs two samples), got %d", r.MinSamples)
	case r.MaxSamples < r.MinSamples:
		return fmt.Errorf("stats: stop rule: MaxSamples %d is below MinSamples %d", r.MaxSamples, r.MinSamples)
	case !(r.MaxRelSEM > 0):
		return fmt.Errorf("stats: stop rule: MaxRelSEM must be positive, got %v", r.MaxRelSEM)
	case r.MaxTime <= 0 || r.MaxTime < r.MinTime:
		return fmt.Errorf("stats: stop rule: MaxTime %v must be positive and at least MinTime %v", r.MaxTime, r.MinTime)
	}
	return nil
}

// String describes the rule for logs and result pages.
func (r StopRule) String() string {
	return fmt.Sprintf("rel_sem<=%.2f%% after >=%d samples and >=%v measured; caps %v wall, %d samples",
		100*r.MaxRelSEM, r.MinSamples, r.MinTime, r.MaxTime, r.MaxSamples)
}

// Check reports whether to stop after samples (all in one unit), given the
// summed measured time of those samples and the wall time spent so far, and
// why. Convergence is checked first, so a measurement that converges on its
// last allowed sample is recorded as converged. While it should go on, it
// returns false and "".
func (r StopRule) Check(samples []float64, measured, wall time.Duration) (stop bool, reason string) {
	if len(samples) >= r.MinSamples && measured >= r.MinTime {
		if s := Summarize(samples); s.N >= 2 && s.RelSEM <= r.MaxRelSEM {
			return true, StopConverged
		}
	}
	if len(samples) >= r.MaxSamples {
		return true, StopMaxSamples
	}
	// The wall cap waits for a second sample: with one, a shape has no
	// standard error and no interval (seen on a loaded 2-core machine,
	// where one CPU sample of a test shape outlasted the 1 s cap).
	if wall >= r.MaxTime && len(samples) >= 2 {
		return true, StopMaxTime
	}
	return false, ""
}
