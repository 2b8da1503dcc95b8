package nvfp4

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// fp32Accumulate imitates a kernel: the exact decoded operands (exact in fp16)
// multiplied and summed in float32, in k order or split over K into parts
// that are added at the end, then rounded once to fp16.
func fp32Accumulate(a, b *Operand, splits int) []float64 {
	ad, bd := a.Decode(), b.Decode()
	k := a.K
	c := make([]float64, a.Rows*b.Rows)
	for i := range a.Rows {
		for j := range b.Rows {
			var total float32
			for p := range splits {
				var acc float32
				for x := p * k / splits; x < (p+1)*k/splits; x++ {
					acc += float32(float32(ad[i*k+x]) * float32(bd[j*k+x]))
				}
				total += acc
			}
			c[i*b.Rows+j] = float64(total)
		}
	}
	return c
}

func TestDefaultTolerancesAcceptCorrectKernels(t *testing.T) {
	in := GenGroupGemm(9, []int{24}, 128, 7168)
	ref := GemmRef(in.A[0], in.B[0])
	for _, splits := range []int{1, 7} {
		got := ToF16(fp32Accumulate(in.A[0], in.B[0], splits))
		c := Compare(got, ref, DefaultATol, DefaultRTol)
		t.Logf("fp32 accumulation, %d split(s): max abs %.3g, max rel %.3g, rel L2 %.3g", splits, c.MaxAbsErr, c.MaxRelErr, c.RelL2Err)
		if !c.Pass {
			t.Errorf("fp32-accumulated result fails: %+v", c)
		}
	}
	exact := Compare(ToF16(ref), ref, DefaultATol, DefaultRTol)
	if !exact.Pass || exact.FirstBad != -1 || exact.Elements != len(ref) {
		t.Errorf("correctly rounded reference fails: %+v", exact)
	}
	if exact.MaxRelErr > 0x1p-11 {
		t.Errorf("fp16 rounding error %v exceeds half an ulp", exact.MaxRelErr)
	}

	d := GenDualGemm(9, 16, 64, 7168)
	dref := DualGemmRef(d.A, d.B1, d.B2)
	c1, c2 := fp32Accumulate(d.A, d.B1, 1), fp32Accumulate(d.A, d.B2, 1)
	dgot := make([]float64, len(c1))
	for i := range c1 {
		x, y := float32(c1[i]), float32(c2[i])
		silu := x / (1 + float32(math.Exp(float64(-x))))
		dgot[i] = float64(silu * y)
	}
	if c := Compare(ToF16(dgot), dref, DefaultATol, DefaultRTol); !c.Pass {
		t.Errorf("fp32 dual GEMM fails: %+v", c)
	}
}

func TestCompareCatchesOneBadElement(t *testing.T) {
	in := GenGroupGemm(10, []int{16}, 64, 2048)
	ref := GemmRef(in.A[0], in.B[0])
	got := ToF16(ref)
	const bad = 777
	// Half a percent off: four times fp16's rounding error, well inside what
	// a wrong scale or a dropped block of products causes.
	got[bad] = F16FromFloat64(ref[bad]*1.005 + math.Copysign(DefaultATol, ref[bad]))
	c := Compare(got, ref, DefaultATol, DefaultRTol)
	if c.Pass || c.Mismatches != 1 || c.FirstBad != bad || c.NaNs != 0 {
		t.Errorf("one corrupted element: %+v", c)
	}

	for _, poison := range []uint16{0x7E00, 0x7C00, 0xFC00} {
		got := ToF16(ref)
		got[3] = poison
		c := Compare(got, ref, DefaultATol, DefaultRTol)
		if c.Pass || c.NaNs != 1 || c.FirstBad != 3 || math.IsNaN(c.MaxAbsErr) || math.IsInf(c.RelL2Err, 0) {
			t.Errorf("output %#04x: %+v", poison, c)
		}
	}

	broken := slices.Clone(ref)
	broken[9] = math.NaN()
	if c := Compare(ToF16(ref), broken, DefaultATol, DefaultRTol); c.Pass || c.FirstBad != 9 || math.IsNaN(c.MaxAbsErr) || math.IsNaN(c.RelL2Err) {
		t.Errorf("NaN in the reference: %+v", c)
	}

	short := Compare(ToF16(ref)[:len(ref)-5], ref, DefaultATol, DefaultRTol)
	if short.Pass || short.Mismatches != 5 || !strings.Contains(short.Note, "reference has") {
		t.Errorf("short output: %+v", short)
	}
}

// A kernel that reads one scale wrong (one e4m3 step, 1.0 -> 1.125 or the
// like) must fail: the tolerance is tight enough for real decode bugs.
func TestCompareCatchesOneWrongScale(t *testing.T) {
	in := GenGroupGemm(12, []int{8}, 64, 4096)
	ref := GemmRef(in.A[0], in.B[0])
	in.A[0].Scales[5]++ // row 0, block 5
	wrong := GemmRef(in.A[0], in.B[0])
	c := Compare(ToF16(wrong), ref, DefaultATol, DefaultRTol)
	if c.Pass || c.FirstBad >= 64 {
		t.Errorf("wrong scale in row 0 not caught in row 0: %+v", c)
	}
	t.Logf("one wrong scale: %d of 64 row-0 outputs fail", c.Mismatches)
}

func TestCompareF32(t *testing.T) {
	ref := []float64{1, -2, 0, 1e-3, 100}
	got := []float32{1, -2, 0, 1e-3, 100}
	if c := CompareF32(got, ref, DefaultATol, DefaultRTol); !c.Pass || c.MaxAbsErr > 1e-7 {
		t.Errorf("equal data: %+v", c)
	}
	got[4] = 101
	c := CompareF32(got, ref, DefaultATol, DefaultRTol)
	if c.Pass || c.FirstBad != 4 || math.Abs(c.MaxAbsErr-1) > 1e-9 || math.Abs(c.MaxRelErr-0.01) > 1e-9 {
		t.Errorf("one bad element: %+v", c)
	}
	got[0] = float32(math.NaN())
	if c := CompareF32(got, ref, DefaultATol, DefaultRTol); c.NaNs != 1 || c.FirstBad != 0 {
		t.Errorf("NaN output: %+v", c)
	}
}
