package runner_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
)

// A run started here stores a built-in kernel's variant in the catalogue's
// spelling (defaults dropped, knobs in the kernel's order), so that one
// kernel is one variant however it was typed; bench is given that spelling,
// which resolves to the same kernel, and a run of the baseline kernel
// against itself is an A/A run (--aa) however it was typed.
func TestSubmitStoresTheCataloguesSpelling(t *testing.T) {
	ctx := context.Background()
	// Not started: the runs stay queued.
	r, err := runner.New(runner.Config{Store: openDB(t, filepath.Join(t.TempDir(), "pitchtank.db")), Catalog: runner.KernelsCatalog{},
		Devices: []string{"0", "cpu"}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := kernels.LookupProblem(groupProblem)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ variant, baseline, want, wantBase string }{
		{"baseline?stages=1", "baseline", "baseline", "baseline"}, // stages=1 is the default
		{"baseline?stages=3&tile_m=64", "", "baseline?tile_m=64&stages=3", ""},
		{"baseline?tile_m=64&stages=3", "", "baseline?tile_m=64&stages=3", ""},
		{" baseline?stages=3&tile_k=256&tile_m=64 ", "baseline", "baseline?tile_m=64&stages=3", "baseline"},
		{"wgmma?tile_n=128&stages=2", "baseline", "wgmma?stages=2", "baseline"},
		// An A/A run: its baseline is its variant, in the same spelling.
		{"baseline?stages=1", "baseline?stages=1", "baseline", "baseline"},
		// The baseline is the round's to match and is kept as given.
		{"baseline?stages=2", "baseline?stages=1", "baseline?stages=2", "baseline?stages=1"},
	} {
		run, err := r.Submit(ctx, runner.Request{Problem: groupProblem, Suite: "benchmarks", Variant: c.variant, Baseline: c.baseline, Device: "0"})
		if err != nil {
			t.Fatalf("submit %q: %v", c.variant, err)
		}
		stored, err := r.Get(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Variant != c.want || stored.Variant != c.want || stored.Baseline != c.wantBase {
			t.Errorf("%q against %q: stored %q against %q, want %q against %q", c.variant, c.baseline, stored.Variant, stored.Baseline, c.want, c.wantBase)
		}
		args := runner.BenchArgs(stored, filepath.Join(t.TempDir(), "result.json"), 0)
		typed, err := p.ResolveVariant(c.variant)
		if err != nil {
			t.Fatal(err)
		}
		given, err := p.ResolveVariant(flagValue(args, "--variant"))
		if err != nil || given.Name != typed.Name || !reflect.DeepEqual(given.Knobs, typed.Knobs) {
			t.Errorf("%q: bench is given --variant %q (%+v, %v), not the kernel typed (%+v)", c.variant, flagValue(args, "--variant"), given.Knobs, err, typed.Knobs)
		}
		// A run of the baseline kernel against it is an A/A run, however
		// the variant was spelled.
		if aa := slices.Contains(args, "--aa"); aa != (c.want == c.wantBase) {
			t.Errorf("%q against %q: --aa %v in %q", c.variant, c.baseline, aa, args)
		}
	}
	// The CPU's reference has one spelling already.
	run, err := r.Submit(ctx, runner.Request{Problem: groupProblem, Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu"})
	if err != nil || run.Variant != "reference" || run.Baseline != "reference" {
		t.Fatalf("the reference: %+v, %v", run, err)
	}
}

// An import whose variant names a built-in kernel of its problem with valid
// knobs is stored in the catalogue's spelling too; a free label (a kernel
// measured elsewhere, in its own words, knobs or not) and a known kernel
// with knobs it does not have keep their spelling. A bench document keeps
// its own variant string: the run's spelling is the only one changed.
func TestImportStoresAKnownKernelsSpelling(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t, runner.Config{})
	for _, c := range []struct{ variant, want string }{
		{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3"},
		{"baseline?stages=1", "baseline"},
		{"cute_dsl?b=2&a=1", "cute_dsl?b=2&a=1"}, // a free label
		{"pipeline_stages", "pipeline_stages"},
		{"B200 fused (v2)", "B200 fused (v2)"},
		{"baseline?stages=99", "baseline?stages=99"}, // not a kernel the catalogue builds
	} {
		req := &runner.ImportRequest{Device: "B200", Problem: groupProblem, Variant: c.variant, Baseline: "baseline",
			Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: 400, VariantUs: 300}}}
		run, err := r.Import(ctx, req, 0)
		if err != nil {
			t.Fatalf("import %q: %v", c.variant, err)
		}
		stored, err := r.Get(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Variant != c.want {
			t.Errorf("import of %q stored as %q, want %q", c.variant, stored.Variant, c.want)
		}
	}

	// A bench document of wgmma with its default tile_n spelled out, and
	// an envelope that repeats the document's spelling: both imported.
	const typed = "wgmma?tile_n=128&stages=2"
	doc := h200Doc(t, func(d map[string]any) { obj(d, "variant")["spec"] = typed })
	for _, body := range [][]byte{doc, mustJSON(t, map[string]any{"variant": typed, "device": "H200 (lab)", "document": json.RawMessage(doc)})} {
		run, err := importDoc(r, body)
		if err != nil {
			t.Fatalf("import the document: %v", err)
		}
		stored, err := r.Get(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Variant struct{ Spec string } `json:"variant"`
		}
		if err := json.Unmarshal(stored.Result, &d); err != nil {
			t.Fatal(err)
		}
		if stored.Variant != "wgmma?stages=2" || d.Variant.Spec != typed {
			t.Errorf("document import: run variant %q (want wgmma?stages=2), its document's %q (want %q)", stored.Variant, d.Variant.Spec, typed)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
