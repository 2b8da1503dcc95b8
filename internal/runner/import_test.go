package runner_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The seeds' worked example (scoring.md): round 1's Pipeline Stages on the
// B200, imported, scored against its claim [1.5, 1.8].
func TestImportRound1PipelineStages(t *testing.T) {
	f, err := os.Open("testdata/round1-pipeline-stages.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	req, err := runner.DecodeImport(f)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, runner.Config{})
	run, err := r.Import(context.Background(), req, 0)
	if err != nil {
		t.Fatal(err)
	}
	run, err = r.Get(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Imported || run.Status != runner.StatusSucceeded || run.Device != "B200" || run.Variant != "pipeline_stages" || len(run.Shapes) != 4 {
		t.Fatalf("imported run = %+v", run)
	}
	if !near(run.Speedup.Value, 0.7355, 5e-5) || run.Speedup.HasInterval() {
		t.Fatalf("geomean = %+v; want 0.7355 and no interval (no samples)", run.Speedup)
	}
	for i, want := range []float64{0.764, 0.805, 0.695, 0.684} {
		if !near(run.Shapes[i].Speedup.Value, want, 5e-4) {
			t.Errorf("shape %d speedup %.4f, want %.3f", i, run.Shapes[i].Speedup.Value, want)
		}
	}

	sc, err := runner.ScorePrediction(1.5, 1.8, run.Speedup.Value)
	if err != nil {
		t.Fatal(err)
	}
	if !near(sc.IntervalScore, 7.31, 0.005) || !near(sc.AbsLogError, 0.804, 0.0005) || sc.Hit || !(sc.SignedLogErr > 0) {
		t.Fatalf("score = %+v; want interval score 7.31, abs log error 0.804, a miss, optimistic", sc)
	}
	if sc.Sentence != "predicted 1.5-1.8x, measured 0.74x: 26% slower" {
		t.Fatalf("sentence %q", sc.Sentence)
	}

	// The round-1 deal terms against this run: none is met.
	minG, maxReg := 1.4, 0.10
	terms := runner.EvaluateTerms(runner.Terms{MinGeomean: &minG, MaxRegression: &maxReg, Correct: true}, run, nil)
	if len(terms) != 3 {
		t.Fatalf("terms = %+v", terms)
	}
	for _, tr := range terms {
		if tr.Met {
			t.Errorf("term %s met: %s", tr.Term, tr.Text)
		}
	}
	if terms[0].Text != "geomean 0.74x, needs >= 1.4x: not met" {
		t.Errorf("min geomean text %q", terms[0].Text)
	}
	// Worst shape: 156 -> 228 us is 46.2% slower, as the seeds' table says (-46%).
	if !near(terms[1].Value, 228.0/156-1, 1e-9) || !strings.Contains(terms[1].Text, "g=2 N=4096 K=1536 is 46.2% slower") {
		t.Errorf("max regression = %+v", terms[1])
	}
	if !strings.Contains(terms[2].Text, "0 of 4 shapes correct") {
		t.Errorf("correctness term %+v", terms[2])
	}
}

func TestImportWithSamples(t *testing.T) {
	doc := `{"device":"H100 (lab)","problem":"nvfp4_group_gemm","variant":"baseline?stages=2","baseline":"baseline","shapes":[
		{"baseline_us":100,"variant_us":80,"baseline_samples_us":[99,100,101,100,102,98,100,101],"variant_samples_us":[79,80,81,80,80,82,78,80],"correct":true},
		{"label":"second","baseline_us":50,"variant_us":50,"baseline_samples_us":[49,50,51,50],"variant_samples_us":[50,49,51,50],"correct":true}]}`
	req, err := runner.DecodeImport(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		t.Fatal(err)
	}
	run, res, err := req.ImportResult(7)
	if err != nil {
		t.Fatal(err)
	}
	if run.RequestedBy != 7 || run.Suite != "benchmarks" || !res.Correct {
		t.Fatalf("run %+v result correct %v", run, res.Correct)
	}
	want := math.Sqrt(1.25 * 1)
	if !near(res.Speedup.Value, want, 1e-12) {
		t.Fatalf("geomean %v, want %v", res.Speedup.Value, want)
	}
	for i, s := range res.Shapes {
		if !(s.Speedup.Lo <= s.Speedup.Value && s.Speedup.Value <= s.Speedup.Hi && s.Speedup.Lo < s.Speedup.Hi) {
			t.Errorf("shape %d interval %+v does not bracket its point", i, s.Speedup)
		}
		if s.VariantSamples == 0 || !(s.VariantSEMUs > 0) {
			t.Errorf("shape %d samples %d sem %v", i, s.VariantSamples, s.VariantSEMUs)
		}
	}
	if res.Shapes[1].Label != "second" || res.Shapes[0].Label != "shape 1" {
		t.Errorf("labels %q %q", res.Shapes[0].Label, res.Shapes[1].Label)
	}
	if !(res.Speedup.Lo < want && want < res.Speedup.Hi) {
		t.Errorf("geomean interval %+v", res.Speedup)
	}
	// Reproducible: the bootstrap has a fixed seed.
	_, again, _ := req.ImportResult(7)
	if again.Speedup != res.Speedup {
		t.Errorf("a second import gave %+v, first %+v", again.Speedup, res.Speedup)
	}
}

func TestImportBadDocuments(t *testing.T) {
	r := newRunner(t, runner.Config{})
	ok := `"device":"B200","problem":"nvfp4_group_gemm","variant":"v","baseline":"b"`
	cases := []struct {
		name, doc, field string
	}{
		{"not JSON", `{"device":`, "document"},
		{"empty", ``, "document"},
		{"trailing data", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1}]} {}`, "document"},
		{"unknown field", `{` + ok + `,"gpu":"B200","shapes":[{"baseline_us":1,"variant_us":1}]}`, "gpu"},
		{"wrong type", `{` + ok + `,"shapes":[{"baseline_us":"373","variant_us":1}]}`, "shapes[0].baseline_us"},
		{"wrong type in a later shape", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1},{"baseline_us":1,"variant_us":"5"}]}`, "shapes[1].variant_us"},
		{"null time", `{` + ok + `,"shapes":[{"baseline_us":null,"variant_us":1}]}`, "shapes[0].baseline_us"},
		{"missing time", `{` + ok + `,"shapes":[{"baseline_us":1}]}`, "shapes[0].variant_us"},
		{"null sample", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1,"baseline_samples_us":[1,2],"variant_samples_us":[null,2]}]}`, "shapes[0].variant_samples_us[0]"},
		{"wrong type at the top", `{` + ok + `,"pitch_id":"3","shapes":[{"baseline_us":1,"variant_us":1}]}`, "pitch_id"},
		{"no device", `{"problem":"nvfp4_group_gemm","variant":"v","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "device"},
		{"unknown problem", `{"device":"B200","problem":"fp8_gemm","variant":"v","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "problem"},
		{"no variant", `{"device":"B200","problem":"nvfp4_group_gemm","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "variant"},
		{"no shapes", `{` + ok + `,"shapes":[]}`, "shapes"},
		{"zero time", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1},{"baseline_us":1,"variant_us":0}]}`, "shapes[1].variant_us"},
		{"negative time", `{` + ok + `,"shapes":[{"baseline_us":-5,"variant_us":1}]}`, "shapes[0].baseline_us"},
		{"samples on one side", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1,"baseline_samples_us":[1,2]}]}`, "shapes[0].variant_samples_us"},
		{"bad sample", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1,"baseline_samples_us":[1,2],"variant_samples_us":[1,0]}]}`, "shapes[0].variant_samples_us[1]"},
		{"bad suite", `{` + ok + `,"suite":"all","shapes":[{"baseline_us":1,"variant_us":1}]}`, "suite"},
		{"no such pitch", `{` + ok + `,"pitch_id":12,"shapes":[{"baseline_us":1,"variant_us":1}]}`, "pitch_id"},
		{"variant too long", `{"device":"B200","problem":"nvfp4_group_gemm","variant":"` + strings.Repeat("v", pitches.MaxVariantChars+1) + `","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "variant"},
		{"baseline too long", `{"device":"B200","problem":"nvfp4_group_gemm","variant":"v","baseline":"` + strings.Repeat("b", pitches.MaxVariantChars+1) + `","shapes":[{"baseline_us":1,"variant_us":1}]}`, "baseline"},
		{"invalid UTF-8 in the variant", `{"device":"B200","problem":"nvfp4_group_gemm","variant":"v` + "\xff" + `v","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "variant"},
		{"invalid UTF-8 in a shape", `{` + ok + `,"shapes":[{"baseline_us":1,"variant_us":1},{"label":"s` + "\xc3" + `","baseline_us":1,"variant_us":1}]}`, "shapes[1].label"},
		{"invalid UTF-8 in a key", `{"dev` + "\xff" + `ice":"B200"}`, "document"},
		{"invalid UTF-8 in a full document", `{"schema_version":1,"device":"B` + "\xff" + `200"}`, "device"},
		{"device too long", `{"device":"` + strings.Repeat("d", 65) + `","problem":"nvfp4_group_gemm","variant":"v","baseline":"b","shapes":[{"baseline_us":1,"variant_us":1}]}`, "device"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := runner.DecodeImport(strings.NewReader(tc.doc))
			if err == nil {
				_, err = r.Import(context.Background(), req, 0)
			}
			if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != tc.field {
				t.Fatalf("err = %v (code %s, field %q); want EINVALID on %q", err, pitches.ErrorCode(err), pitches.ErrorField(err), tc.field)
			}
		})
	}
	runs, err := r.List(context.Background(), runner.Filter{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("bad imports stored %d runs (%v)", len(runs), err)
	}
}

func TestComparable(t *testing.T) {
	doc, err := os.ReadFile(fixtureAA)
	if err != nil {
		t.Fatal(err)
	}
	a := &runner.Run{ID: 1, HasResult: true, Result: doc}
	b := &runner.Run{ID: 2, HasResult: true, Result: doc}
	if ok, why := runner.Comparable(a, b); !ok {
		t.Fatalf("same fingerprint not comparable: %s", why)
	}
	other := strings.Replace(string(doc), `"device_model": "`, `"device_model": "NVIDIA H200 `, 1)
	b.Result = []byte(other)
	if ok, why := runner.Comparable(a, b); ok || !strings.Contains(why, "device model differs") {
		t.Fatalf("different device model: %v %q", ok, why)
	}
	imp := &runner.Run{ID: 3, HasResult: true, Imported: true, Device: "B200"}
	if ok, _ := runner.Comparable(a, imp); ok {
		t.Fatal("a run measured here is comparable with an imported one")
	}
	if ok, _ := runner.Comparable(imp, &runner.Run{ID: 4, HasResult: true, Imported: true, Device: "B200"}); !ok {
		t.Fatal("two B200 imports are not comparable")
	}
	// Two imported bench documents under one label carry their
	// fingerprints: another driver is another measurement, as it is for
	// runs measured here.
	h200 := h200Doc(t, nil)
	newer := h200Doc(t, func(d map[string]any) {
		obj(d, "fingerprint")["driver_version"] = "560.35.03"
		obj(d, "fingerprint")["key"] = "0123456789abcdef"
	})
	x := &runner.Run{ID: 5, HasResult: true, Imported: true, Device: "H200", Result: h200}
	y := &runner.Run{ID: 6, HasResult: true, Imported: true, Device: "H200", Result: newer}
	if ok, why := runner.Comparable(x, y); ok || !strings.Contains(why, "driver version differs") {
		t.Fatalf("imports of two drivers under one label: %v %q", ok, why)
	}
	y.Result = h200
	if ok, why := runner.Comparable(x, y); !ok {
		t.Fatalf("two imports of one fingerprint: not comparable: %s", why)
	}
	// Against a hand-written import of the same label, only the label
	// can be compared.
	if ok, why := runner.Comparable(x, &runner.Run{ID: 7, HasResult: true, Imported: true, Device: "H200"}); !ok {
		t.Fatalf("a document import and a hand-written one: %s", why)
	}
}

// h200Doc is a real `web bench` document (H200, 2026-11-29: one group GEMM
// shape, 500 paired rounds), its suite set to benchmarks (it was measured
// on a shapes file, which an import does not take), edited by edit.
func h200Doc(t *testing.T, edit func(d map[string]any)) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/h200-group-g2.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d["suite"] = "benchmarks"
	if edit != nil {
		edit(d)
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// obj walks a decoded document: obj(d, "shapes", 0, "pairing").
func obj(v any, path ...any) map[string]any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

func importDoc(r *runner.Runner, doc []byte) (*runner.Run, error) {
	req, err := runner.DecodeImport(strings.NewReader(string(doc)))
	if err != nil {
		return nil, err
	}
	return r.Import(context.Background(), req, 0)
}

// A CPU-mode document times the CPU reference against itself: it is no
// kernel measured on a GPU, even with its device renamed to one.
func TestImportRefusesCPUDocument(t *testing.T) {
	r := newRunner(t, runner.Config{})
	cpu, err := os.ReadFile(fixtureAA)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(cpu, &d); err != nil {
		t.Fatal(err)
	}
	fp := obj(d, "fingerprint")
	fp["device_model"], fp["driver_version"], fp["nvrtc_version"] = "NVIDIA H100 80GB HBM3", "550.54.15", "12.4"
	key := sha256.Sum256([]byte("NVIDIA H100 80GB HBM3\x00550.54.15\x0012.4"))
	fp["key"] = hex.EncodeToString(key[:])[:16]
	obj(d, "device")["name"] = "NVIDIA H100 80GB HBM3"
	renamed, _ := json.Marshal(d)
	for name, doc := range map[string][]byte{"as measured": cpu, "device renamed": renamed} {
		_, err := importDoc(r, doc)
		if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != "document" || !strings.Contains(err.Error(), "CPU reference") {
			t.Errorf("%s: err = %v; want EINVALID on document saying it times the CPU reference", name, err)
		}
	}
	if runs, _ := r.List(context.Background(), runner.Filter{}); len(runs) != 0 {
		t.Fatalf("CPU documents stored %d runs", len(runs))
	}
}

// A document's figures must agree with themselves: each role's median with
// its samples, each shape's speedup with its paired rounds and (within 5%)
// with the ratio of the medians, the summary with the shapes. A hand-edited
// speedup is refused naming the field and the shape.
func TestImportDocumentFiguresAgree(t *testing.T) {
	r := newRunner(t, runner.Config{})
	run, err := importDoc(r, h200Doc(t, nil))
	if err != nil {
		t.Fatalf("the real H200 document is refused: %v", err)
	}
	if run.Status != runner.StatusSucceeded || run.DeviceName != "NVIDIA H200" || !near(run.Speedup.Value, 0.93892, 1e-5) {
		t.Fatalf("imported %+v", run)
	}
	scale := func(m map[string]any, key string, f float64) { m[key] = m[key].(float64) * f }
	setSpeedup := func(d map[string]any, x float64) { // every copy of the speedup, as forge.py did
		sp := obj(d, "shapes", 0, "pairing", "speedup")
		f := x / sp["point"].(float64)
		scale(sp, "point", f)
		scale(sp, "lo", f)
		scale(sp, "hi", f)
		obj(d, "summary")["geomean_speedup"] = x
		obj(d, "summary")["shape_speedups"] = []any{x}
	}
	cases := []struct {
		name, field, says string
		edit              func(d map[string]any)
	}{
		{"speedup set to 25x", "document.shapes[0].pairing.speedup.point", "ratio of the medians", func(d map[string]any) { setSpeedup(d, 25) }},
		{"speedup nudged 0.5%", "document.shapes[0].pairing.speedup.point", "paired rounds", func(d map[string]any) { setSpeedup(d, 0.93892*1.005) }},
		{"baseline median edited", "document.shapes[0].baseline_timing.stats.median_ns", "median of its 500 samples", func(d map[string]any) {
			scale(obj(d, "shapes", 0, "baseline_timing", "stats"), "median_ns", 1.001)
		}},
		{"variant median edited", "document.shapes[0].variant_timing.stats.median_ns", "median of its 500 samples", func(d map[string]any) {
			scale(obj(d, "shapes", 0, "variant_timing", "stats"), "median_ns", 0.999)
		}},
		{"geomean edited", "document.summary.geomean_speedup", "geometric mean", func(d map[string]any) { scale(obj(d, "summary"), "geomean_speedup", 1.2) }},
		{"shape speedups edited", "document.summary.shape_speedups[0]", "shape 0", func(d map[string]any) { obj(d, "summary")["shape_speedups"] = []any{2.0} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := importDoc(r, h200Doc(t, tc.edit))
			if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v (field %q); want EINVALID on %q saying %q", err, pitches.ErrorField(err), tc.field, tc.says)
			}
		})
	}
	if runs, _ := r.List(context.Background(), runner.Filter{}); len(runs) != 1 {
		t.Fatalf("%d runs stored; the refused documents stored some", len(runs))
	}
}

// A document whose figures agree but are over 10x is suspect, as the same
// times sent bare would be: it counts only once an admin accepts it.
func TestImportDocumentOver10xIsSuspect(t *testing.T) {
	r := newRunner(t, runner.Config{})
	// The variant made 26.6x faster consistently: samples, their stats,
	// the paired speedup and the summary (the status left "ok").
	doc := h200Doc(t, func(d map[string]any) {
		sh := obj(d, "shapes", 0)
		f := 25 / obj(sh, "pairing", "speedup")["point"].(float64)
		vt := obj(sh, "variant_timing")
		xs := vt["samples_ns"].([]any)
		for i := range xs {
			xs[i] = xs[i].(float64) / f
		}
		st := obj(vt, "stats")
		for _, k := range []string{"median_ns", "mean_ns", "min_ns", "max_ns", "stddev_ns", "sem_ns"} {
			st[k] = st[k].(float64) / f
		}
		sp := obj(sh, "pairing", "speedup")
		for _, k := range []string{"point", "lo", "hi"} {
			sp[k] = sp[k].(float64) * f
		}
		sm := obj(d, "summary")
		sm["geomean_speedup"] = sp["point"]
		sm["shape_speedups"] = []any{sp["point"]}
	})
	run, err := importDoc(r, doc)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runner.StatusSuspect || run.Counts() || !strings.Contains(run.Reason, "geomean speedup 25.00x is over 10x") ||
		!strings.Contains(run.Reason, "shape 0 (") || !slices.Contains(run.Flags, "suspect") {
		t.Fatalf("a consistent 25x document is %s (%q, flags %v), want suspect naming the geomean and the shape", run.Status, run.Reason, run.Flags)
	}
}

// importPitch files a pitch in an open round that allows imports.
func importPitch(t *testing.T, db *sqlite.DB) *pitches.Pitch {
	t.Helper()
	return contestantPitch(t, db, "Three stages")
}

// contestantPitch makes an admin, a contestant alice and a pitching round 1,
// and files alice's pitch titled title in it.
func contestantPitch(t *testing.T, db *sqlite.DB, title string) *pitches.Pitch {
	t.Helper()
	ctx := context.Background()
	db.BcryptCost = 4
	admin, err := db.CreateUser(ctx, "admin", "Admin", pitches.RoleAdmin, "admin-password")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := db.CreateUser(ctx, "alice", "Alice", pitches.RoleContestant, "alice-password")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRound(ctx, admin, pitches.RoundInput{Number: 1, Title: "R1",
		Criteria: []pitches.Criterion{{Key: "impact", Name: "Impact", Weight: 100}}}); err != nil {
		t.Fatal(err)
	}
	p, err := db.FilePitch(ctx, alice, pitches.PitchInput{RoundNumber: 1, Title: title, Claim: pitches.Range{Lo: 1, Hi: 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Importing the same measurement onto a pitch again would pool it with
// itself and narrow the pitch's interval: it is refused naming the run
// that has it. Another measurement (other times, variant or device) is not.
func TestImportRefusesRepeatedMeasurement(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	r := newRunner(t, runner.Config{Store: db})
	p := importPitch(t, db)
	bare := func(device, variant string, variantUs float64) []byte {
		return []byte(fmt.Sprintf(`{"device":%q,"problem":"nvfp4_group_gemm","variant":%q,"baseline":"baseline","pitch_id":%d,
			"shapes":[{"label":"a","baseline_us":373,"variant_us":%g,"correct":true},{"label":"b","baseline_us":173,"variant_us":150,"correct":true}]}`,
			device, variant, p.ID, variantUs))
	}
	first, err := importDoc(r, bare("H100", "v", 300))
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, doc []byte, runID int64) {
		t.Helper()
		_, err := importDoc(r, doc)
		if pitches.ErrorCode(err) != pitches.ECONFLICT || !strings.Contains(err.Error(), fmt.Sprintf("run %d", runID)) {
			t.Errorf("%s: err = %v; want ECONFLICT naming run %d", what, err, runID)
		}
	}
	refused("the same bare times again", bare("H100", "v", 300), first.ID)
	knobbed, err := importDoc(r, bare("H100", "v?a=1&b=2", 300))
	if err != nil {
		t.Fatal(err)
	}
	refused("the same times, the knobs reordered", bare("H100", "v?b=2&a=1", 300), knobbed.ID)
	for what, doc := range map[string][]byte{"other times": bare("H100", "v", 301), "another variant": bare("H100", "w", 300),
		"another device": bare("B200", "v", 300)} {
		if _, err := importDoc(r, doc); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// Without a pitch nothing pools: the same times may be stored twice.
	for range 2 {
		if _, err := importDoc(r, []byte(strings.Replace(string(bare("H100", "v", 300)), fmt.Sprintf(`"pitch_id":%d`, p.ID), `"pitch_id":0`, 1))); err != nil {
			t.Fatal(err)
		}
	}

	env := func(doc []byte, note string) []byte {
		return []byte(fmt.Sprintf(`{"pitch_id":%d,"note":%q,"document":%s}`, p.ID, note, doc))
	}
	doc := h200Doc(t, nil)
	if first, err = importDoc(r, env(doc, "")); err != nil {
		t.Fatal(err)
	}
	refused("the same document", env(doc, ""), first.ID)
	refused("the same document with a note", env(doc, "from the lab"), first.ID)
	var pretty bytes.Buffer
	json.Indent(&pretty, doc, "", "  ")
	refused("the same document re-indented", env(pretty.Bytes(), ""), first.ID)
	refused("the same figures with other timestamps", env(h200Doc(t, func(d map[string]any) {
		d["started_at"], d["finished_at"] = "2026-11-30T09:00:00Z", "2026-11-30T09:00:20Z"
	}), ""), first.ID)

	runs, err := r.List(context.Background(), runner.Filter{PitchID: p.ID})
	if err != nil || len(runs) != 6 {
		t.Fatalf("the pitch has %d runs (%v), want 6: the refused imports stored some", len(runs), err)
	}
}
