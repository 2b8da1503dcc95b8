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
		{"baseline", "baseline?stages=1", false},                              // as stored: a default knob is still another spec
		{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3", false}, // knob order included
		{"", "", false}, // no variant yet takes nothing
		{" ", "", false},
	}
	for _, tc := range cases {
		if got := SameVariant(tc.a, tc.b); got != tc.want {
			t.Errorf("SameVariant(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
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
