package kernels

import (
	"slices"
	"strconv"
)

// The test-only cheat family (cheat.cu): resolvable only with
// TestKernelsEnabled, never listed.

func init() { registerFamily(cheatFamily{}) }

type cheatFamily struct{}

func (cheatFamily) Info() FamilyInfo { return FamilyInfo{Name: "cheat", Order: 91, TestOnly: true} }

func (cheatFamily) KnobSpace(string) []KnobSpec { return cheatKnobSpace }

// Fixed: one launch per group on the caller's stream (Plan).
func (cheatFamily) Fixed(string) Knobs { return Knobs{Launch: "sequential"} }

// Check: one knob; every declared value is valid.
func (cheatFamily) Check(string, Knobs) error { return nil }

func (cheatFamily) MinArch(string, Knobs) int                { return 80 }
func (cheatFamily) CheckDevice(v Variant, arch string) error { return checkArchAtLeast(v, arch) }

func (cheatFamily) Entries(Variant) []string {
	return []string{"cheat_before", "cheat_compute", "cheat_after"}
}

func (cheatFamily) Defines(v Variant, d map[string]string) map[string]string {
	d["CHEAT_MODE"] = strconv.Itoa(1 + slices.Index(CheatModes, v.Knobs.Mode))
	return d
}

// CheatModes are the test-only cheat family's modes (cheat.cu), in the
// order of its CHEAT_MODE numbers.
var CheatModes = []string{"replay", "sentinel", "keyed_content", "keyed_address", "detached", "alternate"}

// cheatKnobSpace is the test-only cheat family's one knob (cheat.cu).
var cheatKnobSpace = []KnobSpec{
	{Key: "mode", Values: CheatModes, Default: "replay",
		Doc: "replay = compute once, then leave C as it is; sentinel = compute only when C[0] is NaN (the old poison); keyed_content = replay a cached C while a few input bytes are unchanged; keyed_address = replay a cached C while C and A keep their addresses; detached = compute on a side stream the timer never waits for; alternate = compute every other execution"},
}

// Variant is the test-only variant that cheats the timer (cheat.cu). Like
// the fault family's it is reachable only through ResolveVariant with
// TestKernelsEnabled.
func (cheatFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{
		Name: "cheat", Base: "cheat", Title: "TEST ONLY: a kernel that cheats the timer", Problem: p.Name,
		Description: "cheat.cu: correct when it believes it is checked, skips or replays its work otherwise (see the mode knob). For the tests that show the bench catches and names every cheat; resolvable only with " + TestKernelsEnv + "=1.",
		SourceFile:  "cheat.cu", MinArch: 80,
	}
	v.Knobs, _ = defaultKnobs(p.Name, cheatFamily{})
	return v, true
}

// Plan runs the test-only cheat kernels (cheat.cu): cheat_before
// decides, one compute launch per group (64x64 tiles of 16x16 threads)
// does or skips the work, cheat_after keeps the books. In detached mode the
// compute launches go to a side stream that Run never joins.
func (cheatFamily) Plan(v Variant, s Shape, _ Limits) (*Plan, error) {
	dual := isDual(v.Problem)
	pl := &Plan{Mode: "sequential"}
	stream := 0
	if v.Knobs.Mode == "detached" {
		pl.Mode, pl.Streams, pl.Detached, stream = "streams", 1, true, 1
	}
	one := [3]uint32{1, 1, 1}
	pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_before", Grid: one, Block: one, Group: -1,
		Args: []Arg{ptr(BufA, 0), ptr(BufB, 0), ptr(BufC, 0), {Kind: ArgI64, Value: int64(s.SumM()) * int64(s.N)}}})
	off := 0
	for g, m := range s.M {
		args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
		if dual {
			args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
		}
		args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K), i32(off))
		pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_compute",
			Grid:  [3]uint32{uint32(ceilDiv(s.N, 64)), uint32(ceilDiv(m, 64)), 1},
			Block: [3]uint32{16, 16, 1}, Group: g, Stream: stream, Args: args})
		off += m * s.N
	}
	pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_after", Grid: one, Block: one, Group: -1})
	return pl, nil
}
