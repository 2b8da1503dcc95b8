package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/splitmix"
	"github.com/pitchtank/pitchtank/kernels"
)

// DefaultCheckRate: a timed sample is checked with probability 1/8, and
// every input set of every role has at least one checked sample in its
// first four after each load.
const DefaultCheckRate = 8

// errCaught ends a shape's timing when a guard check failed: the check is
// already recorded and the shape is incorrect; the run goes on.
var errCaught = errors.New("a timed launch failed a check")

// NewGuardSeed draws the guard's seed from the operating system: the
// checked samples, poison patterns and content changes must not be
// predictable from the (usually default) input seed. The seed is recorded
// in the result, so a run can be replayed with --guard-seed.
func NewGuardSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("bench: crypto/rand failed: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:]) | 1
}

// flipBit is whether a content change drawn from seed negates line
// (an output row for the group GEMM, a column for the dual GEMM). It must
// match pt_flip_rows in kernels/cuda/harness.cu bit for bit.
func flipBit(seed uint64, line int) bool {
	return splitmix.New(seed+uint64(line)*0x9E3779B97F4A7C15).Uint64()&1 == 1
}

// guard holds one shape's defences (measurement.md rule 1, extended):
// every execution, checked or timed, gets its output and workspace filled
// with fresh random bytes first, so no kernel can tell them apart or find
// an earlier output in place; every timed execution first changes the
// inputs' contents (a seeded half of the flip operand's rows negated), so
// no cached result keyed on contents or addresses stays right; once per
// shape every input set moves to fresh allocations with new inputs; a
// seeded random subset of timed samples is checked right after the stop
// event, and every sample is checked to have finished by then.
type guard struct {
	on      bool
	rng     *splitmix.Rand
	rate    int
	rows    int // output rows with a flip bit (bits 0..rows-1): the group GEMM's sum of M, 0 in the dual GEMM
	colBase int // the flip bit of output column c is colBase + c
	n       int // output columns
	sets    int
	base    [][]float64  // per set: the reference of the inputs as loaded
	flips   [][][]uint64 // per role, per set: content changes since the load
	state   [][][]bool   // per role, per set, per line: negated now
	hashes  [][]string   // per role, per set: the input hash as loaded
	timed   [][]int      // per role, per set: timed samples since the load
	must    [][]int      // per role, per set: the sample since the load always checked
	reload  int          // the round before which every set moves
	fresh   int          // the set that also gets new inputs then
	checked [][]int      // per role: indexes of checked samples
	changes int
	moved   bool
	seed    uint64 // the fresh set's input seed
	// overhead is the wall time the guard spent in the sample loop.
	overhead time.Duration
}

func newGuard(cfg Config, p *kernels.Problem, s kernels.Shape, shape, roles, sets int) *guard {
	g := &guard{
		on: !cfg.Unguarded, rng: splitmix.New(seedFor(cfg.GuardSeed, shape, 62)), rate: cfg.CheckRate,
		n: s.N, sets: sets, base: make([][]float64, sets),
	}
	if g.rate < 1 {
		g.rate = DefaultCheckRate
	}
	if p.Kind != kernels.DualGEMM {
		g.rows, g.colBase = s.SumM(), engine.FlipColumnBase
	}
	g.flips = make([][][]uint64, roles)
	g.state = make([][][]bool, roles)
	g.hashes = make([][]string, roles)
	g.timed = make([][]int, roles)
	g.must = make([][]int, roles)
	g.checked = make([][]int, roles)
	for r := range roles {
		g.flips[r] = make([][]uint64, sets)
		g.state[r] = make([][]bool, sets)
		g.hashes[r] = make([]string, sets)
		g.timed[r] = make([]int, sets)
		g.must[r] = make([]int, sets)
		g.checked[r] = []int{}
		for set := range sets {
			g.resetSet(r, set)
		}
	}
	// Reload after every set has run at least once paired both ways, at a
	// round the kernel cannot know.
	g.reload = 2*sets + g.rng.Intn(max(1, cfg.MinRounds/2))
	g.fresh = g.rng.Intn(sets)
	return g
}

func (g *guard) resetSet(role, set int) {
	g.flips[role][set] = nil
	g.state[role][set] = make([]bool, g.rows+g.n)
	g.timed[role][set] = 0
	g.must[role][set] = g.rng.Intn(4)
}

// nonzero draws a seed that is never 0 (0 means "none" to Scramble).
func (g *guard) nonzero() uint64 { return g.rng.Uint64() | 1 }

