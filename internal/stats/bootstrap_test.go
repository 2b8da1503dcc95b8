package stats

import (
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/splitmix"
)

// pairedRounds simulates n interleaved rounds: a base time, a variant that is
// speedup times faster, each with independent relative noise, and a shared
// drift per round that a paired comparison must cancel.
func pairedRounds(n int, speedup, noise float64, seed uint64) (base, variant []float64) {
	r := splitmix.New(seed)
	gauss := func() float64 { // Box-Muller from the package's own stream
		u1 := (float64(r.Uint64()>>11) + 0.5) / (1 << 53)
		u2 := float64(r.Uint64()>>11) / (1 << 53)
		return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	}
	for range n {
		drift := 1 + 0.05*gauss()
		base = append(base, 100e-6*drift*(1+noise*gauss()))
		variant = append(variant, 100e-6/speedup*drift*(1+noise*gauss()))
	}
	return base, variant
}

func TestPairedSpeedupIdentical(t *testing.T) {
	base, _ := pairedRounds(30, 1, 0.01, 1)
	iv := PairedSpeedup(base, base, 2000, 7)
	if iv.Point != 1 || iv.Lo != 1 || iv.Hi != 1 || iv.Level != 0.95 {
		t.Errorf("identical samples: %+v, want [1, 1] at 0.95", iv)
	}
	if v := Verdict(iv, DefaultMinEffect); v != VerdictNoClear {
		t.Errorf("identical samples: verdict %q", v)
	}
}

func TestPairedSpeedupDetectsTenPercent(t *testing.T) {
	base, variant := pairedRounds(30, 1.10, 0.02, 2)
	iv := PairedSpeedup(base, variant, 2000, 7)
	t.Logf("10%% faster, 2%% noise, 30 rounds: %+v", iv)
	if !(iv.Lo > 1) || !(iv.Lo <= iv.Point && iv.Point <= iv.Hi) {
		t.Errorf("interval %+v should exclude 1 and contain the point", iv)
	}
	if !near(iv.Point, 1.10, 0.02) {
		t.Errorf("point %v, want about 1.10", iv.Point)
	}
	if v := Verdict(iv, DefaultMinEffect); v != VerdictFaster {
		t.Errorf("verdict %q, want faster", v)
	}
	// And the other way round.
	iv = PairedSpeedup(variant, base, 2000, 7)
	if v := Verdict(iv, DefaultMinEffect); v != VerdictSlower || !(iv.Hi < 1) {
		t.Errorf("swapped: %+v verdict %q, want slower", iv, v)
	}
}

func TestPairedSpeedupDeterministicAndNarrowing(t *testing.T) {
	base, variant := pairedRounds(30, 1.0, 0.02, 3)
	a := PairedSpeedup(base, variant, 2000, 11)
	b := PairedSpeedup(base, variant, 2000, 11)
	c := PairedSpeedup(base, variant, 2000, 12)
	if a != b {
		t.Errorf("same seed, different intervals: %+v vs %+v", a, b)
	}
	if a == c {
		t.Errorf("different seeds gave identical bootstrap bounds: %+v", a)
	}
	if !(a.Lo <= a.Point && a.Point <= a.Hi) {
		t.Errorf("interval %+v does not contain its point", a)
	}
	if v := Verdict(a, DefaultMinEffect); v != VerdictNoClear {
		t.Errorf("A/A comparison: verdict %q", v)
	}
	base, variant = pairedRounds(300, 1.0, 0.02, 3)
	d := PairedSpeedup(base, variant, 2000, 11)
	wa, wd := math.Log(a.Hi/a.Lo), math.Log(d.Hi/d.Lo)
	t.Logf("width of ln interval: 30 rounds %.4f, 300 rounds %.4f", wa, wd)
	// Width shrinks like 1/sqrt(n): expect about sqrt(10) = 3.2x narrower.
	if !(wd < wa/2) {
		t.Errorf("300 rounds (%v) not much narrower than 30 (%v)", wd, wa)
	}
}

func TestPairedSpeedupInvalid(t *testing.T) {
	for _, c := range []struct{ base, variant []float64 }{
		{nil, nil}, {[]float64{1, 2}, []float64{1}}, {[]float64{1, 0}, []float64{1, 1}}, {[]float64{1}, []float64{math.NaN()}},
	} {
		if CheckPaired(c.base, c.variant) == nil {
			t.Errorf("CheckPaired(%v, %v) accepted", c.base, c.variant)
		}
		iv := PairedSpeedup(c.base, c.variant, 100, 1)
		if !math.IsNaN(iv.Point) || Verdict(iv, DefaultMinEffect) != VerdictNoClear {
			t.Errorf("invalid input gave %+v", iv)
		}
	}
}

func TestVerdictNeedsBothIntervalAndEffect(t *testing.T) {
	cases := []struct {
		iv   Interval
		want string
	}{
		{Interval{Point: 1.05, Lo: 1.02, Hi: 1.08, Level: 0.95}, VerdictFaster},
		{Interval{Point: 1.005, Lo: 1.002, Hi: 1.008, Level: 0.95}, VerdictNoClear}, // excludes 1, effect < 1%
		{Interval{Point: 1.2, Lo: 0.98, Hi: 1.4, Level: 0.95}, VerdictNoClear},      // big effect, contains 1
		{Interval{Point: 0.9, Lo: 0.85, Hi: 0.95, Level: 0.95}, VerdictSlower},
		{Interval{Point: 0.995, Lo: 0.99, Hi: 0.998, Level: 0.95}, VerdictNoClear},
	}
	for _, c := range cases {
		if got := Verdict(c.iv, DefaultMinEffect); got != c.want {
			t.Errorf("Verdict(%+v) = %q, want %q", c.iv, got, c.want)
		}
	}
}
