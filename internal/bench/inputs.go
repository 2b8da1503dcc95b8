package bench

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

// inputs are one shape's operands: exactly one of group and dual is set.
type inputs struct {
	group *nvfp4.GroupInputs
	dual  *nvfp4.DualInputs
}

// genInputs draws the operands of s from seed (nvfp4's generator: all 16 FP4
// codes, scales over several binades, never all zero). The shape must have
// passed p.CheckShape.
func genInputs(p *kernels.Problem, s kernels.Shape, seed uint64) inputs {
	if p.Kind == kernels.DualGEMM {
		return inputs{dual: nvfp4.GenDualGemm(seed, s.M[0], s.N, s.K)}
	}
	return inputs{group: nvfp4.GenGroupGemm(seed, s.M, s.N, s.K)}
}

// cpuReference is the float64 reference of every group's C, concatenated in
// group order (the layout Instance.Output uses).
func cpuReference(in inputs) []float64 {
	if in.dual != nil {
		return nvfp4.DualGemmRef(in.dual.A, in.dual.B1, in.dual.B2)
	}
	var out []float64
	for g := range in.group.A {
		out = append(out, nvfp4.GemmRef(in.group.A[g], in.group.B[g])...)
	}
	return out
}

// operands lists the inputs in a fixed order (for hashing).
func (in inputs) operands() []*nvfp4.Operand {
	if in.dual != nil {
		return []*nvfp4.Operand{in.dual.A, in.dual.B1, in.dual.B2}
	}
	var ops []*nvfp4.Operand
	for g := range in.group.A {
		ops = append(ops, in.group.A[g], in.group.B[g])
	}
	return ops
}

// hash is sha256 over every operand's data and scales.
func (in inputs) hash() string {
	h := sha256.New()
	for _, o := range in.operands() {
		h.Write(o.Data)
		h.Write(o.Scales)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// outputElements is the number of fp16 outputs of s.
func outputElements(s kernels.Shape) int {
	return s.SumM() * s.N
}
