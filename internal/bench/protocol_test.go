package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/stats"
	"github.com/pitchtank/pitchtank/kernels"
)

func runFake(t *testing.T, cfg Config, f *fakeBackend) (*result.Result, int, []byte) {
	t.Helper()
	var out bytes.Buffer
	r, code := Run(context.Background(), cfg, f, NewEmitter(&out))
	doc, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	if err := result.Validate(doc); err != nil {
		t.Fatalf("result does not validate: %v\n%s", err, doc)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("progress line is not JSON: %q: %v", line, err)
		}
	}
	return r, code, doc
}

func TestPairingAlternatesABandBA(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.001) })
	cfg := fakeConfig(1, true)
	// The guard's move adds untimed executions mid-loop (guard_test.go
	// covers it); this test follows the order of the timed ones alone.
	cfg.Unguarded = true
	r, code, _ := runFake(t, cfg, f)
	if code != result.ExitSuspect {
		t.Fatalf("exit %d, want 4 (unguarded): %s", code, r.Error)
	}
	pg := r.Shapes[0].Pairing
	if pg == nil || pg.Rounds < DefaultMinRounds {
		t.Fatalf("pairing %+v: want >= %d rounds", pg, DefaultMinRounds)
	}
	for i, o := range pg.Order {
		set, ab := roundSchedule(i, cfg.SeedsPerShape)
		want := map[bool]string{true: "AB", false: "BA"}[ab]
		if o != want || pg.Sets[i] != set {
			t.Fatalf("round %d: order %s set %d, want %s set %d", i, o, pg.Sets[i], want, set)
		}
	}
	// The recorded calls after the warm-ups must follow the order: variant
	// is role 0 (A), baseline role 1 (B).
	wu := r.Shapes[0].Variant.WarmupLaunches + r.Shapes[0].Baseline.WarmupLaunches
	timed := f.calls[wu:]
	if len(timed) != 2*pg.Rounds {
		t.Fatalf("%d timed calls for %d rounds", len(timed), pg.Rounds)
	}
	sets := f.sets[wu:]
	for i, c := range timed {
		round, pos := i/2, i%2
		want := pos // AB: 0 then 1
		if pg.Order[round] == "BA" {
			want = 1 - pos
		}
		// Rule 4: both roles of a round share one input set.
		if c[1] != want || sets[i] != pg.Sets[round] {
			t.Fatalf("timed call %d ran role %d set %d, want role %d set %d (round %d %s)", i, c[1], sets[i], want, pg.Sets[round], round, pg.Order[round])
		}
	}
	if r.Shapes[0].InputSets != cfg.SeedsPerShape {
		t.Fatalf("input_sets %d, want %d", r.Shapes[0].InputSets, cfg.SeedsPerShape)
	}
	if n := len(r.Shapes[0].Variant.SamplesNs); n != pg.Rounds {
		t.Fatalf("variant has %d samples for %d rounds", n, pg.Rounds)
	}
}

// TestRoundScheduleProperties checks what the schedule promises for any
// number of input sets: no timed sample directly follows an execution on
// the same buffers (role and set), every set runs both AB and BA, AB and
// BA are balanced, and at least every other round changes the order.
func TestRoundScheduleProperties(t *testing.T) {
	for sets := 1; sets <= 7; sets++ {
		rounds := max(DefaultMinRounds, 2*sets) * 2
		type run struct{ role, set int }
		var seq []run
		seen := map[int]map[bool]bool{}
		nAB, flips := 0, 0
		prevAB := false
		for r := 0; r < rounds; r++ {
			set, ab := roundSchedule(r, sets)
			if seen[set] == nil {
				seen[set] = map[bool]bool{}
			}
			seen[set][ab] = true
			if ab {
				nAB++
				seq = append(seq, run{0, set}, run{1, set})
			} else {
				seq = append(seq, run{1, set}, run{0, set})
			}
			if r > 0 && ab != prevAB {
				flips++
			}
			prevAB = ab
		}
		repeats := map[int]int{}
		for i := 1; i < len(seq); i++ {
			if seq[i] == seq[i-1] {
				repeats[seq[i].role]++
			}
		}
		if sets > 1 && len(repeats) > 0 {
			t.Fatalf("%d sets: a sample follows itself on the same buffers (%v)", sets, repeats)
		}
		if d := repeats[0] - repeats[1]; sets == 1 && (d < -1 || d > 1) {
			t.Fatalf("1 set: role repeats unbalanced %v", repeats)
		}
		for s := 0; s < sets; s++ {
			if !seen[s][true] || !seen[s][false] {
				t.Fatalf("%d sets: set %d ran only one order (%v)", sets, s, seen[s])
			}
		}
		if d := 2*nAB - rounds; d < -2 || d > 2 {
			t.Fatalf("%d sets: %d AB of %d rounds", sets, nAB, rounds)
		}
		// Two sets give AB BA BA AB ...: balanced in every four rounds.
		if flips < rounds/2-1 {
			t.Fatalf("%d sets: only %d order changes in %d rounds", sets, flips, rounds)
		}
	}
}

