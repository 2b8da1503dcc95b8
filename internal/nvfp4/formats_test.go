package nvfp4

import (
	"math"
	"testing"
)

// The OCP MX spec's e2m1 magnitudes for codes 0..7 (Table "FP4 E2M1").
var e2m1Spec = [8]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}

func TestE2M1AllCodes(t *testing.T) {
	for c := range 16 {
		want := e2m1Spec[c&7]
		got := E2M1[c]
		if c&8 != 0 {
			want = -want
			if !math.Signbit(got) {
				t.Errorf("code %#x: want the sign bit set, got %v", c, got)
			}
		} else if math.Signbit(got) {
			t.Errorf("code %#x: sign bit set on a positive code", c)
		}
		if got != want {
			t.Errorf("E2M1[%#x] = %v, want %v", c, got, want)
		}
		// Second derivation, integers only: 2*value = (2+m) << (e-1) for
		// e > 0, m for e == 0.
		e, m := (c>>1)&3, c&1
		twice := m
		if e > 0 {
			twice = (2 + m) << (e - 1)
		}
		if math.Abs(got)*2 != float64(twice) {
			t.Errorf("code %#x: |value|*2 = %v, bit fields give %d", c, math.Abs(got)*2, twice)
		}
	}
}

func TestE4M3AllCodes(t *testing.T) {
	nan := 0
	for c := range 256 {
		got := E4M3[c]
		s, e, m := c>>7, (c>>3)&0xF, c&7
		if e == 15 && m == 7 {
			if !math.IsNaN(got) {
				t.Errorf("code %#02x: want NaN, got %v", c, got)
			}
			nan++
			continue
		}
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Errorf("code %#02x: got %v, e4m3fn has no Inf and only two NaN codes", c, got)
			continue
		}
		// Integer derivation: |value| = M * 2^x with M = 8+m (normal) or m
		// (subnormal), x = e-10 or -9.
		mant, x := m, -9
		if e > 0 {
			mant, x = 8+m, e-10
		}
		want := float64(mant) * math.Pow(2, float64(x))
		if s == 1 {
			want = -want
		}
		if got != want || math.Signbit(got) != (s == 1) {
			t.Errorf("E4M3[%#02x] = %v, want %v", c, got, want)
		}
	}
	if nan != 2 {
		t.Errorf("found %d NaN codes, want 2 (0x7F, 0xFF)", nan)
	}
	spot := map[int]float64{
		0x00: 0, 0x01: 0x1p-9, 0x07: 7 * 0x1p-9, 0x08: 0x1p-6, 0x38: 1, 0x39: 1.125,
		0x3C: 1.5, 0x40: 2, 0x7E: 448, 0xFE: -448, 0xB8: -1, 0x81: -0x1p-9,
	}
	for c, want := range spot {
		if E4M3[c] != want {
			t.Errorf("E4M3[%#02x] = %v, want %v", c, E4M3[c], want)
		}
	}
	if !math.Signbit(E4M3[0x80]) || E4M3[0x80] != 0 {
		t.Errorf("E4M3[0x80] = %v, want -0", E4M3[0x80])
	}
	for c := 1; c < 0x7F; c++ {
		if !(E4M3[c] > E4M3[c-1]) {
			t.Errorf("positive codes not strictly increasing at %#02x: %v <= %v", c, E4M3[c], E4M3[c-1])
		}
	}
}

// The wgmma kernels (kernels/cuda/wg_group_gemm.cu) run NVFP4 as fp16 MMAs
// and rely on each operand being exact in fp16: a token is value * scale *
// 2^-7 and a weight value * scale * 2^-14 (the epilogue multiplies the fp32
// sums back by 2^21). Checked here for every e2m1 code and every finite e4m3
// scale: the product times each factor survives a round trip through fp16.
// A factor of 2^-15 would not (0.5 * 2^-9 * 2^-15 is under fp16's least
// subnormal), nor would 2^5 (6 * 448 * 2^5 is over its largest value).
func TestKernelOperandsExactInF16(t *testing.T) {
	exact := func(shift int) (bad int, example float64) {
		for v := range 16 {
			for s := range 256 {
				if math.IsNaN(E4M3[s]) {
					continue
				}
				x := math.Ldexp(E2M1[v]*E4M3[s], shift)
				if F16ToFloat64(F16FromFloat64(x)) != x {
					bad++
					example = x
				}
			}
		}
		return bad, example
	}
	for _, shift := range []int{-7, -14} {
		if bad, x := exact(shift); bad != 0 {
			t.Errorf("value * scale * 2^%d: %d products not exact in fp16 (e.g. %g)", shift, bad, x)
		}
	}
	for _, shift := range []int{-15, 5} {
		if bad, _ := exact(shift); bad == 0 {
			t.Errorf("value * scale * 2^%d: every product exact in fp16; the check cannot tell a bad factor", shift)
		}
	}
}
