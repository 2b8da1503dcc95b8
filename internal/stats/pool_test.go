package stats

import (
	"math"
	"testing"
)

func TestPool(t *testing.T) {
	// Three runs at 1.1, 1.2, 1.3: geomean = cbrt(1.716), t-interval with
	// t(2) = 4.3027 on the logs, computed here the long way.
	xs := []float64{1.1, 1.2, 1.3}
	p := Pool(xs)
	logs := []float64{math.Log(1.1), math.Log(1.2), math.Log(1.3)}
	mean := (logs[0] + logs[1] + logs[2]) / 3
	sd := math.Sqrt(((logs[0]-mean)*(logs[0]-mean) + (logs[1]-mean)*(logs[1]-mean) + (logs[2]-mean)*(logs[2]-mean)) / 2)
	half := 4.3027 * sd / math.Sqrt(3)
	if p.N != 3 || math.Abs(p.GeoMean-math.Cbrt(1.1*1.2*1.3)) > 1e-12 || p.Min != 1.1 || p.Max != 1.3 {
		t.Fatalf("pool %+v", p)
	}
	if math.Abs(p.SDLog-sd) > 1e-12 || math.Abs(p.Lo-math.Exp(mean-half)) > 1e-12 || math.Abs(p.Hi-math.Exp(mean+half)) > 1e-12 {
		t.Fatalf("interval %+v, want sd %.6f [%.6f, %.6f]", p, sd, math.Exp(mean-half), math.Exp(mean+half))
	}
	if !(p.Lo < p.GeoMean && p.GeoMean < p.Hi) {
		t.Fatalf("interval does not hold the estimate: %+v", p)
	}
	one := Pool([]float64{0.74})
	if one.N != 1 || one.GeoMean != 0.74 || one.Lo != 0 || one.Hi != 0 || one.SDLog != 0 {
		t.Fatalf("one run: %+v", one)
	}
	if z := Pool([]float64{1, 0}); z.N != 0 {
		t.Fatalf("a zero estimate pooled: %+v", z)
	}
	if z := Pool(nil); z.N != 0 {
		t.Fatalf("nothing pooled: %+v", z)
	}
}

func TestT975(t *testing.T) {
	// The table's end and the expansion agree; large df tends to the normal.
	if d := math.Abs(T975(30) - 2.0423); d > 1e-4 {
		t.Fatalf("t(30) %.5f", T975(30))
	}
	if d := math.Abs(T975(31) - 2.0395); d > 2e-4 {
		t.Fatalf("t(31) %.5f", T975(31))
	}
	if d := math.Abs(T975(120) - 1.9799); d > 2e-4 {
		t.Fatalf("t(120) %.5f", T975(120))
	}
	if !math.IsNaN(T975(0)) {
		t.Fatal("t(0) should be NaN")
	}
}
