package engine_test

import (
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// TestBestVariantResources logs the compiler's resource report (registers,
// spills, shared memory) of the fastest variants per problem, built by the
// engine for this device, for docs/BENCHMARKS.md. It fails when a build
// fails or ptxas reports no register count.
func TestBestVariantResources(t *testing.T) {
	info := needDevice(t)
	best := map[string][]string{
		"nvfp4_group_gemm": {"fused", "fused?split_k=auto"},
		"nvfp4_dual_gemm":  {"fused"},
	}
	if info.Arch == "sm_90a" {
		best["nvfp4_group_gemm"] = append(best["nvfp4_group_gemm"], "wgmma", "wgmma?tail_width=fit")
	}
	for _, p := range kernels.Problems() {
		var vs []kernels.Variant
		for _, spec := range best[p.Name] {
			vs = append(vs, mustVariant(t, p, spec))
		}
		built := buildAll(t, info, vs)
		for i, b := range built {
			var lines []string
			for _, l := range strings.Split(b.PtxasLog, "\n") {
				if strings.Contains(l, "registers") || strings.Contains(l, "spill") || strings.Contains(l, "C75") {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			if len(lines) == 0 {
				t.Errorf("%s %s: no register count in the ptxas log (options %v)", p.Name, vs[i].Name, b.Options)
			}
			t.Logf("%s %s (%s): %s", p.Name, vs[i].Name, vs[i].SourceFile, strings.Join(lines, " | "))
		}
	}
}
