// Package nvfp4 is the CPU side of the NVFP4 GEMMs: the FP4 e2m1 and FP8 e4m3
// formats, IEEE fp16 conversion, a seeded input generator, the float64
// reference GEMM and dual GEMM, and the element-wise comparison of a kernel's
// output with the reference (measurement.md rule 1). It depends on nothing
// else in the module.
//
// # Layout
//
// Operands are K-major, two FP4 codes per byte (element 2i in the low nibble,
// 2i+1 in the high nibble of byte i), with one e4m3 scale per ScaleBlock = 16
// consecutive K elements of a row. An element's value is E2M1[code] *
// E4M3[scale]; at most 5 significant bits, so exact in fp16.
//
// # Generator distribution
//
// GenGroupGemm and GenDualGemm are deterministic per seed on every machine:
// they use their own splitmix64 stream per operand, never math/rand.
//
//   - FP4 codes: every nibble uniform over all 16 codes (so ±0 one time in
//     eight, symmetric signs, E[a^2] = 8.5625). In addition one seed-chosen
//     16-element block of each operand holds a random permutation of all 16
//     codes, so every operand contains every code, even at M = 1, K = 128.
//   - Scales (positive e4m3): one in 32 is an e4m3 subnormal (m * 2^-9,
//     m = 1..7) to exercise subnormal scale decoding; the rest have a uniform
//     mantissa (0..7, so non-power-of-two values) and an exponent uniform over
//     5 binades, [2^-3, 2^2) before a shift. The shift moves the binades down
//     as K grows (never below 2^-6, the smallest normal; the span then shrinks
//     to as few as 4 binades for the dual GEMM at K = 7168) so that outputs
//     keep the same size at every K: the shift is the smallest one for which
//     the predicted standard deviation of one GEMM output,
//     sqrt(K * E[a^2]^2 * E[sa^2] * E[sb^2]), is at most 32 for the group
//     GEMM and 8 for each GEMM inside the dual GEMM. Shifts are split between
//     A and B (B takes the odd binade).
//   - Consequences, tested on the benchmark shapes: operands are never all
//     zero, typical |C| is of order 10-100, and the largest |C| (for the dual
//     GEMM, |silu(C1)*C2|) stays far inside fp16's range of 65504.
//
// # Reference
//
// GemmRef sums exact products in float64 in k order; for the generator's
// inputs every partial sum is exact, so the reference is the exact product
// (see GemmRef), and DualGemmRef adds only float64 rounding of silu.
package nvfp4