func TestWarmupAtLeastElevenLaunches(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 5000 })
	r, _, _ := runFake(t, fakeConfig(1, false), f)
	if w := r.Shapes[0].Variant.WarmupLaunches; w < 11 {
		t.Fatalf("warm-up %d launches: want one untimed pass plus at least 10", w)
	}
}

func TestStopReasons(t *testing.T) {
	t.Run("converged", func(t *testing.T) {
		f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.001) })
		r, _, _ := runFake(t, fakeConfig(1, false), f)
		m := r.Shapes[0].Variant
		if m.StopReason != stats.StopConverged {
			t.Fatalf("stop reason %q, want %q", m.StopReason, stats.StopConverged)
		}
		if len(m.SamplesNs) < 10 {
			t.Fatalf("%d samples: the rule needs at least 10", len(m.SamplesNs))
		}
		if m.Stats.RelSEM > 0.0025 {
			t.Fatalf("converged with rel. SEM %v", m.Stats.RelSEM)
		}
	})
	t.Run("max_samples", func(t *testing.T) {
		// +-50% noise never reaches 0.25% rel. SEM within 400 samples.
		f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.5) })
		r, _, _ := runFake(t, fakeConfig(1, false), f)
		m := r.Shapes[0].Variant
		if m.StopReason != stats.StopMaxSamples || len(m.SamplesNs) != 400 {
			t.Fatalf("stop reason %q after %d samples, want %q after 400", m.StopReason, len(m.SamplesNs), stats.StopMaxSamples)
		}
	})
	t.Run("paired_waits_for_both", func(t *testing.T) {
		// The variant converges at once; the baseline is noisy and hits the
		// sample cap: both stop there, the variant's reason says it stopped
		// for its partner.
		f := newFake(func(shape, role, k int) float64 {
			if role == 0 {
				return 10000
			}
			return 10000 * noise(shape, role, k, 0.5)
		})
		r, _, _ := runFake(t, fakeConfig(1, true), f)
		s := r.Shapes[0]
		if s.Baseline.StopReason != stats.StopMaxSamples {
			t.Fatalf("baseline stop reason %q", s.Baseline.StopReason)
		}
		if len(s.Variant.SamplesNs) != len(s.Baseline.SamplesNs) {
			t.Fatalf("unpaired sample counts %d vs %d", len(s.Variant.SamplesNs), len(s.Baseline.SamplesNs))
		}
		if s.Variant.StopReason != stats.StopConverged {
			t.Fatalf("variant stop reason %q, want %q (it converged; the pair ran on)", s.Variant.StopReason, stats.StopConverged)
		}
	})
}

