package result

import (
	"strings"
	"testing"
)

// TestMarkdownNamesModules: an auto variant's report says which module ran
// which shapes, with its key and its kernels' resources; a variant of one
// module adds nothing.
func TestMarkdownNamesModules(t *testing.T) {
	auto := &Result{
		Variant: Build{Name: "wgmma?tile_n=auto", Spec: "wgmma?tile_n=auto", Kernels: []KernelAttrs{
			{Name: "wgmma?tile_n=64 wg_dual_gemm", Registers: 168},
			{Name: "wgmma?tile_n=128 wg_dual_gemm", Registers: 168, LocalBytes: 40},
		}},
	}
	for i, m := range []string{"wgmma?tile_n=64", "wgmma?tile_n=128", "wgmma?tile_n=64"} {
		auto.Shapes = append(auto.Shapes, Shape{Index: i, M: []int{256}, N: 4096, K: 7168, Launch: []LaunchPlan{
			{Role: RoleVariant, Module: m, CubinKey: "c9a039df0123456789" + m,
				Launches: []Launch{{Kernel: "wg_dual_gemm", SharedBytes: uint32(200000 + 1000*len(m) + i)}}},
			{Role: RoleBaseline, Module: "baseline", CubinKey: "b"},
		}})
	}
	md := Markdown(auto)
	for _, want := range []string{
		// Shared: the most any of the module's launches asked for.
		"- shapes 0, 2: `wgmma?tile_n=64` (cubin c9a039df0123); wg_dual_gemm 168 registers, 215002 B shared, 0 B local",
		"- shape 1: `wgmma?tile_n=128` (cubin c9a039df0123); wg_dual_gemm 168 registers, 216001 B shared, 40 B local",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	one := &Result{Variant: Build{Name: "baseline", Spec: "baseline"}, Shapes: []Shape{{Launch: []LaunchPlan{{Role: RoleVariant, Module: "baseline", CubinKey: "k"}}}}}
	if md := Markdown(one); strings.Contains(md, "Modules") {
		t.Errorf("a variant of one module lists its modules:\n%s", md)
	}
}
