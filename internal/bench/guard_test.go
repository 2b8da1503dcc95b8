package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/result"
)

// guardedConfig is fakeConfig with a fixed guard seed (reproducible), on
// test shapes with many rows: a content change negates a seeded half of
// them, and with one row a stale output would match half the time.
func guardedConfig(n int, paired bool) Config {
	cfg := fakeConfig(n, paired)
	cfg.Shapes = cfg.Problem.Tests[3 : 3+n]
	cfg.GuardSeed = 0x5eed
	return cfg
}

// An honest kernel passes every guard check, and the guard records what it
// did: checked samples in every role and input set, content changes, a
// reload with one seed per set, inputs restored after timing.
func TestGuardPassesAnHonestKernel(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.002) })
	cfg := guardedConfig(2, true)
	r, code, _ := runFake(t, cfg, f)
	if code != result.ExitOK || r.Status != result.StatusOK {
		t.Fatalf("exit %d status %s, want ok: failures %+v", code, r.Status, r.Summary.Failures)
	}
	if !r.Protocol.Guarded || r.Protocol.GuardSeed != cfg.GuardSeed {
		t.Fatalf("protocol guarded %v seed %d", r.Protocol.Guarded, r.Protocol.GuardSeed)
	}
	for _, s := range r.Shapes {
		g := s.Guard
		if g == nil {
			t.Fatalf("shape %d: no guard record", s.Index)
		}
		if len(g.CheckedSamples) != 2 || len(g.CheckedSamples[0]) == 0 || len(g.CheckedSamples[1]) == 0 {
			t.Fatalf("shape %d: checked samples %v: want some for both roles", s.Index, g.CheckedSamples)
		}
		if g.MoveRound < 2*cfg.SeedsPerShape || g.FreshSet < 0 || g.FreshSet >= cfg.SeedsPerShape || g.FreshSeed == 0 {
			t.Fatalf("shape %d: move round %d fresh set %d seed %d", s.Index, g.MoveRound, g.FreshSet, g.FreshSeed)
		}
		if g.ContentChanges < s.Pairing.Rounds*2 {
			t.Fatalf("shape %d: %d content changes for %d rounds", s.Index, g.ContentChanges, s.Pairing.Rounds)
		}
		// Every checked sample is a timed_sample check that passed, and
		// every role and input set had one.
		sets := map[[2]string]bool{}
		timed, after := 0, 0
		for _, c := range s.Checks {
			switch c.Phase {
			case result.PhaseTimedSample:
				timed++
				sets[[2]string{c.Role, string(rune('0' + c.Set))}] = true
				if !c.Pass || c.Sample < 0 {
					t.Fatalf("shape %d: timed check %+v", s.Index, c)
				}
			case result.PhaseInputsAfter:
				after++
				if !c.Pass {
					t.Fatalf("shape %d: inputs after timing %+v", s.Index, c)
				}
			}
		}
		if timed != len(g.CheckedSamples[0])+len(g.CheckedSamples[1]) {
			t.Fatalf("shape %d: %d timed checks, %v recorded", s.Index, timed, g.CheckedSamples)
		}
		if len(sets) != 2*cfg.SeedsPerShape || after != 2*cfg.SeedsPerShape {
			t.Fatalf("shape %d: timed checks cover %d role/sets, %d input checks; want %d each", s.Index, len(sets), after, 2*cfg.SeedsPerShape)
		}
	}
}

// Every class of cheat the fake can play is caught, on the role that
// cheats, and named by the check that caught it.
func TestGuardCatchesAndNamesCheats(t *testing.T) {
	for _, tc := range []struct {
		cheat, check string
	}{
		{"replay", result.PhaseTimedSample},
		{"keyed", result.PhaseTimedSample},
		{"detached", result.PhaseAfterTimer},
		{"timed_writes", result.PhaseInputsAfter},
	} {
		t.Run(tc.cheat, func(t *testing.T) {
			// A cheat "wins" by far: the fake times it at a tenth.
			f := newFake(func(shape, role, k int) float64 {
				return 10000 * (1 - 0.9*float64(1-role)) * noise(shape, role, k, 0.001)
			})
			f.cheat[0] = tc.cheat
			r, code, _ := runFake(t, guardedConfig(1, true), f)
			if code != result.ExitIncorrect || r.Status != result.StatusIncorrect || r.Shapes[0].Correct {
				t.Fatalf("exit %d status %s correct %v: the %s cheat passed", code, r.Status, r.Shapes[0].Correct, tc.cheat)
			}
			fs := r.Summary.Failures
			if len(fs) == 0 || fs[0].Role != result.RoleVariant || fs[0].Check != tc.check || fs[0].Detail == "" {
				t.Fatalf("failures %+v: want the variant named by %s with a detail", fs, tc.check)
			}
			// Caught while timing, the shape reports no times at all (the
			// input check runs after timing, like last_timed).
			if tc.check != result.PhaseInputsAfter && r.Summary.GeomeanSpeedup != nil {
				t.Fatalf("a caught cheat still reports a speedup %v", *r.Summary.GeomeanSpeedup)
			}
			// The baseline is honest: nothing names it.
			for _, x := range fs {
				if x.Role == result.RoleBaseline {
					t.Fatalf("the honest baseline failed: %+v", x)
				}
			}
		})
	}
}