func TestBelowFloorIsFlagged(t *testing.T) {
	// 1 ns is far below any floor of a real GEMM.
	f := newFake(func(shape, role, k int) float64 { return 1 })
	r, _, _ := runFake(t, fakeConfig(1, false), f)
	s := r.Shapes[0]
	if !slices.Contains(s.Flags, "below_floor") {
		t.Fatalf("flags %v: want below_floor (median %v ns, floor %v ns)", s.Flags, s.Variant.Stats.MedianNs, s.FloorNs)
	}
	if !(s.FractionOfFloor > 1) {
		t.Fatalf("fraction of floor %v: want > 1 for a time under the floor", s.FractionOfFloor)
	}
	f2 := newFake(func(shape, role, k int) float64 { return 1e9 })
	r2, _, _ := runFake(t, fakeConfig(1, false), f2)
	if slices.Contains(r2.Shapes[0].Flags, "below_floor") {
		t.Fatalf("1 s flagged below floor")
	}
}

func TestThrottleFlags(t *testing.T) {
	got := ThrottleFlags(0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x1 | 0x2)
	want := []string{"power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "power_brake"}
	if !slices.Equal(got, want) {
		t.Fatalf("ThrottleFlags = %v, want %v", got, want)
	}
	if f := ThrottleFlags(0x1); len(f) != 0 {
		t.Fatalf("GPU idle (0x1) flagged: %v", f)
	}
	f := newFake(func(shape, role, k int) float64 { return 10000 })
	f.reasons = 0x4 | 0x40
	r, _, _ := runFake(t, fakeConfig(1, false), f)
	s := r.Shapes[0]
	for _, w := range []string{"throttle_power_cap", "throttle_hw_thermal"} {
		if !slices.Contains(s.Flags, w) || !slices.Contains(r.Summary.Flags, w) {
			t.Fatalf("shape flags %v, summary flags %v: want %s", s.Flags, r.Summary.Flags, w)
		}
	}
	if !slices.Equal(s.TelemetryBefore.Flags, []string{"power_cap", "hw_thermal"}) {
		t.Fatalf("telemetry flags %v", s.TelemetryBefore.Flags)
	}
}

func TestFastPCountsIncorrectShapes(t *testing.T) {
	// The variant is 2.5x faster than the baseline everywhere, but wrong on
	// shape 1: fast_p must count that shape as a failure.
	f := newFake(func(shape, role, k int) float64 {
		if role == 0 {
			return 4000 * noise(shape, role, k, 0.001)
		}
		return 10000 * noise(shape, role, k, 0.001)
	})
	f.wrong[[2]int{1, 0}] = true
	r, code, _ := runFake(t, fakeConfig(3, true), f)
	if code != result.ExitIncorrect || r.Status != result.StatusIncorrect {
		t.Fatalf("exit %d status %s, want %d incorrect", code, r.Status, result.ExitIncorrect)
	}
	s1 := r.Shapes[1]
	if s1.Correct || s1.Variant != nil || s1.Skipped == "" {
		t.Fatalf("incorrect shape: correct %v, timed %v, skipped %q", s1.Correct, s1.Variant != nil, s1.Skipped)
	}
	want := map[float64]float64{1.0: 2.0 / 3, 1.2: 2.0 / 3, 2.0: 2.0 / 3}
	for _, fp := range r.Summary.FastP {
		if d := fp.Value - want[fp.P]; d > 1e-12 || d < -1e-12 {
			t.Fatalf("fast_%v = %v, want %v", fp.P, fp.Value, want[fp.P])
		}
	}
	if len(r.Summary.FastP) != 3 {
		t.Fatalf("fast_p levels %v", r.Summary.FastP)
	}
	if g := *r.Summary.GeomeanSpeedup; g < 2.4 || g > 2.6 {
		t.Fatalf("geomean speedup %v over correct shapes, want ~2.5", g)
	}
	if r.Summary.Verdicts.Faster != 2 {
		t.Fatalf("verdicts %+v", r.Summary.Verdicts)
	}
}

func TestAAFakeIntervalContainsOne(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.003) })
	cfg := fakeConfig(2, true)
	cfg.AA = true
	r, code, _ := runFake(t, cfg, f)
	if code != result.ExitOK {
		t.Fatalf("exit %d: %s", code, r.Error)
	}
	for _, s := range r.Shapes {
		iv := s.Pairing.Speedup
		if !(iv.Lo <= 1 && 1 <= iv.Hi) || iv.Lo < 0.99 || iv.Hi > 1.01 {
			t.Fatalf("shape %d: A/A interval [%v, %v] must contain 1 and lie inside [0.99, 1.01]", s.Index, iv.Lo, iv.Hi)
		}
		if s.Pairing.Verdict != "no clear difference" {
			t.Fatalf("A/A verdict %q", s.Pairing.Verdict)
		}
	}
}

