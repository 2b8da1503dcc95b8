package pitches

import "testing"

func TestCheckBlindRun(t *testing.T) {
	open := []OpenPitch{{PitchID: 3, RoundNumber: 2, Variant: "wgmma?stages=2&tile_n=128"}, {PitchID: 5, RoundNumber: 2, Variant: "wgmma?stages=2&tile_n=128"},
		{PitchID: 7, RoundNumber: 2, Variant: "fused"}}
	for _, tc := range []struct {
		pitch   int64
		variant string
		ok      bool
	}{
		{0, "wgmma?stages=2&tile_n=128", false}, // under no pitch: visible to all
		{7, "wgmma?stages=2&tile_n=128", false}, // under another pitch: visible to its contestant
		{3, "wgmma?stages=2&tile_n=128", true},
		{5, "wgmma?stages=2&tile_n=128", true}, // a second contestant's pitch of the same variant
		{0, "wgmma?stages=3", true},            // nobody's pitch
		{0, "", true},
	} {
		err := CheckBlindRun(tc.pitch, tc.variant, open)
		if (err == nil) != tc.ok {
			t.Errorf("pitch %d variant %q: %v, want ok=%v", tc.pitch, tc.variant, err, tc.ok)
			continue
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != ECONFLICT || e.Field != "pitch_id" {
				t.Errorf("pitch %d variant %q: %#v, want ECONFLICT on pitch_id", tc.pitch, tc.variant, err)
			}
		}
	}
}
