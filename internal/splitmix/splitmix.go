// Package splitmix is the splitmix64 generator (Steele, Lea, Flood 2014):
// tiny, fast and fully specified here, so a seed gives the same stream on
// every machine and Go version (math/rand's streams are not promised to stay
// the same). The seeded kernel inputs (nvfp4) and the bootstrap intervals
// (stats) both rely on that.
package splitmix

import "math/bits"

// Rand is one splitmix64 stream.
type Rand struct{ s uint64 }

// New starts a stream at seed.
func New(seed uint64) *Rand { return &Rand{s: seed} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// At returns the n-th value (n >= 1) that New(seed) gives, without drawing
// the ones before it: the state only ever advances by the same constant.
func At(seed, n uint64) uint64 {
	return New(seed + 0x9E3779B97F4A7C15*(n-1)).Uint64()
}

// Intn returns a value in [0, n) by Lemire's multiply-shift (bias < n/2^64).
func (r *Rand) Intn(n int) int {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}