func TestKernelThatWritesInputsFails(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 })
	f.writesInputs[0] = true
	r, code, _ := runFake(t, fakeConfig(1, true), f)
	if code != result.ExitIncorrect || r.Shapes[0].Correct {
		t.Fatalf("exit %d, correct %v: a kernel that writes its inputs must fail", code, r.Shapes[0].Correct)
	}
	if !slices.Contains(r.Shapes[0].Flags, "inputs_modified") {
		t.Fatalf("flags %v", r.Shapes[0].Flags)
	}
}

func TestIncorrectBaselineIsNotCompared(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 })
	f.wrong[[2]int{0, 1}] = true
	r, code, _ := runFake(t, fakeConfig(1, true), f)
	s := r.Shapes[0]
	if code != result.ExitIncorrect || s.BaselineCorrect == nil || *s.BaselineCorrect || s.Pairing != nil {
		t.Fatalf("exit %d, baseline_correct %v, pairing %v", code, s.BaselineCorrect, s.Pairing)
	}
	if !s.Correct {
		t.Fatalf("the variant itself was correct")
	}
}

func TestChecksRecordSeedsAndLastTimed(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 })
	r, _, _ := runFake(t, fakeConfig(1, true), f)
	s := r.Shapes[0]
	var fresh, last, ref int
	for _, c := range s.Checks {
		switch c.Phase {
		case result.PhaseFresh:
			fresh++
		case result.PhaseLastTimed:
			last++
			if !slices.Contains(s.Seeds, c.Seed) {
				t.Fatalf("last-timed check on seed %d, not one of %v", c.Seed, s.Seeds)
			}
		case result.PhaseRefVsCPU:
			ref++
		}
	}
	if fresh != 4 || last != 4 || ref != 2 {
		t.Fatalf("checks: %d fresh (want 2 seeds x 2 roles), %d last_timed (want 2 sets x 2 roles), %d reference_vs_cpu (want 2)", fresh, last, ref)
	}
	if len(s.Seeds) != 2 || s.Seeds[0] == s.Seeds[1] || !s.ReferenceChecked || s.InputSets != 2 {
		t.Fatalf("seeds %v, input sets %d, reference checked %v", s.Seeds, s.InputSets, s.ReferenceChecked)
	}
}

// errShape fails its n-th timed sample the way a sticky CUDA error would.
type errShape struct {
	ShapeRunner
	n   int
	err error
}

func (s *errShape) Sample(ctx context.Context, role, set int) (float64, error) {
	s.n--
	if s.n < 0 {
		return 0, s.err
	}
	return s.ShapeRunner.Sample(ctx, role, set)
}

type errBackend struct {
	*fakeBackend
	after int
	err   error
}

func (b *errBackend) Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error) {
	r, err := b.fakeBackend.Shape(ctx, s, roles)
	return &errShape{ShapeRunner: r, n: b.after, err: b.err}, err
}

func TestDeviceErrorStopsWithExit3AndADocument(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 })
	b := &errBackend{fakeBackend: f, after: 40, err: errors.New("cuda: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered [sticky]")}
	var out bytes.Buffer
	r, code := Run(context.Background(), fakeConfig(2, true), b, NewEmitter(&out))
	if code != result.ExitCouldNotRun || r.Status != result.StatusError || !strings.Contains(r.Error, "ILLEGAL_ADDRESS") {
		t.Fatalf("exit %d status %s error %q", code, r.Status, r.Error)
	}
	doc, _ := json.Marshal(r)
	if err := result.Validate(doc); err != nil {
		t.Fatalf("error document does not validate: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last ErrorLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "error" || last.ExitCode != result.ExitCouldNotRun || !strings.Contains(last.Message, "ILLEGAL_ADDRESS") {
		t.Fatalf("last line %q (%v)", lines[len(lines)-1], err)
	}
	if len(r.Shapes) != 1 || r.Shapes[0].Skipped == "" {
		t.Fatalf("the failed shape must be recorded with why it was not timed: %+v", r.Shapes)
	}
}

