package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// committedFiles are the ladder files in the tree: the H100 ladder and the
// rungs measured again on an H200.
var committedFiles = []string{"../../internal/demo/ladder_h100.json", "../../internal/demo/ladder_h200.json"}

// docFor writes a result document (the fields docs/bench-result.md gives
// them) that holds rung r's values, unrounded the way bench writes them:
// medians in ns with float noise, speedups with more digits, started_at to
// the nanosecond.
func docFor(t *testing.T, r rung) []byte {
	t.Helper()
	type speedup struct{ Point, Lo, Hi float64 }
	var shapes []map[string]any
	for i, s := range r.Shapes {
		var m []int
		var n, k int
		var g int
		if _, err := fmt.Sscanf(s.Label, "g=%d N=%d K=%d", &g, &n, &k); err == nil {
			m = make([]int, g)
			for j := range m {
				m[j] = 64 * (j + 1)
			}
		} else if _, err := fmt.Sscanf(s.Label, "M=%d N=%d K=%d", &g, &n, &k); err == nil {
			m = []int{g}
		} else {
			t.Fatalf("label %q", s.Label)
		}
		jitter := func(x pyFloat) float64 { return float64(x) + 3e-6 }
		shapes = append(shapes, map[string]any{
			"index": i, "m": m, "n": n, "k": k,
			"correct": s.Correct, "baseline_correct": true,
			"variant_timing":  map[string]any{"stats": map[string]any{"median_ns": float64(s.VariantUs) * 1000}},
			"baseline_timing": map[string]any{"stats": map[string]any{"median_ns": float64(s.BaselineUs) * 1000}},
			"pairing": map[string]any{
				"speedup": map[string]any{"point": jitter(s.Paired), "lo": jitter(s.PairedLo), "hi": jitter(s.PairedHi), "level": 0.95},
				"verdict": s.Verdict,
			},
		})
	}
	doc := map[string]any{
		"schema_version": 2, "status": "ok", "problem": r.Problem,
		"started_at": strings.TrimSuffix(r.StartedAt, "Z") + ".123456789Z",
		"variant":    map[string]any{"spec": r.Variant}, "baseline": map[string]any{"spec": "baseline"},
		"shapes":  shapes,
		"summary": map[string]any{"geomean_speedup": float64(r.PairedGeomean) - 2e-6},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTarGz(t *testing.T, path, member string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct {
		name string
		data []byte
	}{{"./steps.txt", []byte("e2e rc=0\n")}, {"./" + member, data}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readCommitted(t *testing.T, committed string) ([]byte, ladder) {
	t.Helper()
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	var l ladder
	if err := json.Unmarshal(want, &l); err != nil {
		t.Fatal(err)
	}
	return want, l
}

// The committed file is exactly what the tool writes from result documents
// with its values: each rung's document is rebuilt in a directory of its
// own (plain files, or members of a results.tar.gz as dev/gpucall returns
// them), and the tool's output must equal the file byte for byte.
func TestCommittedLadderIsTheToolsOutput(t *testing.T) {
	for _, committed := range committedFiles {
		t.Run(filepath.Base(committed), func(t *testing.T) { checkCommitted(t, committed) })
	}
}

func checkCommitted(t *testing.T, committed string) {
	want, l := readCommitted(t, committed)
	var specs []string
	for i, r := range l.Rungs {
		if strings.ContainsAny(r.Document, `/\`) {
			t.Errorf("rung %s %s: document %q names a directory (only file names belong in the tree)", r.Problem, r.Variant, r.Document)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := docFor(t, r)
		if archive, member, ok := splitArchive(r.Document); ok {
			writeTarGz(t, filepath.Join(dir, archive), member, doc)
			specs = append(specs, filepath.Join(dir, archive)+":"+member)
		} else {
			if err := os.WriteFile(filepath.Join(dir, r.Document), doc, 0o644); err != nil {
				t.Fatal(err)
			}
			specs = append(specs, filepath.Join(dir, r.Document))
		}
	}
	got, err := build(l.Device, "", specs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the tool's output differs from %s:\n%s", committed, firstDiff(got, want))
	}
	// The same through -merge alone: a regeneration that changes nothing.
	got, err = build("", committed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("-merge of %s changes it:\n%s", committed, firstDiff(got, want))
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// A real `web bench` document (the runner's A/A fixture, CPU, test suite):
// every shape's medians (to the nanosecond: CPU medians may end in .5 ns),
// correctness and pairing come through.
func TestRealBenchDocument(t *testing.T) {
	path := "../../internal/runner/testdata/cpu-tests-aa.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Shapes []struct {
			M             []int
			N, K          int
			VariantTiming struct {
				Stats struct {
					MedianNs float64 `json:"median_ns"`
				}
			} `json:"variant_timing"`
			BaselineTiming struct {
				Stats struct {
					MedianNs float64 `json:"median_ns"`
				}
			} `json:"baseline_timing"`
			Pairing struct {
				Speedup struct{ Point float64 }
				Verdict string
			}
		}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	r, err := rungOf("cpu-tests-aa.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Problem != "nvfp4_group_gemm" || r.Variant != "reference" || r.Document != "cpu-tests-aa.json" || len(r.Shapes) != len(raw.Shapes) || len(r.Shapes) == 0 {
		t.Fatalf("rung %+v", r)
	}
	if !strings.HasSuffix(r.StartedAt, "Z") || strings.Contains(r.StartedAt, ".") {
		t.Errorf("started_at %q: want UTC to the second", r.StartedAt)
	}
	for i, s := range r.Shapes {
		w := raw.Shapes[i]
		if math.Abs(float64(s.VariantUs)-w.VariantTiming.Stats.MedianNs/1e3) > 5e-4+1e-9 || math.Abs(float64(s.BaselineUs)-w.BaselineTiming.Stats.MedianNs/1e3) > 5e-4+1e-9 {
			t.Errorf("shape %d: medians %v/%v us, document %v/%v ns", i, s.VariantUs, s.BaselineUs, w.VariantTiming.Stats.MedianNs, w.BaselineTiming.Stats.MedianNs)
		}
		if math.Abs(float64(s.Paired)-w.Pairing.Speedup.Point) > 5e-5 || s.Verdict != w.Pairing.Verdict || !s.Correct {
			t.Errorf("shape %d: %+v, document point %v verdict %q", i, s, w.Pairing.Speedup.Point, w.Pairing.Verdict)
		}
		if !(s.PairedLo <= s.Paired && s.Paired <= s.PairedHi) {
			t.Errorf("shape %d: interval [%v, %v] around %v", i, s.PairedLo, s.PairedHi, s.Paired)
		}
		wantLabel := fmt.Sprintf("g=%d N=%d K=%d", len(w.M), w.N, w.K)
		if len(w.M) == 1 {
			wantLabel = fmt.Sprintf("M=%d N=%d K=%d", w.M[0], w.N, w.K)
		}
		if s.Label != wantLabel {
			t.Errorf("shape %d: label %q, want %q", i, s.Label, wantLabel)
		}
	}
}

// A document that is not a finished, paired measurement is refused with a
// message naming the document and what is wrong.
func TestRefusals(t *testing.T) {
	_, l := readCommitted(t, committedFiles[0])
	good := docFor(t, l.Rungs[0])
	edit := func(f func(d map[string]any)) []byte {
		var d map[string]any
		if err := json.Unmarshal(good, &d); err != nil {
			t.Fatal(err)
		}
		f(d)
		b, _ := json.Marshal(d)
		return b
	}
	dir := t.TempDir()
	cases := map[string]struct {
		doc  []byte
		want string
	}{
		"incorrect.json":  {edit(func(d map[string]any) { d["status"] = "incorrect" }), `incorrect.json: status "incorrect"`},
		"unpaired.json":   {edit(func(d map[string]any) { d["baseline"] = nil }), "unpaired.json: baseline is null"},
		"untimed.json":    {edit(func(d map[string]any) { d["shapes"].([]any)[2].(map[string]any)["pairing"] = nil }), "untimed.json: shape 2 was not timed"},
		"nogeomean.json":  {edit(func(d map[string]any) { d["summary"] = map[string]any{"geomean_speedup": nil} }), "nogeomean.json: summary.geomean_speedup is null"},
		"badtime.json":    {edit(func(d map[string]any) { d["started_at"] = "yesterday" }), "badtime.json: started_at"},
		"notjson.json":    {[]byte("{"), "notjson.json: parse result document"},
		"novariant.json":  {edit(func(d map[string]any) { delete(d, "variant") }), "novariant.json: no variant"},
		"noshapes.json":   {edit(func(d map[string]any) { d["shapes"] = []any{} }), "noshapes.json: no shapes"},
		"noproblem.json":  {edit(func(d map[string]any) { d["problem"] = "" }), "noproblem.json: no problem"},
		"nomember.tar.gz": {nil, `has no member "g_x.json"`},
	}
	for name, c := range cases {
		path := filepath.Join(dir, name)
		spec := path
		if c.doc == nil {
			writeTarGz(t, path, "g_other.json", good)
			spec = path + ":g_x.json"
		} else if err := os.WriteFile(path, c.doc, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := build("dev", "", []string{spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
	if _, err := build("", "", nil); err == nil || !strings.Contains(err.Error(), "-device is required") {
		t.Errorf("no device: %v", err)
	}
}

// -merge keeps the existing rungs in order; a document of an existing rung
// replaces it in place, a new one is appended, and directories of the
// kept rungs' documents are dropped.
func TestMerge(t *testing.T) {
	_, l := readCommitted(t, committedFiles[0])
	dir := t.TempDir()
	old := l
	old.Rungs = append([]rung(nil), l.Rungs...)
	old.Rungs[0].Document = "/some/machine/dir/" + old.Rungs[0].Document
	oldPath := filepath.Join(dir, "old.json")
	b, _ := json.Marshal(old)
	if err := os.WriteFile(oldPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	again := l.Rungs[1]
	again.Shapes = append([]shape(nil), again.Shapes...)
	again.Shapes[0].VariantUs = 100
	fresh := l.Rungs[2]
	fresh.Variant = "baseline?stages=5"
	for name, r := range map[string]rung{"again.json": again, "fresh.json": fresh} {
		if err := os.WriteFile(filepath.Join(dir, name), docFor(t, r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := build("", oldPath, []string{filepath.Join(dir, "again.json"), filepath.Join(dir, "fresh.json")})
	if err != nil {
		t.Fatal(err)
	}
	var got ladder
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rungs) != len(l.Rungs)+1 || got.Device != l.Device {
		t.Fatalf("%d rungs (want %d), device %q", len(got.Rungs), len(l.Rungs)+1, got.Device)
	}
	if got.Rungs[0].Document != l.Rungs[0].Document {
		t.Errorf("kept rung's document %q, want %q", got.Rungs[0].Document, l.Rungs[0].Document)
	}
	if r := got.Rungs[1]; r.Document != "again.json" || r.Shapes[0].VariantUs != 100 || r.Variant != l.Rungs[1].Variant {
		t.Errorf("replaced rung %+v", r)
	}
	if r := got.Rungs[len(got.Rungs)-1]; r.Variant != "baseline?stages=5" || r.Document != "fresh.json" {
		t.Errorf("appended rung %+v", r)
	}
}

func TestDocumentName(t *testing.T) {
	for in, want := range map[string]string{
		"/any/dir/g_graph.json":                  "g_graph.json",
		"g_graph.json":                           "g_graph.json",
		"/any/dir/results.tar.gz:g_wgmma.json":   "results.tar.gz:g_wgmma.json",
		"results.tar.gz:g_wgmma.json":            "results.tar.gz:g_wgmma.json",
		"out/9/results.tar.gz:sub/g_wgmma.json":  "results.tar.gz:sub/g_wgmma.json",
		"C:/windows/style/results.tar.gz:x.json": "results.tar.gz:x.json",
		"/dir/with.tar.gz.in/it/plain-file.json": "plain-file.json",
	} {
		if got := documentName(in); got != want {
			t.Errorf("documentName(%q) = %q, want %q", in, got, want)
		}
	}
}