// Without the guard the replay cheat passes as a large speedup: the test
// that shows the guard is what catches it, and that --unguarded results are
// suspect.
func TestUnguardedReplayPassesButIsSuspect(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 {
		return 10000 * (1 - 0.9*float64(1-role)) * noise(shape, role, k, 0.001)
	})
	f.cheat[0] = "replay"
	cfg := guardedConfig(1, true)
	cfg.Unguarded = true
	r, code, _ := runFake(t, cfg, f)
	if code != result.ExitSuspect || r.Status != result.StatusSuspect || !r.Shapes[0].Correct {
		t.Fatalf("exit %d status %s correct %v: want a correct but suspect result", code, r.Status, r.Shapes[0].Correct)
	}
	if len(r.Summary.Suspect) == 0 || !strings.Contains(r.Summary.Suspect[0], "--unguarded") {
		t.Fatalf("suspect %v: want the guard named", r.Summary.Suspect)
	}
}

// A result below the floor or over 10x is suspect (exit 4), with reasons.
func TestImplausibleResultsAreSuspect(t *testing.T) {
	t.Run("below floor", func(t *testing.T) {
		f := newFake(func(shape, role, k int) float64 { return 1 })
		r, code, _ := runFake(t, guardedConfig(1, false), f)
		if code != result.ExitSuspect || r.Status != result.StatusSuspect || len(r.Summary.Suspect) != 1 || !strings.Contains(r.Summary.Suspect[0], "speed-of-light floor") {
			t.Fatalf("exit %d status %s suspect %v", code, r.Status, r.Summary.Suspect)
		}
	})
	t.Run("over 10x", func(t *testing.T) {
		f := newFake(func(shape, role, k int) float64 {
			return 1e6 * (1 - 0.95*float64(1-role)) * noise(shape, role, k, 0.001)
		})
		r, code, _ := runFake(t, guardedConfig(1, true), f)
		if code != result.ExitSuspect || len(r.Summary.Suspect) != 1 || !strings.HasPrefix(r.Summary.Suspect[0], "geomean speedup 20.00x") {
			t.Fatalf("exit %d suspect %v", code, r.Summary.Suspect)
		}
	})
	t.Run("one shape over 10x, geomean under", func(t *testing.T) {
		// Real kernels beat a per-group baseline by 10-23x on the 16-group
		// test shape (H100, 2026-11-23): flagged on the shape, not suspect.
		f := newFake(func(shape, role, k int) float64 {
			x := 1e6 * noise(shape, role, k, 0.001)
			if role == 0 {
				x /= []float64{12, 2}[shape]
			}
			return x
		})
		r, code, _ := runFake(t, guardedConfig(2, true), f)
		if code != result.ExitOK || len(r.Summary.Suspect) != 0 || !slices.Contains(r.Shapes[0].Flags, "speedup_over_10x") {
			t.Fatalf("exit %d suspect %v flags %v", code, r.Summary.Suspect, r.Shapes[0].Flags)
		}
	})
	t.Run("plausible", func(t *testing.T) {
		f := newFake(func(shape, role, k int) float64 {
			return 1e6 * (1 - 0.5*float64(1-role)) * noise(shape, role, k, 0.001)
		})
		r, code, _ := runFake(t, guardedConfig(1, true), f)
		if code != result.ExitOK || len(r.Summary.Suspect) != 0 {
			t.Fatalf("exit %d suspect %v: a 2x result is not suspect", code, r.Summary.Suspect)
		}
	})
}

// The checked subset depends on the guard seed, not on the input seed:
// the same inputs with another guard seed check other samples.
func TestCheckedSamplesFollowTheGuardSeed(t *testing.T) {
	checked := func(seed uint64) []int {
		f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.002) })
		cfg := guardedConfig(1, true)
		cfg.GuardSeed = seed
		r, _, _ := runFake(t, cfg, f)
		return r.Shapes[0].Guard.CheckedSamples[0]
	}
	a, b, a2 := checked(1), checked(2), checked(1)
	if !slices.Equal(a, a2) {
		t.Fatalf("one guard seed, two subsets: %v vs %v", a, a2)
	}
	if slices.Equal(a, b) {
		t.Fatalf("guard seeds 1 and 2 checked the same samples %v", a)
	}
}

// flipBit is the device's pt_flip_rows mask: about half the rows, and a
// known value (the device test checks the kernel against this function).
func TestFlipBitSelectsAboutHalf(t *testing.T) {
	n := 0
	for l := range 4096 {
		if flipBit(12345, l) {
			n++
		}
	}
	if n < 1900 || n > 2200 {
		t.Fatalf("%d of 4096 rows flip, want about half", n)
	}
}
