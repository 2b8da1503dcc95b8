package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/splitmix"
)

// doc builds a result document of shapes whose variant runs base/speedup
// per round (with noise), the baseline base, over four input sets.
func doc(seed uint64, speedups map[int]float64, skip map[int]bool) *result.Result {
	r := splitmix.New(seed)
	d := &result.Result{Problem: "nvfp4_dual_gemm"}
	d.Variant.Spec = "wgmma"
	for i := range 3 {
		s := result.Shape{Index: i, M: []int{128 * (i + 1)}, N: 4096, K: 7168}
		if !skip[i] {
			var v, b []float64
			var sets []int
			for k := range 400 {
				noise := 1 + 0.02*(float64(r.Intn(1000))/1000-0.5)
				base := 100e3 * (1 + 0.01*float64(k%4))
				b = append(b, base)
				v = append(v, base/speedups[i]*noise)
				sets = append(sets, k%4)
			}
			s.Variant = &result.Measurement{SamplesNs: v, Stats: result.Stats{MedianNs: 50e3}}
			s.Baseline = &result.Measurement{SamplesNs: b}
			s.Pairing = &result.Pairing{Sets: sets}
		}
		d.Shapes = append(d.Shapes, s)
	}
	return d
}

// The ratio of a build against itself is 1 inside its interval; a build
// 5% faster on one shape shows there, and in the geomean by a third of it;
// a shape either document did not time is left out.
func TestCompare(t *testing.T) {
	old := doc(1, map[int]float64{0: 4, 1: 5, 2: 6}, nil)
	same, err := compare(old, old, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range same {
		if math.Abs(r.Ratio-1) > 1e-12 || r.Lo > 1 || r.Hi < 1 {
			t.Errorf("against itself, %s: %.4f [%.4f, %.4f], want 1 inside", r.Shape, r.Ratio, r.Lo, r.Hi)
		}
	}
	faster := doc(2, map[int]float64{0: 4 * 1.05, 1: 5, 2: 6}, nil)
	rows, err := compare(faster, old, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[3].Shape != "geomean" {
		t.Fatalf("rows %+v: want three shapes and the geomean", rows)
	}
	if r := rows[0]; math.Abs(r.Ratio-1.05) > 0.005 || r.Lo > r.Ratio || r.Hi < r.Ratio || r.Lo < 1.03 {
		t.Errorf("shape 0: %.4f [%.4f, %.4f], want ~1.05 and above 1.03", r.Ratio, r.Lo, r.Hi)
	}
	if r := rows[1]; r.Lo > 1 || r.Hi < 1 {
		t.Errorf("shape 1 (unchanged): [%.4f, %.4f] excludes 1", r.Lo, r.Hi)
	}
	if g := rows[3]; math.Abs(g.Ratio-math.Cbrt(1.05)) > 0.003 {
		t.Errorf("geomean %.4f, want ~%.4f", g.Ratio, math.Cbrt(1.05))
	}
	part, err := compare(doc(3, map[int]float64{0: 4, 1: 5, 2: 6}, map[int]bool{1: true}), old, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(part) != 3 || strings.Contains(part[0].Shape+part[1].Shape, "M 256") {
		t.Errorf("with shape 1 untimed: %+v", part)
	}
	var buf bytes.Buffer
	write(&buf, faster, rows)
	if !strings.Contains(buf.String(), "| geomean |") || !strings.Contains(buf.String(), "M 128 N 4096 K 7168") {
		t.Errorf("report:\n%s", buf.String())
	}
}

// Documents with nothing timed against a baseline in common are an error,
// as is a resample count too small for a 95% interval.
func TestCompareRefuses(t *testing.T) {
	a := doc(1, map[int]float64{0: 4, 1: 5, 2: 6}, map[int]bool{0: true, 1: true, 2: true})
	b := doc(2, map[int]float64{0: 4, 1: 5, 2: 6}, nil)
	if _, err := compare(a, b, 1000, 1); err == nil || !strings.Contains(err.Error(), "no shape") {
		t.Errorf("nothing timed: err %v", err)
	}
	if _, err := compare(b, b, 10, 1); err == nil || !strings.Contains(err.Error(), "-resamples") {
		t.Errorf("10 resamples: err %v", err)
	}
	if _, err := decode([]byte("{")); err == nil {
		t.Error("a truncated document decoded")
	}
}
