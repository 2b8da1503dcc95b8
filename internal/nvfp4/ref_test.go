package nvfp4

import (
	"math"
	"runtime"
	"testing"
)

func operandFrom(rows, k int, data, scales []byte) *Operand {
	o := NewOperand(rows, k)
	copy(o.Data, data)
	copy(o.Scales, scales)
	return o
}

func TestGemmRefHandK16(t *testing.T) {
	// A: e0 = code 0x2 (1.0), e1 = code 0x3 (1.5), scale 0x38 (1.0).
	// B: e0 = code 0x4 (2.0), e1 = code 0xA (-1.0), scale 0x40 (2.0).
	// C = 1*1 * 2*2 + 1.5*1 * (-1)*2 = 4 - 3 = 1.
	a := operandFrom(1, 16, []byte{0x32}, []byte{0x38})
	b := operandFrom(1, 16, []byte{0xA4}, []byte{0x40})
	if c := GemmRef(a, b); len(c) != 1 || c[0] != 1 {
		t.Fatalf("C = %v, want [1]", c)
	}
}

func TestGemmRefHandK32(t *testing.T) {
	a := operandFrom(2, 32, []byte{
		// row 0: e0 = 0x7 (6), e5 = 0x9 (-0.5) | e16 = 0x5 (3), e31 = 0xE (-4)
		0x07, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0,
		// row 1: e3 = 0x1 (0.5) | e20 = 0xC (-2)
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00,
	}, []byte{
		0x3A, 0x01, // row 0: 1.25, 2^-9 (subnormal)
		0x48, 0x30, // row 1: 4.0, 0.5
	})
	b := operandFrom(1, 32, []byte{
		// e0 = 0x3 (1.5), e3 = 0x4 (2), e5 = 0x6 (4) | e16 = 0x2 (1), e20 = 0x5 (3), e31 = 0x2 (1)
		0x03, 0x40, 0x60, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x20,
	}, []byte{0x44, 0x38}) // 3.0, 1.0
	// Row 0: 6*1.25*1.5*3 + (-0.5)*1.25*4*3 + 3*2^-9*1 + (-4)*2^-9*1
	//      = 33.75 - 7.5 + 3/512 - 4/512 = 26.25 - 1/512.
	// Row 1: 0.5*4*2*3 + (-2)*0.5*3*1 = 12 - 3 = 9.
	want := []float64{26.25 - 1.0/512, 9}
	c := GemmRef(a, b)
	for i := range want {
		if c[i] != want[i] {
			t.Errorf("C[%d] = %v, want %v", i, c[i], want[i])
		}
	}
}

func TestDualGemmRefHand(t *testing.T) {
	// A row 0: e0 = 1.0; row 1: e0 = -4.0 (code 0xE); scales 1.0.
	a := operandFrom(2, 16, []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0x0E}, []byte{0x38, 0x38})
	// B1: e0 = 2.0, scale 1. B2: e0 = -1.5 (code 0xB), scale 2.
	b1 := operandFrom(1, 16, []byte{0x04}, []byte{0x38})
	b2 := operandFrom(1, 16, []byte{0x0B}, []byte{0x40})
	// Row 0: C1 = 2, C2 = -3. Row 1: C1 = -8, C2 = 12.
	want := []float64{
		2 / (1 + math.Exp(-2)) * -3,
		-8 / (1 + math.Exp(8)) * 12,
	}
	c := DualGemmRef(a, b1, b2)
	for i := range want {
		if math.Abs(c[i]-want[i]) > 1e-15*math.Abs(want[i]) {
			t.Errorf("C[%d] = %v, want %v", i, c[i], want[i])
		}
	}
}

// randomOperand draws every byte, scales over the whole finite e4m3 range,
// so partial sums are not exact and summation order would show.
func randomOperand(r *rng, rows, k int) *Operand {
	o := NewOperand(rows, k)
	for i := range o.Data {
		o.Data[i] = byte(r.Uint64())
	}
	for i := range o.Scales {
		s := byte(r.Intn(0x7F)) // 0x00..0x7E: every finite non-negative code
		o.Scales[i] = s
	}
	return o
}

func naiveGemm(a, b *Operand) []float64 {
	c := make([]float64, a.Rows*b.Rows)
	for i := range a.Rows {
		for j := range b.Rows {
			var acc float64
			for k := range a.K {
				acc += float64(a.Value(i, k) * b.Value(j, k))
			}
			c[i*b.Rows+j] = acc
		}
	}
	return c
}

func TestGemmRefEqualsNaiveBitForBit(t *testing.T) {
	// More goroutines than cores, odd M and N (tails of the 2x4 block), and
	// K over several K chunks and not a multiple of the chunk.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	r := newStream(42, 7)
	for _, s := range []struct{ m, n, k int }{{37, 70, 48}, {5, 131, 656}, {1, 3, 16}} {
		a, b := randomOperand(r, s.m, s.k), randomOperand(r, s.n, s.k)
		got, want := GemmRef(a, b), naiveGemm(a, b)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%+v: C[%d] = %v, naive %v", s, i, got[i], want[i])
			}
		}
	}
}

func TestDualGemmRefMatchesDefinition(t *testing.T) {
	in := GenDualGemm(3, 9, 64, 256)
	got := DualGemmRef(in.A, in.B1, in.B2)
	c1, c2 := naiveGemm(in.A, in.B1), naiveGemm(in.A, in.B2)
	for i := range got {
		want := c1[i] / (1 + math.Exp(-c1[i])) * c2[i]
		if math.Abs(got[i]-want) > 1e-14*math.Abs(want) {
			t.Fatalf("C[%d] = %v, want %v", i, got[i], want)
		}
	}
}

func BenchmarkGemmRef(b *testing.B) {
	const m, n, k = 128, 1024, 2048
	in := GenGroupGemm(1, []int{m}, n, k)
	b.ResetTimer()
	for b.Loop() {
		GemmRef(in.A[0], in.B[0])
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
