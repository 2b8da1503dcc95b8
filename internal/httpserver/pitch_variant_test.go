package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A pitch's variant that names a kernel of the round's problem with knobs
// it does not have is refused when filed or edited, by the API and the
// form, naming the variant and storing nothing; a free label (a kernel
// measured elsewhere) and a round with no problem yet are left alone.
func TestPitchVariantCheckedAgainstTheRoundsProblem(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline"})
	a.round(2) // declares no problem
	pitch := func(round int, variant string) map[string]any {
		return map[string]any{"round": round, "title": "Pitch of " + variant, "body": "b",
			"claim": map[string]float64{"lo": 1.1, "hi": 1.3}, "variant": variant}
	}
	count := func() int {
		n := 0
		for _, r := range []int{1, 2} {
			ps, err := a.db.Pitches(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			n += len(ps)
		}
		return n
	}
	for _, v := range []string{"baseline?stages=99", "baseline?stagez=2", "wgmma?tile_m=7"} {
		r := a.api("POST", "/api/pitches", "alice", pitch(1, v))
		r.wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "variant")
		wantContains(t, r.body, "round 1 measures nvfp4_group_gemm")
	}
	if n := count(); n != 0 {
		t.Fatalf("refused pitches stored: %d", n)
	}
	var ok pitchJSON
	a.api("POST", "/api/pitches", "alice", pitch(1, "baseline?stages=2")).wantStatus(t, http.StatusCreated).decode(t, &ok)
	a.api("POST", "/api/pitches", "alice", pitch(1, "cute_dsl_pipeline")).wantStatus(t, http.StatusCreated)  // a free label
	a.api("POST", "/api/pitches", "alice", pitch(2, "baseline?stages=99")).wantStatus(t, http.StatusCreated) // no problem declared
	// An edit to a bad variant: refused, the pitch unchanged.
	edit := pitch(1, "baseline?stages=99")
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", ok.ID), "alice", edit).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "variant")
	if p, _ := a.db.Pitch(context.Background(), ok.ID); p.Variant != "baseline?stages=2" {
		t.Fatalf("a refused edit changed the variant to %q", p.Variant)
	}
	// The form says so next to the variant field.
	form := url.Values{"round": {"1"}, "title": {"From the form"}, "lo": {"1.1"}, "hi": {"1.3"}, "body": {"b"}, "variant": {"baseline?stages=99"}}
	r := a.browser().login("bob").post("/pitches", form)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("form with a bad variant: %d", r.status)
	}
	wantContains(t, r.body, `id="err-variant"`, "stages")
	if n := count(); n != 3 {
		t.Fatalf("%d pitches stored, want 3", n)
	}
}
