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

// A pitch's variant that names a kernel of the round's problem is stored in
// the catalogue's spelling (defaults dropped, knobs in the kernel's order),
// by the API and the form, so that the one-pitch-per-variant rule sees
// another spelling of a taken variant (knobs reordered, a default spelled
// out) as the variant it is: a second pitch of it would be a re-roll.
func TestPitchVariantStoredCanonically(t *testing.T) {
	ctx := context.Background()
	a := newApp(t, Config{})
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	a.round(2)
	a.measure(2, runner.Measurement{Problem: "nvfp4_dual_gemm", Baseline: "baseline"})
	pitch := func(round int, variant string) map[string]any {
		return map[string]any{"round": round, "title": "Pitch of " + variant, "body": "b",
			"claim": map[string]float64{"lo": 1.1, "hi": 1.3}, "variant": variant}
	}
	file := func(login string, round int, variant, want string) pitchJSON {
		t.Helper()
		var p pitchJSON
		a.api("POST", "/api/pitches", login, pitch(round, variant)).wantStatus(t, http.StatusCreated).decode(t, &p)
		if p.Variant != want {
			t.Fatalf("filed %q: variant %q, want %q", variant, p.Variant, want)
		}
		if s, err := a.db.Pitch(ctx, p.ID); err != nil || s.Variant != want {
			t.Fatalf("filed %q: stored %q (%v), want %q", variant, s.Variant, err, want)
		}
		return p
	}

	// Knobs in the kernel's order (tile_m before stages), defaults dropped.
	stages := file("alice", 1, "baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3")
	file("alice", 1, "baseline?stages=1", "baseline")                    // stages=1 is the default
	file("alice", 1, "cute_dsl?b=2&a=1", "cute_dsl?b=2&a=1")             // a free label: as typed
	file("alice", 2, "baseline?stages=2&tile_m=64", "baseline?stages=2") // the dual GEMM's tile_m defaults to 64

	// Other spellings of taken variants: refused, nothing stored.
	before := a.countPitches(1, 2)
	for _, tc := range []struct {
		round   int
		variant string
	}{
		{1, "baseline?tile_m=64&stages=3"},
		{1, "baseline?stages=3&tile_m=64&tile_k=256"}, // tile_k=256 is the default
		{1, "baseline"},
		{1, "baseline?tile_m=128"},
		{1, "cute_dsl?a=1&b=2"},
		{2, "baseline?tile_m=64&stages=2"},
		{2, "baseline?stages=2"},
	} {
		r := a.api("POST", "/api/pitches", "alice", pitch(tc.round, tc.variant))
		r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "variant")
		wantContains(t, r.body, "already pitches this variant")
	}
	if n := a.countPitches(1, 2); n != before {
		t.Fatalf("refused pitches stored: %d, want %d", n, before)
	}

	// The form stores the same spelling.
	form := url.Values{"round": {"1"}, "title": {"From the form"}, "lo": {"1.1"}, "hi": {"1.3"}, "body": {"b"},
		"variant": {"baseline?epilogue=tma&stages=2"}}
	if r := a.browser().login("bob").post("/pitches", form); r.status != http.StatusSeeOther {
		t.Fatalf("form: status %d: %s", r.status, r.body)
	}
	ps, err := a.db.Pitches(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := ps[len(ps)-1]; got.Title != "From the form" || got.Variant != "baseline?stages=2&epilogue=tma" {
		t.Fatalf("form: stored %q %q", got.Title, got.Variant)
	}

	// Measured, the variant is locked; an edit that re-sends it in another
	// spelling is no change of variant and goes through.
	a.importFor(stages.ID, "baseline?tile_m=64&stages=3")
	for i, v := range []string{"baseline?tile_m=64&stages=3", "baseline?stages=3&tile_m=64", "baseline?stages=3&tile_m=64&tile_n=128"} {
		edit := pitch(1, v)
		edit["title"] = fmt.Sprintf("Stages, edit %d", i)
		var p pitchJSON
		a.api("PUT", fmt.Sprintf("/api/pitches/%d", stages.ID), "alice", edit).wantStatus(t, http.StatusOK).decode(t, &p)
		if p.Title != edit["title"] || p.Variant != "baseline?tile_m=64&stages=3" {
			t.Fatalf("edit re-spelling %q: title %q variant %q", v, p.Title, p.Variant)
		}
	}
	// A real change of variant is still refused.
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", stages.ID), "alice", pitch(1, "baseline?tile_m=64&stages=4")).
		wantError(t, http.StatusConflict, pitches.ECONFLICT, "variant")

	// An edit of an unmeasured pitch stores the new variant canonically.
	var p pitchJSON
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", stages.ID+1), "alice", pitch(1, "baseline?launch=streams&stages=4")).
		wantStatus(t, http.StatusOK).decode(t, &p)
	if p.Variant != "baseline?stages=4&launch=streams" {
		t.Fatalf("edited variant %q, want the catalogue's spelling", p.Variant)
	}
}

// countPitches is how many pitches the rounds hold.
func (a *app) countPitches(rounds ...int) int {
	a.t.Helper()
	n := 0
	for _, r := range rounds {
		ps, err := a.db.Pitches(context.Background(), r)
		if err != nil {
			a.t.Fatal(err)
		}
		n += len(ps)
	}
	return n
}

// importFor stores an imported run of variant for pitch id: it measures
// the pitch, locking its claim and variant.
func (a *app) importFor(id int64, variant string) {
	a.t.Helper()
	req := &runner.ImportRequest{Device: "H100", Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: variant,
		Baseline: "baseline", PitchID: id, Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: 373, VariantUs: 300}}}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		a.t.Fatalf("import document: %v", err)
	}
	run, res, err := req.ImportResult(a.users["admin"].ID)
	if err != nil {
		a.t.Fatalf("import result: %v", err)
	}
	if _, err := a.db.Import(context.Background(), run, res); err != nil {
		a.t.Fatalf("store import: %v", err)
	}
}
