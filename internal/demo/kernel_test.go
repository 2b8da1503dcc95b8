package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/kernels"
)

// The embedded copy is examples/kernels/clear, byte for byte.
func TestDemoKernelIsTheExample(t *testing.T) {
	files, err := clearFiles()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("../../examples/kernels/clear")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Fatalf("examples/kernels/clear has %d files, the demo's copy %d", len(entries), len(files))
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join("../../examples/kernels/clear", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[e.Name()], want) {
			t.Errorf("internal/demo/kernels/clear/%s differs from examples/kernels/clear: copy it again", e.Name())
		}
	}
}

func loadDemo(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := Load(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// Round 6 carries the team's submitted kernel: the pitch names it, the
// store holds the example's bytes as version 1, and its measurement is
// imported when kernel_clear.json holds one (else: no run, no figure).
func TestDemoSubmittedKernel(t *testing.T) {
	ctx := context.Background()
	db := loadDemo(t)
	files, _ := clearFiles()
	sub, err := kernels.SubmissionFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := db.Pitches(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	var p *pitches.Pitch
	for i := range ps {
		if ps[i].Variant == "kernel:"+sub.Hash() {
			p = &ps[i]
		}
	}
	if p == nil {
		t.Fatalf("no round-6 pitch names kernel:%s", sub.Hash())
	}
	vs, err := db.KernelVersions(ctx, p.ID)
	if err != nil || len(vs) != 1 || vs[0].Hash != sub.Hash() || vs[0].Report.Status != "not compiled" {
		t.Fatalf("versions: %+v %v", vs, err)
	}
	k, err := db.StoredKernel(ctx, sub.Hash())
	if err != nil || !bytes.Equal(k.File("clear_gemm.cu").Data, files["clear_gemm.cu"]) {
		t.Fatalf("stored kernel: %v", err)
	}
	runs, err := db.List(ctx, runner.Filter{PitchID: p.ID})
	m, _ := parseKernelMeasurement(kernelClearJSON)
	if measured := len(m.Shapes) > 0 || len(m.Document) > 0; err != nil || len(runs) != map[bool]int{true: 1}[measured] {
		t.Fatalf("runs of the kernel pitch: %d (%v); kernel_clear.json measured: %v", len(runs), err, measured)
	}
	for _, r := range runs {
		if !r.Imported || r.Variant != p.Variant {
			t.Errorf("run %+v: want imported, variant %s", r, p.Variant)
		}
	}
}

// The import path, with a made-up measurement (this test's only): the run
// is imported, records the pitch's kernel:<hash> and becomes its result.
func TestDemoKernelImport(t *testing.T) {
	ctx := context.Background()
	db := loadDemo(t)
	files, _ := clearFiles()
	sub, _ := kernels.SubmissionFromFiles(files)
	ps, _ := db.Pitches(ctx, 6)
	var p *pitches.Pitch
	for i := range ps {
		if strings.HasPrefix(ps[i].Variant, "kernel:") {
			p = &ps[i]
		}
	}
	if p == nil {
		t.Fatal("no kernel pitch")
	}
	users, _ := db.Users(ctx)
	l := &loader{ctx: ctx, svc: db, users: map[string]*pitches.User{}}
	for i := range users {
		l.users[users[i].Login] = &users[i]
	}
	synthetic := []byte(`{"device": "test device", "note": "synthetic, for this test", "shapes": [
		{"label": "s0", "baseline_us": 100, "variant_us": 400, "correct": true},
		{"label": "s1", "baseline_us": 50, "variant_us": 200, "correct": true}]}`)
	if err := l.importClearKernel(p, synthetic); err != nil {
		t.Fatal(err)
	}
	runs, err := db.List(ctx, runner.Filter{PitchID: p.ID})
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	r := runs[0]
	if !r.Imported || r.Variant != "kernel:"+sub.Hash() || r.Speedup.Value != 0.25 || r.Note != "synthetic, for this test" {
		t.Errorf("imported run %+v", r)
	}
	if err := l.importClearKernel(p, []byte(`{"shapes": [], "colour": 1}`)); err == nil {
		t.Errorf("an unknown field in kernel_clear.json is accepted")
	}
}

// Every demo pitch passes what filing it through the server would check: a
// variant whose name is a kernel of its round's problem resolves there with
// its knobs, in the catalogue's spelling (a name that is no kernel is a free
// label, as for imports). The demo files through the store, which has no
// catalogue; "baseline?warp_roles=producer_consumer" (a value the family
// declares but does not build) was filed that way in rounds 1 and 2.
func TestDemoPitchVariantsAreValid(t *testing.T) {
	db := loadDemo(t)
	ctx := context.Background()
	rounds, err := db.Rounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cat runner.KernelsCatalog
	checked := 0
	for _, r := range rounds {
		m := runner.MeasurementOf(&r)
		if !m.Declared() {
			continue
		}
		ps, err := db.Pitches(ctx, r.Number)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			spec := strings.TrimSpace(p.Variant)
			name, _, _ := strings.Cut(spec, "?")
			if spec == "" || strings.HasPrefix(spec, "kernel:") {
				continue
			}
			if _, err := cat.CheckVariant(m.Problem, name); err != nil {
				continue // a free label
			}
			checked++
			canon, err := cat.CanonicalVariant(m.Problem, spec)
			if err != nil {
				t.Errorf("round %d pitch %d %q: variant %q: %v", r.Number, p.ID, p.Title, spec, err)
			} else if canon != spec {
				t.Errorf("round %d pitch %d %q: variant %q is stored as typed, the catalogue spells it %q", r.Number, p.ID, p.Title, spec, canon)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no demo pitch names a kernel of its round's problem: nothing was checked")
	}
}
