package nvfp4

import "math"

// ScaleBlock is the number of consecutive K elements of one row that share
// one e4m3 scale (NVFP4's block size).
const ScaleBlock = 16

// E2M1 maps every 4-bit FP4 code to its value. It is built from the bit
// definition in init (not typed in), so a typo cannot hide in a table.
var E2M1 [16]float64

// E4M3 maps every FP8 e4m3 "FN" code to its value; the two NaN codes
// (0x7F and 0xFF) hold math.NaN().
var E4M3 [256]float64

func init() {
	for c := range 16 {
		E2M1[c] = decodeE2M1(uint8(c))
	}
	for c := range 256 {
		E4M3[c] = decodeE4M3(uint8(c))
	}
}

// decodeE2M1 follows the OCP MX spec: 1 sign bit, 2 exponent bits with bias 1,
// 1 mantissa bit, no infinities or NaN. Exponent field 0 is subnormal:
// (-1)^s * 2^(1-bias) * (0.m).
func decodeE2M1(c uint8) float64 {
	sign := 1.0
	if c&0x8 != 0 {
		sign = -1
	}
	e := int(c>>1) & 0x3
	m := float64(c & 0x1)
	const bias = 1
	if e == 0 {
		return sign * math.Ldexp(m/2, 1-bias)
	}
	return sign * math.Ldexp(1+m/2, e-bias)
}

// decodeE4M3 follows the OCP FP8 e4m3 ("FN") definition: 1 sign bit,
// 4 exponent bits with bias 7, 3 mantissa bits; no infinities; S.1111.111 is
// NaN, so the largest finite magnitude is 1.75 * 2^8 = 448. Exponent field 0
// is subnormal: 2^(1-7) * (0.mmm), i.e. steps of 2^-9.
func decodeE4M3(c uint8) float64 {
	sign := 1.0
	if c&0x80 != 0 {
		sign = -1
	}
	e := int(c>>3) & 0xF
	m := float64(c & 0x7)
	const bias = 7
	if e == 0xF && c&0x7 == 0x7 {
		return math.NaN()
	}
	if e == 0 {
		return sign * math.Ldexp(m/8, 1-bias)
	}
	return sign * math.Ldexp(1+m/8, e-bias)
}