func TestMaxTimeStopsWithTimeout(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 {
		time.Sleep(2 * time.Millisecond)
		return 10000 * noise(shape, role, k, 0.5) // never converges
	})
	cfg := fakeConfig(1, true)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	r, code := Run(ctx, cfg, f, nil)
	if code != result.ExitCouldNotRun || !strings.Contains(r.Error, "timeout") {
		t.Fatalf("exit %d error %q, want 3 and a timeout", code, r.Error)
	}
}

// TestPlanNamesModules: each shape's launch plan, per role, carries the
// module and cubin key the shape's runner names (schema version 3).
func TestPlanNamesModules(t *testing.T) {
	f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, 0.001) })
	r, _, _ := runFake(t, fakeConfig(2, true), f)
	if r.SchemaVersion != result.SchemaVersion || result.SchemaVersion < 3 {
		t.Fatalf("schema_version %d (this build writes %d), want 3 or later", r.SchemaVersion, result.SchemaVersion)
	}
	for i, s := range r.Shapes {
		if len(s.Launch) != 2 {
			t.Fatalf("shape %d: %d launch plans, want 2", i, len(s.Launch))
		}
		for role, pl := range s.Launch {
			if want := fmt.Sprintf("fake?role=%d", role); pl.Module != want || pl.CubinKey != fmt.Sprintf("fakekey%d", role) {
				t.Errorf("shape %d %s: module %q key %q, want %q", i, pl.Role, pl.Module, pl.CubinKey, want)
			}
		}
	}
}

// A sample cap below MinRounds (--max-samples) is a cap: roles that
// converge at once stop there instead of running to MinRounds, noisy ones
// stop there too, and the guard's move is made only where it and a pass
// over every set after it fit under the cap. The default cap leaves the
// move alone (TestGuardPassesAnHonestKernel).
func TestSmallMaxSamplesIsACap(t *testing.T) {
	for _, noisy := range []float64{0.0005, 0.5} {
		for _, paired := range []bool{false, true} {
			for _, maxSamples := range []int{10, 11, 13, 20, 25, 40} {
				name := fmt.Sprintf("noise %v paired %v cap %d", noisy, paired, maxSamples)
				t.Run(name, func(t *testing.T) {
					f := newFake(func(shape, role, k int) float64 { return 10000 * noise(shape, role, k, noisy) })
					cfg := guardedConfig(3, paired)
					cfg.Stop.MaxSamples = maxSamples
					r, code, _ := runFake(t, cfg, f)
					if code != result.ExitOK {
						t.Fatalf("exit %d: %s", code, r.Error)
					}
					if r.Protocol.StopRule.MaxSamples != maxSamples {
						t.Fatalf("protocol.stop_rule.max_samples %d, want %d", r.Protocol.StopRule.MaxSamples, maxSamples)
					}
					for _, s := range r.Shapes {
						ms := []*result.Measurement{s.Variant}
						if paired {
							ms = append(ms, s.Baseline)
						}
						for _, m := range ms {
							// Never past the cap; at the cap where the noise keeps
							// a role from converging, or where MinRounds (30, paired
							// only) would hold a converged one past it.
							n := len(m.SamplesNs)
							atCap := noisy > 0.1 || (paired && maxSamples < DefaultMinRounds)
							if n > maxSamples || (atCap && n != maxSamples) {
								t.Fatalf("shape %d %s: %d samples (stop %q), cap %d", s.Index, m.Role, n, m.StopReason, maxSamples)
							}
						}
						if g := s.Guard; g.MoveRound >= 0 && g.MoveRound+cfg.SeedsPerShape > maxSamples {
							t.Fatalf("shape %d: guard move at round %d with %d sets does not fit under the cap %d", s.Index, g.MoveRound, cfg.SeedsPerShape, maxSamples)
						}
					}
				})
			}
		}
	}
}