// scramble readies role's input set for its next execution: a fresh random
// fill of the output, and when timed and guarded a content change.
func (g *guard) scramble(ctx context.Context, sr ShapeRunner, role, set int, change bool) error {
	var flip uint64
	if change && !g.on {
		// Unguarded (--unguarded): timed executions run on the output and
		// inputs the last one left, as before the guard existed.
		return nil
	}
	if change {
		flip = g.nonzero()
	}
	if err := sr.Scramble(ctx, role, set, g.nonzero(), flip); err != nil {
		return fmt.Errorf("scramble input set %d: %w", set, err)
	}
	if flip != 0 {
		g.flips[role][set] = append(g.flips[role][set], flip)
		st := g.state[role][set]
		for l := range st {
			bit := l
			if l >= g.rows {
				bit = g.colBase + l - g.rows
			}
			if flipBit(flip, bit) {
				st[l] = !st[l]
			}
		}
		g.changes++
	}
	return nil
}

// decide says whether the timed sample about to be taken of role's set is
// checked, and counts it.
func (g *guard) decide(role, set int) bool {
	k := g.timed[role][set]
	g.timed[role][set]++
	if !g.on {
		return false
	}
	return k == g.must[role][set] || g.rng.Intn(g.rate) == 0
}

// moveAll moves every input set of every role to fresh allocations (the
// module loaded again too), and one set, chosen by the guard's stream,
// also gets new inputs drawn from it, with a new reference: nothing keyed
// on addresses survives, and a cache keyed on contents must miss at least
// there. New inputs for every set would cost a host generation and a GPU
// reference each (seconds on the benchmark shapes); the content changes of
// every sample already keep every set's contents moving.
func (g *guard) moveAll(ctx context.Context, sr ShapeRunner, roles int) error {
	g.moved = true
	for set := range g.sets {
		if set != g.fresh {
			if err := sr.Relocate(ctx, set); err != nil {
				return fmt.Errorf("move input set %d to fresh addresses: %w", set, err)
			}
			continue
		}
		g.seed = g.rng.Uint64()
		ref, err := sr.Reload(ctx, set, g.seed)
		if err != nil {
			return fmt.Errorf("reload input set %d at fresh addresses (seed %d): %w", set, g.seed, err)
		}
		g.base[set] = ref
		for r := range roles {
			g.resetSet(r, set)
			if g.hashes[r][set], err = sr.InputHash(ctx, r, set); err != nil {
				return fmt.Errorf("hash reloaded input set %d: %w", set, err)
			}
		}
	}
	// One untimed execution per role and set on the new buffers: the first
	// touch of fresh allocations (page tables, TLB) measured 3x slower on an
	// H100 and would otherwise land in a timed sample.
	for set := range g.sets {
		for r := range roles {
			if err := g.scramble(ctx, sr, r, set, true); err != nil {
				return err
			}
			if _, err := sr.Sample(ctx, r, set); err != nil {
				return fmt.Errorf("warm up moved input set %d: %w", set, err)
			}
		}
	}
	return nil
}

// restore undoes every content change of role's set (each negation is its
// own inverse) and returns the input hash then, to compare with the hash as
// loaded: a kernel that wrote its inputs while timed shows here.
func (g *guard) restore(ctx context.Context, sr ShapeRunner, role, set int) (string, error) {
	for _, f := range g.flips[role][set] {
		if err := sr.Scramble(ctx, role, set, 0, f); err != nil {
			return "", fmt.Errorf("undo content change of input set %d: %w", set, err)
		}
	}
	g.flips[role][set] = nil
	g.state[role][set] = make([]bool, g.rows+g.n)
	return sr.InputHash(ctx, role, set)
}

// record is what the shape's result keeps of the guard.
func (g *guard) record() *result.ShapeGuard {
	r := &result.ShapeGuard{CheckedSamples: g.checked, ContentChanges: g.changes, MoveRound: -1, FreshSet: -1}
	if g.moved {
		r.MoveRound, r.FreshSet, r.FreshSeed = g.reload, g.fresh, g.seed
	}
	return r
}

// compareFlipped returns out with the lines the content changes negated
// negated back (the fp16 sign bit), to compare with the reference as
// loaded: negation is exact and the comparison symmetric, so this checks
// out against the exact result of the inputs as they are now without
// building that reference (tens of MB on the benchmark shapes).
func (g *guard) compareFlipped(role, set int, out []uint16) []uint16 {
	st := g.state[role][set]
	fixed := make([]uint16, len(out))
	copy(fixed, out)
	for i := range fixed {
		neg := st[g.rows+i%g.n]
		if g.rows > 0 && st[i/g.n] {
			neg = !neg
		}
		if neg {
			fixed[i] ^= 0x8000
		}
	}
	return fixed
}
