package nvfp4

import (
	"math"

	"github.com/pitchtank/pitchtank/internal/splitmix"
)

// Targets for the predicted standard deviation of one output element before
// the final fp16 rounding. Group GEMM outputs are then of order 10-100 and
// their maximum over the largest benchmark shape stays near 200, far below
// fp16's 65504. The dual GEMM multiplies two GEMM outputs, so each is kept
// smaller: silu(C1)*C2 is then of order 10-100 with a maximum near 2000.
const (
	groupTargetStd = 32
	dualTargetStd  = 8
)

// Scale distribution (see the package comment).
const (
	scaleBinades    = 5  // binades a scale spans before the shift
	scaleTopExp     = 1  // largest unbiased exponent before the shift: values < 2^2
	scaleMinExp     = -6 // smallest normal e4m3 exponent; the shift never goes below it
	subnormalOneIn  = 32 // one scale in this many is an e4m3 subnormal
	maxOperandShift = scaleTopExp - scaleMinExp
)

// rng is the splitmix64 stream the generator draws from (internal/splitmix:
// a seed gives the same operands on every machine and Go version).
type rng = splitmix.Rand

// newStream gives each operand of a problem its own generator, so adding a
// group or changing one operand's size does not shift the others' values.
func newStream(seed, stream uint64) *rng {
	mix := splitmix.New(stream * 0xD1B54A32D192ED03)
	return splitmix.New(seed ^ mix.Uint64())
}

const (
	streamGroupA = 1 << 32 * (iota + 1)
	streamGroupB
	streamDualA
	streamDualB1
	streamDualB2
)

// scaleRange returns the unbiased exponent range of the normal scales of an
// operand whose scales are shifted down by shift binades.
func scaleRange(shift int) (lo, hi int) {
	hi = scaleTopExp - shift
	lo = max(scaleMinExp, hi-scaleBinades+1)
	return lo, hi
}

// scaleMeanSquare is E[s^2] of the scale distribution at this shift,
// computed by enumerating it exactly as genOperand draws it.
func scaleMeanSquare(shift int) float64 {
	lo, hi := scaleRange(shift)
	var sub, norm float64
	for m := 1; m <= 7; m++ {
		v := E4M3[m]
		sub += v * v / 7
	}
	cnt := float64((hi - lo + 1) * 8)
	for e := lo; e <= hi; e++ {
		for m := range 8 {
			v := E4M3[(e+7)<<3|m]
			norm += v * v / cnt
		}
	}
	return sub/subnormalOneIn + norm*(subnormalOneIn-1)/subnormalOneIn
}

// e2m1MeanSquare is E[a^2] for uniformly drawn FP4 codes (= 8.5625).
func e2m1MeanSquare() float64 {
	var s float64
	for _, v := range E2M1 {
		s += v * v / 16
	}
	return s
}

// predictedStd is the standard deviation of one element of A @ B^T over K
// products: the products are independent with mean zero (FP4 signs are
// symmetric), so Var = K * E[a^2] E[sa^2] E[b^2] E[sb^2].
func predictedStd(k, shiftA, shiftB int) float64 {
	ea := e2m1MeanSquare()
	return math.Sqrt(float64(k) * ea * ea * scaleMeanSquare(shiftA) * scaleMeanSquare(shiftB))
}

// chooseShifts returns the smallest total shift (split between A and B, B
// taking the odd binade) whose predicted standard deviation of C is at most
// target. Shifting by single binades per operand gives steps of 2x in C.
func chooseShifts(k int, target float64) (shiftA, shiftB int) {
	for t := 0; t <= 2*maxOperandShift; t++ {
		shiftA, shiftB = t/2, t-t/2
		if predictedStd(k, shiftA, shiftB) <= target {
			return shiftA, shiftB
		}
	}
	return maxOperandShift, maxOperandShift
}

// genOperand fills a rows x k operand from r: uniform FP4 codes, one block
// holding all 16 codes, scales per the package comment at the given shift.
func genOperand(r *rng, rows, k, shift int) *Operand {
	o := NewOperand(rows, k)
	for i := 0; i < len(o.Data); i += 8 {
		v := r.Uint64()
		for j := i; j < min(i+8, len(o.Data)); j++ {
			o.Data[j] = byte(v)
			v >>= 8
		}
	}
	lo, hi := scaleRange(shift)
	for i := range o.Scales {
		if r.Intn(subnormalOneIn) == 0 {
			o.Scales[i] = byte(1 + r.Intn(7)) // exponent field 0, mantissa 1..7
			continue
		}
		e := lo + r.Intn(hi-lo+1)
		o.Scales[i] = byte((e+7)<<3 | r.Intn(8))
	}
	// Forced placement: one seed-chosen block gets a permutation of all 16
	// codes, so every operand holds every code even at M=1, K=128.
	row := r.Intn(rows)
	blk := r.Intn(k / ScaleBlock)
	var perm [16]uint8
	for i := range perm {
		perm[i] = uint8(i)
	}
	for i := 15; i > 0; i-- {
		j := r.Intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for i, c := range perm {
		o.SetCode(row, blk*ScaleBlock+i, c)
	}
	return o
}

// GenGroupGemm generates the operands of a grouped GEMM with len(ms) groups:
// A[g] is ms[g] x k, B[g] is n x k. The same seed and shape always give the
// same bytes. An invalid shape is a programmer error (check user input with
// CheckGroupShape first) and panics with the rule it breaks.
func GenGroupGemm(seed uint64, ms []int, n, k int) *GroupInputs {
	if err := CheckGroupShape(ms, n, k); err != nil {
		panic(err)
	}
	sa, sb := chooseShifts(k, groupTargetStd)
	in := &GroupInputs{A: make([]*Operand, len(ms)), B: make([]*Operand, len(ms))}
	for g, m := range ms {
		in.A[g] = genOperand(newStream(seed, streamGroupA+uint64(g)), m, k, sa)
		in.B[g] = genOperand(newStream(seed, streamGroupB+uint64(g)), n, k, sb)
	}
	return in
}

// GenDualGemm generates the operands of a dual GEMM: A m x k, B1 and B2 n x k.
// Deterministic per seed; an invalid shape panics (check with CheckDualShape).
func GenDualGemm(seed uint64, m, n, k int) *DualInputs {
	if err := CheckDualShape(m, n, k); err != nil {
		panic(err)
	}
	sa, sb := chooseShifts(k, dualTargetStd)
	return &DualInputs{
		A:  genOperand(newStream(seed, streamDualA), m, k, sa),
		B1: genOperand(newStream(seed, streamDualB1), n, k, sb),
		B2: genOperand(newStream(seed, streamDualB2), n, k, sb),
	}
}
