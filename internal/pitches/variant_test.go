package pitches

import (
	"strings"
	"testing"
)

func TestSameVariant(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"baseline?stages=3", "baseline?stages=3", true},
		{" baseline?stages=3\n", "baseline?stages=3", true},
		{"baseline?stages=3", "baseline?stages=2", false},
		{"baseline", "baseline?stages=1", false},                             // catalogue-free: a default knob spelled out is still another spec
		{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3", true}, // knob order ignored
		{"wgmma?tile_n=auto&stages=2", "wgmma?stages=2&tile_n=auto", true},
		{"baseline?", "baseline", true}, // an empty knob list is none
		{"baseline?stages=3", "fused?stages=3", false},
		{"cute_dsl?b=2&a=1", "cute_dsl?a=1&b=2", true}, // free labels too
		{"cute_dsl?a=1&a=2", "cute_dsl?a=2&a=1", true}, // repeated keys kept, sorted by value
		{"cute_dsl?a=1&a=2", "cute_dsl?a=1", false},
		{KernelVariant(testHash, "stages=2&tile_m=64"), KernelVariant(testHash, "tile_m=64&stages=2"), true},
		{KernelVariant(testHash, "stages=2"), KernelVariant(testHash, ""), false},
		{"", "", false}, // no variant yet takes nothing
		{" ", "", false},
		{"?", "", false},
	}
	for _, tc := range cases {
		if got := SameVariant(tc.a, tc.b); got != tc.want {
			t.Errorf("SameVariant(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

const testHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestVariantKey(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "",
		"  baseline \n":                   "baseline",
		"baseline?":                       "baseline",
		"baseline?tile_m=64&stages=3":     "baseline?stages=3&tile_m=64",
		"wgmma?tile_n=auto&stages=2":      "wgmma?stages=2&tile_n=auto",
		"x?b=2&a=9&a=1":                   "x?a=1&a=9&b=2",
		"kernel:" + testHash + "?z=1&y=2": "kernel:" + testHash + "?y=2&z=1",
		"baseline?stages=3&&tile_m=64":    "baseline?stages=3&tile_m=64",
	} {
		if got := VariantKey(in); got != want {
			t.Errorf("VariantKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// A reordering of a taken variant's knobs is the same variant: it is
// refused like the spelling that took it.
func TestCheckVariantFreeIgnoresKnobOrder(t *testing.T) {
	held := []VariantHolder{{PitchID: 4, RoundNumber: 2, Status: PitchActive, Variant: "wgmma?tile_n=auto&stages=2"}}
	if err := CheckVariantFree("wgmma?stages=2&tile_n=auto", held); ErrorCode(err) != ECONFLICT || fieldOf(err) != "variant" {
		t.Fatalf("reordered knobs: %v, want a conflict on variant", err)
	}
}

func TestCheckVariantFree(t *testing.T) {
	const v = "baseline?stages=3"
	active := VariantHolder{PitchID: 4, RoundNumber: 2, Status: PitchActive, Variant: v}
	measured := VariantHolder{PitchID: 3, RoundNumber: 2, Status: PitchWithdrawn, Variant: v, MeasuredRun: 9}
	unmeasured := VariantHolder{PitchID: 5, RoundNumber: 2, Status: PitchWithdrawn, Variant: v}
	other := VariantHolder{PitchID: 6, RoundNumber: 2, Status: PitchActive, Variant: "baseline?stages=2"}

	free := []struct {
		name    string
		variant string
		others  []VariantHolder
	}{
		{"no other pitch", v, nil},
		{"another variant", v, []VariantHolder{other}},
		{"withdrawn before any result", v, []VariantHolder{unmeasured}},
		{"empty variant", "", []VariantHolder{{PitchID: 7, RoundNumber: 2, Status: PitchActive}}},
	}
	for _, tc := range free {
		if err := CheckVariantFree(tc.variant, tc.others); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	taken := []struct {
		name   string
		others []VariantHolder
		want   string
	}{
		{"active", []VariantHolder{other, active},
			"pitch 4 already pitches this variant in round 2; edit or withdraw it instead"},
		{"withdrawn after a result", []VariantHolder{unmeasured, measured},
			"pitch 3 pitched this variant in round 2 and was withdrawn after run #9 measured it"},
		{"the active one is named first", []VariantHolder{measured, active},
			"pitch 4 already pitches"},
	}
	for _, tc := range taken {
		err := CheckVariantFree(v, tc.others)
		if ErrorCode(err) != ECONFLICT || fieldOf(err) != "variant" || !strings.HasPrefix(ErrorMessage(err), tc.want) {
			t.Errorf("%s: got %v, want conflict on variant: %q", tc.name, err, tc.want)
		}
	}
}
