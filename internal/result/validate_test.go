package result

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// jsonFields lists every JSON field name reachable from t.
func jsonFields(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" || seen[t] {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name := jsonName(f); name != "" {
			out[name] = true
			jsonFields(f.Type, seen, out)
		}
	}
}

// TestDocsDescribeEveryField keeps docs/bench-result.md and the Go types in
// step: every JSON field must appear in the document as `name`.
func TestDocsDescribeEveryField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/bench-result.md")
	if err != nil {
		t.Fatalf("read the schema documentation: %v", err)
	}
	fields := map[string]bool{}
	jsonFields(reflect.TypeOf(Result{}), map[reflect.Type]bool{}, fields)
	var missing []string
	for f := range fields {
		if !strings.Contains(string(doc), "`"+f+"`") {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("docs/bench-result.md does not describe: %v", missing)
	}
	if !strings.Contains(string(doc), "schema_version") || !strings.Contains(string(doc), "Exit codes") {
		t.Fatalf("docs/bench-result.md lacks the schema version or the exit codes")
	}
}

// fixtureV2 is a real `web bench --device cpu --aa` document (schema
// version 2), kept by the runner's tests; fixtureV1 is one from before the
// timing guard.
const (
	fixtureV2 = "../runner/testdata/cpu-tests-aa-v2.json"
	fixtureV1 = "../runner/testdata/cpu-tests-aa.json"
)

func validDoc(t *testing.T) map[string]any {
	t.Helper()
	doc, err := os.ReadFile(fixtureV2)
	if err != nil {
		t.Fatalf("read the fixture: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidateAcceptsVersion1(t *testing.T) {
	doc, err := os.ReadFile(fixtureV1)
	if err != nil {
		t.Fatalf("read the fixture: %v", err)
	}
	r, err := ParseResult(doc)
	if err != nil {
		t.Fatalf("a version 1 document does not validate: %v", err)
	}
	if r.SchemaVersion != 1 {
		t.Fatalf("fixture has schema_version %d, want 1", r.SchemaVersion)
	}
}

func TestValidateRefusesBrokenDocuments(t *testing.T) {
	shape0 := func(m map[string]any) map[string]any { return m["shapes"].([]any)[0].(map[string]any) }
	cases := map[string]func(m map[string]any){
		"unknown field":    func(m map[string]any) { m["speedup_claimed"] = 3.0 },
		"missing field":    func(m map[string]any) { delete(m, "fingerprint") },
		"missing nested":   func(m map[string]any) { delete(shape0(m), "floor_ns") },
		"null not allowed": func(m map[string]any) { m["problem"] = nil },
		"wrong version":    func(m map[string]any) { m["schema_version"] = 4 },
		"bad status":       func(m map[string]any) { m["status"] = "great" },
		"exit code":        func(m map[string]any) { m["exit_code"] = 1 },
		"negative sample":  func(m map[string]any) { shape0(m)["variant_timing"].(map[string]any)["samples_ns"].([]any)[0] = -5.0 },
		"interval order":   func(m map[string]any) { shape0(m)["pairing"].(map[string]any)["speedup"].(map[string]any)["lo"] = 5.0 },
		"order entry":      func(m map[string]any) { shape0(m)["pairing"].(map[string]any)["order"].([]any)[0] = "AA" },
		"fingerprint":      func(m map[string]any) { m["fingerprint"].(map[string]any)["key"] = "0000" },
		"summary count":    func(m map[string]any) { m["summary"].(map[string]any)["correct"] = 0.0 },
		"fast_p range": func(m map[string]any) {
			m["summary"].(map[string]any)["fast_p"].([]any)[0].(map[string]any)["value"] = 1.5
		},
		"pass with nan": func(m map[string]any) { shape0(m)["checks"].([]any)[0].(map[string]any)["nans"] = 3.0 },
		"not an object": func(m map[string]any) { m["device"] = "H100" },
		"stats count": func(m map[string]any) {
			shape0(m)["variant_timing"].(map[string]any)["stats"].(map[string]any)["n"] = 1.0
		},
		"cache mode":        func(m map[string]any) { m["protocol"].(map[string]any)["cache_mode"] = "lukewarm" },
		"timed and skipped": func(m map[string]any) { shape0(m)["skipped"] = "because" },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			m := validDoc(t)
			mod(m)
			doc, _ := json.Marshal(m)
			if err := Validate(doc); err == nil {
				t.Fatalf("Validate accepted a document with %s", name)
			}
		})
	}
	if err := Validate([]byte("{")); err == nil {
		t.Fatal("Validate accepted broken JSON")
	}
	doc, _ := json.Marshal(validDoc(t))
	if err := Validate(doc); err != nil {
		t.Fatalf("the unmodified document does not validate: %v", err)
	}
}

// asVersion3 turns the version 2 fixture into the version 3 document the
// same run writes now: every launch plan names its module, "" on the CPU.
func asVersion3(m map[string]any) map[string]any {
	m["schema_version"] = 3.0
	for _, sh := range m["shapes"].([]any) {
		for _, pl := range sh.(map[string]any)["launch"].([]any) {
			pl.(map[string]any)["module"], pl.(map[string]any)["cubin_key"] = "", ""
		}
	}
	return m
}

func TestValidateVersion3Modules(t *testing.T) {
	plan0 := func(m map[string]any) map[string]any {
		return m["shapes"].([]any)[0].(map[string]any)["launch"].([]any)[0].(map[string]any)
	}
	doc, _ := json.Marshal(asVersion3(validDoc(t)))
	if err := Validate(doc); err != nil {
		t.Fatalf("a version 3 document does not validate: %v", err)
	}
	for name, mod := range map[string]func(m map[string]any){
		"missing module":    func(m map[string]any) { delete(plan0(m), "module") },
		"missing cubin_key": func(m map[string]any) { delete(plan0(m), "cubin_key") },
		"a module on a CPU": func(m map[string]any) { plan0(m)["module"], plan0(m)["cubin_key"] = "reference", "ab12" },
	} {
		m := asVersion3(validDoc(t))
		mod(m)
		doc, _ := json.Marshal(m)
		if err := Validate(doc); err == nil {
			t.Errorf("Validate accepted a version 3 document with %s", name)
		}
	}
}

// TestModuleProblem: on a GPU a plan that ran its build's own variant must
// name the build's module; a candidate of an auto variant has its own key;
// a key needs a module.
func TestModuleProblem(t *testing.T) {
	r := &Result{Mode: "gpu", Variant: Build{Name: "wgmma?tile_n=auto", CubinKey: "k-first"}, Baseline: &Build{Name: "baseline", CubinKey: "k-base"}}
	for _, c := range []struct {
		pl   LaunchPlan
		want string // a fragment of the problem; "" for none
	}{
		{LaunchPlan{Role: RoleBaseline, Module: "baseline", CubinKey: "k-base"}, ""},
		{LaunchPlan{Role: RoleBaseline, Module: "baseline", CubinKey: "k-other"}, "its build"},
		{LaunchPlan{Role: RoleVariant, Module: "wgmma?tile_n=64", CubinKey: "k-second"}, ""},
		{LaunchPlan{Role: RoleVariant, Module: "wgmma?tile_n=auto", CubinKey: "k-first"}, ""},
		{LaunchPlan{Role: RoleVariant, Module: "", CubinKey: ""}, ""},
		{LaunchPlan{Role: RoleVariant, Module: "", CubinKey: "k-first"}, "without a module"},
	} {
		got := r.moduleProblem(c.pl)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("moduleProblem(%+v) = %q, want %q", c.pl, got, c.want)
		}
	}
}
