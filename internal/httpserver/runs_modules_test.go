package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/pitchtank/pitchtank/templates"
)

// An auto variant's document (schema 3) names per shape the module that
// ran; the run page lists them with their cubin and resources, and says
// nothing for a variant of one module or an older document.
func TestRunPageModules(t *testing.T) {
	plan := func(role, module, key string) map[string]any {
		return map[string]any{"role": role, "module": module, "cubin_key": key,
			"launches": []any{map[string]any{"kernel": "wg_dual_gemm", "shared_bytes": 1000 * len(module)}}}
	}
	doc := func(variant string, modules ...string) []byte {
		var shapes []any
		for i, m := range modules {
			shapes = append(shapes, map[string]any{"index": i, "launch": []any{plan("variant", m, "c9a039df0123456789-"+m), plan("baseline", "baseline", "b")}})
		}
		d, _ := json.Marshal(map[string]any{"schema_version": 3, "variant": map[string]any{"name": variant, "kernels": []any{
			map[string]any{"name": "wgmma?tile_m=256 wg_dual_gemm", "registers": 168, "shared_static_bytes": 16, "local_bytes": 0},
			map[string]any{"name": "wgmma?tile_n=64 wg_dual_gemm", "registers": 168, "local_bytes": 40},
		}}, "shapes": shapes})
		return d
	}
	// The run page decodes a document once (runPageDoc) and lists from that.
	ran := func(doc []byte) []templates.ModuleRow {
		var d runPageDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		return modulesRan(&d)
	}
	rows := ran(doc("wgmma?tile_m=auto", "wgmma?tile_n=64", "wgmma?tile_m=256", "wgmma?tile_n=64"))
	want := []templates.ModuleRow{
		{Shapes: "0, 2", Module: "wgmma?tile_n=64", Cubin: "c9a039df0123", Resources: "wg_dual_gemm 168 registers, 15000 B shared, 40 B local"},
		{Shapes: "1", Module: "wgmma?tile_m=256", Cubin: "c9a039df0123", Resources: "wg_dual_gemm 168 registers, 16016 B shared, 0 B local"},
	}
	if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
		t.Fatalf("modulesRan = %+v, want %+v", rows, want)
	}
	if rows := ran(doc("baseline", "baseline", "baseline")); rows != nil {
		t.Errorf("a variant of one module: %+v", rows)
	}
	if rows := ran([]byte(`{"schema_version": 2, "shapes": [{"index": 0, "launch": [{"role": "variant"}]}]}`)); rows != nil {
		t.Errorf("a version 2 document: %+v", rows)
	}

	var page bytes.Buffer
	v := templates.RunView{HasResult: true, Fingerprint: []templates.KV{{K: "Device", V: "NVIDIA H200"}}, Modules: rows}
	if err := templates.RunPage(templates.Chrome{Title: "Run"}, v).Render(context.Background(), &page); err != nil {
		t.Fatal(err)
	}
	wantContains(t, page.String(), "Modules the variant ran", "<td>0, 2</td>", "<code>wgmma?tile_m=256</code>", "wg_dual_gemm 168 registers, 15000 B shared, 40 B local")
	page.Reset()
	v.Modules = nil
	if err := templates.RunPage(templates.Chrome{Title: "Run"}, v).Render(context.Background(), &page); err != nil {
		t.Fatal(err)
	}
	wantNotContains(t, page.String(), "Modules the variant ran")
}
