package nvfp4

import "math"

// F16FromFloat64 converts x to IEEE 754 binary16 bits with round to nearest,
// ties to even, in one rounding step (no double rounding through float32).
// Magnitudes that round above 65504 become ±Inf; NaN becomes a quiet NaN with
// x's sign; results below 2^-14 are encoded as subnormals (or ±0).
func F16FromFloat64(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	switch {
	case math.IsNaN(x):
		return sign | 0x7E00
	case math.IsInf(x, 0):
		return sign | 0x7C00
	case x < 0x1p-14:
		// Subnormal range: the value is q * 2^-24 with q an integer 0..1023.
		// Scaling by a power of two is exact, so RoundToEven is the only
		// rounding. q may round up to 1024, which is exactly the encoding of
		// the smallest normal, 2^-14.
		q := math.RoundToEven(x * 0x1p24)
		return sign | uint16(q)
	}
	frac, exp := math.Frexp(x) // x = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1               // x = (2*frac) * 2^e, 2*frac in [1, 2)
	// (2*frac - 1) is exact (Sterbenz) and * 1024 is a power-of-two scale, so
	// the mantissa below is the correctly rounded one.
	m := math.RoundToEven((2*frac - 1) * 1024)
	if m == 1024 { // rounding carried into the next binade
		m = 0
		e++
	}
	if e > 15 {
		return sign | 0x7C00
	}
	return sign | uint16(e+15)<<10 | uint16(m)
}

// F16ToFloat64 decodes IEEE 754 binary16 bits exactly (every binary16 value
// is a float64 value). NaN payloads are not preserved.
func F16ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1F
	m := float64(h & 0x3FF)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 0x1F:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+m/1024, e-15)
}
