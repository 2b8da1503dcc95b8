package stats

import (
	"strings"
	"testing"
	"time"
)

func constantish(n int, base, jitter float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = base
		if i%2 == 1 {
			xs[i] += jitter
		}
	}
	return xs
}

func TestStopRulePaths(t *testing.T) {
	r := DefaultStopRule
	if err := r.Validate(); err != nil {
		t.Fatalf("default rule invalid: %v", err)
	}
	steady := constantish(20, 100e-6, 1e-7) // rel SEM ~1e-4
	noisy := constantish(20, 100e-6, 50e-6) // rel SEM ~9%
	cases := []struct {
		name           string
		samples        []float64
		measured, wall time.Duration
		stop           bool
		reason         string
	}{
		{"too few samples", steady[:5], time.Second, time.Second, false, ""},
		{"too little measured time", steady, 100 * time.Millisecond, time.Second, false, ""},
		{"converged", steady, 600 * time.Millisecond, time.Second, true, StopConverged},
		{"noisy, keep going", noisy, 600 * time.Millisecond, time.Second, false, ""},
		{"noisy, out of time", noisy, 600 * time.Millisecond, 15 * time.Second, true, StopMaxTime},
		{"out of time after one sample", noisy[:1], 20 * time.Second, 20 * time.Second, false, ""},
		{"out of time after two samples", noisy[:2], 20 * time.Second, 20 * time.Second, true, StopMaxTime},
		{"noisy, out of samples", constantish(2000, 100e-6, 50e-6), 10 * time.Second, 10 * time.Second, false, ""},
	}
	// 2000 samples of that noise have rel SEM ~0.45%: still not converged, so
	// the sample cap is what stops it.
	cases[7].stop, cases[7].reason = true, StopMaxSamples
	for _, c := range cases {
		stop, reason := r.Check(c.samples, c.measured, c.wall)
		if stop != c.stop || reason != c.reason {
			t.Errorf("%s: got (%v, %q), want (%v, %q)", c.name, stop, reason, c.stop, c.reason)
		}
	}
	// Converging on the last allowed sample counts as converged.
	if stop, reason := r.Check(constantish(2000, 1, 1e-4), time.Second, 20*time.Second); !stop || reason != StopConverged {
		t.Errorf("converged at the caps: (%v, %q)", stop, reason)
	}
}

func TestStopRuleValidate(t *testing.T) {
	bad := []StopRule{
		{MinSamples: 1, MaxSamples: 10, MaxRelSEM: 0.01, MaxTime: time.Second},
		{MinSamples: 10, MaxSamples: 5, MaxRelSEM: 0.01, MaxTime: time.Second},
		{MinSamples: 10, MaxSamples: 50, MaxRelSEM: 0, MaxTime: time.Second},
		{MinSamples: 10, MaxSamples: 50, MaxRelSEM: 0.01, MinTime: 2 * time.Second, MaxTime: time.Second},
	}
	for _, r := range bad {
		if r.Validate() == nil {
			t.Errorf("rule %+v accepted", r)
		}
	}
	if s := DefaultStopRule.String(); !strings.Contains(s, "rel_sem<=0.25%") {
		t.Errorf("String() = %q", s)
	}
}
