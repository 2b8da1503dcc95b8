package nvfp4

import "fmt"

// Operand is one NVFP4 matrix of Rows x K, stored K-major as the GPU kernels
// consume it: two FP4 codes per byte, element 2i of a row in the low nibble
// and element 2i+1 in the high nibble of byte i, rows back to back; one e4m3
// scale per ScaleBlock consecutive K elements of a row, row-major
// (Scales[r*(K/ScaleBlock) + k/ScaleBlock]).
type Operand struct {
	Rows, K int
	Data    []byte // Rows*K/2 bytes
	Scales  []byte // Rows*(K/ScaleBlock) e4m3 codes
}

// CheckOperandShape reports why rows x k cannot be an NVFP4 operand, or nil.
func CheckOperandShape(rows, k int) error {
	if rows < 1 {
		return fmt.Errorf("nvfp4: operand rows must be >= 1, got %d", rows)
	}
	if k < ScaleBlock || k%ScaleBlock != 0 {
		return fmt.Errorf("nvfp4: operand K must be a positive multiple of %d (one e4m3 scale per %d elements), got %d", ScaleBlock, ScaleBlock, k)
	}
	return nil
}

// NewOperand allocates a zeroed rows x k operand. The shape is a programmer's
// choice, not user input: callers validate user shapes first (CheckOperandShape,
// CheckGroupShape, CheckDualShape), and an invalid shape here panics with the
// rule it breaks, like make with a negative length.
func NewOperand(rows, k int) *Operand {
	if err := CheckOperandShape(rows, k); err != nil {
		panic(err)
	}
	return &Operand{
		Rows:   rows,
		K:      k,
		Data:   make([]byte, rows*k/2),
		Scales: make([]byte, rows*(k/ScaleBlock)),
	}
}

// Code returns the 4-bit FP4 code of element (r, k).
func (o *Operand) Code(r, k int) uint8 {
	b := o.Data[(r*o.K+k)/2]
	if k&1 == 1 {
		return b >> 4
	}
	return b & 0xF
}

// SetCode stores the 4-bit FP4 code c (low 4 bits used) at element (r, k).
func (o *Operand) SetCode(r, k int, c uint8) {
	i := (r*o.K + k) / 2
	if k&1 == 1 {
		o.Data[i] = o.Data[i]&0x0F | (c&0xF)<<4
	} else {
		o.Data[i] = o.Data[i]&0xF0 | c&0xF
	}
}

// Scale returns the e4m3 scale code that applies to element (r, k).
func (o *Operand) Scale(r, k int) uint8 {
	return o.Scales[r*(o.K/ScaleBlock)+k/ScaleBlock]
}

// Value returns the decoded value of element (r, k): E2M1[code] * E4M3[scale].
func (o *Operand) Value(r, k int) float64 {
	return E2M1[o.Code(r, k)] * E4M3[o.Scale(r, k)]
}

// DecodeRow writes the K decoded values of row r into dst[:K]. Every value is
// exact in float64 (and in fp16: at most 5 significant bits).
func (o *Operand) DecodeRow(r int, dst []float64) {
	data := o.Data[r*o.K/2 : (r+1)*o.K/2]
	nb := o.K / ScaleBlock
	scales := o.Scales[r*nb : (r+1)*nb]
	dst = dst[:o.K]
	for b, sc := range scales {
		s := E4M3[sc]
		blk := data[b*ScaleBlock/2 : (b+1)*ScaleBlock/2]
		out := dst[b*ScaleBlock : (b+1)*ScaleBlock]
		for i, byt := range blk {
			out[2*i] = E2M1[byt&0xF] * s
			out[2*i+1] = E2M1[byt>>4] * s
		}
	}
}

// Decode returns all rows decoded, row-major Rows x K.
func (o *Operand) Decode() []float64 {
	out := make([]float64, o.Rows*o.K)
	for r := range o.Rows {
		o.DecodeRow(r, out[r*o.K:(r+1)*o.K])
	}
	return out
}

// GroupInputs holds the operands of one grouped GEMM: A[g] is M_g x K and
// B[g] is N x K; C_g = A_g @ B_g^T.
type GroupInputs struct {
	A, B []*Operand
}

// DualInputs holds the operands of one dual GEMM:
// C = silu(A @ B1^T) * (A @ B2^T), A M x K, B1 and B2 N x K.
type DualInputs struct {
	A, B1, B2 *Operand
}

// The project's shape rules (kernels.md): M >= 1, N a multiple of 64,
// K a multiple of 128.
const (
	NMultiple = 64
	KMultiple = 128
)

func checkNK(n, k int) error {
	if n < NMultiple || n%NMultiple != 0 {
		return fmt.Errorf("nvfp4: N must be a positive multiple of %d, got %d", NMultiple, n)
	}
	if k < KMultiple || k%KMultiple != 0 {
		return fmt.Errorf("nvfp4: K must be a positive multiple of %d, got %d", KMultiple, k)
	}
	return nil
}

// CheckGroupShape reports which shape rule a grouped GEMM breaks, or nil.
func CheckGroupShape(ms []int, n, k int) error {
	if len(ms) == 0 {
		return fmt.Errorf("nvfp4: a grouped GEMM needs at least one group")
	}
	for g, m := range ms {
		if m < 1 {
			return fmt.Errorf("nvfp4: group %d: M must be >= 1, got %d", g, m)
		}
	}
	return checkNK(n, k)
}

// CheckDualShape reports which shape rule a dual GEMM breaks, or nil.
func CheckDualShape(m, n, k int) error {
	if m < 1 {
		return fmt.Errorf("nvfp4: M must be >= 1, got %d", m)
	}
	return checkNK(n, k)
}

// SubRows returns rows r0..r1-1 of o as an operand that shares o's memory
// (for computing part of a reference, or checking part of an output).
func (o *Operand) SubRows(r0, r1 int) *Operand {
	nb := o.K / ScaleBlock
	return &Operand{
		Rows:   r1 - r0,
		K:      o.K,
		Data:   o.Data[r0*o.K/2 : r1*o.K/2],
		Scales: o.Scales[r0*nb : r1*nb],
	}
}
