package nvfp4

import (
	"math"
	"testing"
)

func isF16NaN(h uint16) bool { return h&0x7C00 == 0x7C00 && h&0x3FF != 0 }

func TestF16RoundTripAllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		v := F16ToFloat64(h)
		if isF16NaN(h) {
			if !math.IsNaN(v) {
				t.Fatalf("%#04x: want NaN, got %v", h, v)
			}
			if back := F16FromFloat64(v); !isF16NaN(back) {
				t.Fatalf("NaN from %#04x converts back to non-NaN %#04x", h, back)
			}
			continue
		}
		if back := F16FromFloat64(v); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, v, back)
		}
	}
}

func TestF16Decode(t *testing.T) {
	spot := map[uint16]float64{
		0x0000: 0, 0x0001: 0x1p-24, 0x03FF: 1023 * 0x1p-24, 0x0400: 0x1p-14,
		0x3C00: 1, 0x3C01: 1 + 0x1p-10, 0x3555: 0x1.554p-2, 0xC000: -2,
		0x7BFF: 65504, 0xFBFF: -65504, 0x7C00: math.Inf(1), 0xFC00: math.Inf(-1),
	}
	for h, want := range spot {
		if got := F16ToFloat64(h); got != want {
			t.Errorf("F16ToFloat64(%#04x) = %v, want %v", h, got, want)
		}
	}
	if v := F16ToFloat64(0x8000); v != 0 || !math.Signbit(v) {
		t.Errorf("0x8000 decodes to %v, want -0", v)
	}
	for h := 1; h <= 0x7C00; h++ {
		if !(F16ToFloat64(uint16(h)) > F16ToFloat64(uint16(h-1))) {
			t.Fatalf("decode not increasing at %#04x", h)
		}
	}
}

// Every midpoint between adjacent fp16 values (subnormals, normals, and the
// overflow threshold) must round to the even neighbour; the float64 values
// just beside it must round to the nearer one.
func TestF16RoundsToNearestEven(t *testing.T) {
	for _, sign := range []float64{1, -1} {
		for h := uint16(0); h < 0x7C00; h++ {
			lo := F16ToFloat64(h)
			hi := F16ToFloat64(h + 1)
			if h == 0x7BFF {
				hi = 65536 // the next binade's first value, as if the exponent were wider
			}
			mid := (lo + hi) / 2 // exact: both have few significant bits
			even := h
			if h&1 == 1 {
				even = h + 1 // for h = 0x7BFF this is 0x7C00, +Inf: 65520 overflows
			}
			sb := uint16(0)
			if sign < 0 {
				sb = 0x8000
			}
			if got := F16FromFloat64(sign * mid); got != even|sb {
				t.Fatalf("F16FromFloat64(%v) = %#04x, want %#04x (tie to even)", sign*mid, got, even|sb)
			}
			below := math.Nextafter(mid, lo)
			above := math.Nextafter(mid, hi)
			if got := F16FromFloat64(sign * below); got != h|sb {
				t.Fatalf("F16FromFloat64(%v) = %#04x, want %#04x", sign*below, got, h|sb)
			}
			if got := F16FromFloat64(sign * above); got != (h+1)|sb {
				t.Fatalf("F16FromFloat64(%v) = %#04x, want %#04x", sign*above, got, (h+1)|sb)
			}
		}
	}
	cases := map[float64]uint16{
		1e300: 0x7C00, -1e300: 0xFC00, 65519.99: 0x7BFF, 65520: 0x7C00,
		0x1p-26: 0x0000, 0x1p-25: 0x0000, 0x1.8p-25: 0x0001, math.Inf(1): 0x7C00,
		math.Copysign(0, -1): 0x8000, 1e-300: 0x0000, -1e-300: 0x8000,
	}
	for x, want := range cases {
		if got := F16FromFloat64(x); got != want {
			t.Errorf("F16FromFloat64(%v) = %#04x, want %#04x", x, got, want)
		}
	}
	if got := F16FromFloat64(math.NaN()); !isF16NaN(got) {
		t.Errorf("F16FromFloat64(NaN) = %#04x, want a NaN", got)
	}
}
