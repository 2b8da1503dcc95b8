package nvfp4

import (
	"fmt"
	"math"
)

// Default tolerances for an fp16 output of a GEMM whose decoded operands are
// exact in fp16 and whose products are accumulated in fp32 (the Hopper path of
// kernels.md), checked as |got - ref| <= atol + rtol*|ref|.
//
//   - The final fp16 rounding alone is at most 2^-11 ≈ 4.9e-4 relative
//     (half an ulp). fp32 accumulation over K = 7168 adds of order
//     sqrt(K) * 2^-24 ≈ 5e-6 of the partial sums typically, and under 1e-4 even
//     with split-K or a different summation order. DefaultRTol = 2e-3 is 4x the
//     rounding bound: a correct kernel never comes near it, while an error of
//     one e4m3 step (1/8 = 12.5%) in a scale, or one lost block of 16 products
//     (several percent of a typical |C|), is far outside it.
//   - Elements whose exact value is near zero have no relative accuracy to
//     speak of: cancellation leaves the fp32 accumulation error (absolute, of
//     order 1e-5 for the generator's |C| of 10-100) and the fp16 subnormal step.
//     DefaultATol = 1e-2 covers that with a wide margin and is still below one
//     product of the smallest typical size, so near-zero outputs are checked
//     too.
//
// These assume the generator's scale choice (typical |C| of order 10-100); for
// inputs with much larger outputs, scale atol with the typical |C|.
const (
	DefaultRTol = 2e-3
	DefaultATol = 1e-2
)

// Check is the outcome of comparing a kernel's output with the reference.
// All figures are finite, so a Check can be stored as JSON as is.
type Check struct {
	Elements   int     // len(ref)
	Mismatches int     // elements outside tolerance, non-finite ones and missing ones included
	NaNs       int     // non-finite outputs (NaN or ±Inf); they always fail
	MaxAbsErr  float64 // over finite outputs
	MaxRelErr  float64 // over finite outputs with ref != 0
	RelL2Err   float64 // ||got-ref|| / ||ref|| over finite outputs (||got-ref|| when ref is all zero)
	FirstBad   int     // index of the first failing element, -1 when none
	Pass       bool
	Note       string // why the comparison failed as a whole (length mismatch), else ""
}

// Compare checks fp16 outputs (IEEE binary16 bits) element-wise against the
// float64 reference: |got - ref| <= atol + rtol*|ref|. NaN and ±Inf never pass.
func Compare(got []uint16, ref []float64, atol, rtol float64) Check {
	return compare(len(got), func(i int) float64 { return F16ToFloat64(got[i]) }, ref, atol, rtol)
}

// CompareF32 is Compare for float32 outputs (e.g. a GPU reference kernel's).
func CompareF32(got []float32, ref []float64, atol, rtol float64) Check {
	return compare(len(got), func(i int) float64 { return float64(got[i]) }, ref, atol, rtol)
}

// CompareF64 is Compare for float64 outputs.
func CompareF64(got []float64, ref []float64, atol, rtol float64) Check {
	return compare(len(got), func(i int) float64 { return got[i] }, ref, atol, rtol)
}

func compare(n int, at func(int) float64, ref []float64, atol, rtol float64) Check {
	c := Check{Elements: len(ref), FirstBad: -1}
	fail := func(i int) {
		c.Mismatches++
		if c.FirstBad < 0 {
			c.FirstBad = i
		}
	}
	var errSq, refSq float64
	for i := range min(n, len(ref)) {
		g, r := at(i), ref[i]
		if math.IsNaN(g) || math.IsInf(g, 0) {
			c.NaNs++
			fail(i)
			continue
		}
		if math.IsNaN(r) || math.IsInf(r, 0) {
			// A broken reference: nothing can match it, and it must not
			// turn the error figures into NaN.
			fail(i)
			continue
		}
		d := math.Abs(g - r)
		c.MaxAbsErr = max(c.MaxAbsErr, d)
		if r != 0 {
			c.MaxRelErr = max(c.MaxRelErr, d/math.Abs(r))
		}
		errSq += d * d
		refSq += r * r
		if !(d <= atol+rtol*math.Abs(r)) {
			fail(i)
		}
	}
	if n != len(ref) {
		c.Note = fmt.Sprintf("output has %d elements, reference has %d", n, len(ref))
		for i := min(n, len(ref)); i < max(n, len(ref)); i++ {
			fail(i)
		}
	}
	if refSq > 0 {
		c.RelL2Err = math.Sqrt(errSq / refSq)
	} else {
		c.RelL2Err = math.Sqrt(errSq)
	}
	c.Pass = c.Mismatches == 0
	return c
}

// ToF16 rounds every reference value to fp16 bits (round to nearest even):
// what a perfect kernel would return.
func ToF16(ref []float64) []uint16 {
	out := make([]uint16, len(ref))
	for i, v := range ref {
		out[i] = F16FromFloat64(v)
	}
	return out
}
