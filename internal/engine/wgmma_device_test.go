package engine_test

import (
	"os"
	"slices"
	"strconv"
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
	if isHopper(t, info) {
		best["nvfp4_group_gemm"] = append(best["nvfp4_group_gemm"], "wgmma", "wgmma?decode=prmt", "wgmma?decode=prmt&tokens=once",
			"wgmma?tile_n=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once",
			// What the best group variant resolves to (docs/BENCHMARKS.md section 15).
			"wgmma?tile_n=192&consumers=3&registers=split&decode=prmt&tokens=once&overlap=pdl",
			"wgmma?decode=prmt&tokens=once&overlap=pdl",
			// ... and with tail_width=fit64 (section 16).
			"wgmma?tile_n=192&tail_width=fit64&consumers=3&registers=split&decode=prmt&tokens=once&overlap=pdl",
			"wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&consumers=3&registers=split&decode=prmt&tokens=once&overlap=pdl",
			"wgmma?tail_width=fit64&registers=split&decode=prmt&tokens=once&overlap=pdl",
			// ... and with staging=stmatrix (section 23).
			"wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3",
			"wgmma?tail_width=fit64&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix")
		best["nvfp4_dual_gemm"] = append(best["nvfp4_dual_gemm"], "wgmma", "wgmma?decode=prmt&tokens=once",
			"wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once",
			"wgmma?decode=prmt&tokens=once&overlap=pdl", "wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl",
			// ... and with epilogue=split (section 23).
			"wgmma?decode=prmt&tokens=once&overlap=pdl&epilogue=split",
			"wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split",
			// ... and what tile_m=auto adds: the tall tile, whole and under
			// stream-K, and the narrow stream-K module (section 24).
			"wgmma?tile_m=256&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split",
			"wgmma?tile_m=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split",
			"wgmma?schedule=streamk&decode=prmt&tokens=once&overlap=pdl&epilogue=split")
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

// TestWgmmaFamily: every combination of the wgmma family's declared space
// at the default decode, token pass, tail width, prefetch, epilogue and staging, and a pairwise cover
// of the whole space (each of those with every value of every other knob),
// group and dual GEMM, on
// every test and benchmark shape (the test shapes include M = 1, odd M,
// N = 64, K = 128 and 16 groups), through the engine's own NVRTC build for
// the device's sm_90a. The decodes differ only in wg_dec, one function
// both operands call, so the cover tests the other decode's every use;
// tokens=once changes only the producer and adds its first launch, which
// every tile size, stage count and schedule of the cover meets; so do
// prefetch=next, which changes only where a consumer's weight ring starts,
// prefetch=producer, which changes only who fills it, and the dual GEMM's
// epilogue=split, which changes only who gates and stores a tile, and
// staging=stmatrix, which changes only how the epilogue stages its rows.
func TestWgmmaFamily(t *testing.T) {
	info := needDevice(t)
	if !isHopper(t, info) {
		t.Skipf("the wgmma family is Hopper-only (sm_90a); this device is %s", info.Arch)
	}
	knobSeen := false // PITCHTANK_FAMILY_KNOB's value declared by a problem that ran
	for _, p := range kernels.Problems() {
		// One subtest per problem: -test.run 'TestWgmmaFamily/nvfp4_dual_gemm' checks one.
		t.Run(p.Name, func(t *testing.T) {
			all := familyVariants(t, p, "wgmma")
			if len(all) < 8 {
				t.Fatalf("%s wgmma: only %d combinations declared", p.Name, len(all))
			}
			var vs []kernels.Variant
			picked := map[string]bool{}
			def := mustVariant(t, p, "wgmma").Knobs
			for _, v := range all {
				if v.Knobs.SameValues(def, append([]string{"decode"}, kernels.WgmmaPairwiseKnobs...)...) {
					vs, picked[v.Name] = append(vs, v), true
				}
			}
			for _, v := range pairCover(p.Name, "wgmma", all) {
				if !picked[v.Name] {
					vs, picked[v.Name] = append(vs, v), true
				}
			}
			t.Logf("%s wgmma: %d of %d combinations", p.Name, len(vs), len(all))
			// A device call is capped at ten minutes: a run cut short resumes
			// with PITCHTANK_FAMILY_SKIP set to the combinations it checked
			// (the order above is fixed).
			if n, err := strconv.Atoi(os.Getenv("PITCHTANK_FAMILY_SKIP")); err == nil && n > 0 {
				if n >= len(vs) {
					t.Fatalf("PITCHTANK_FAMILY_SKIP=%d leaves none of the %d combinations to check", n, len(vs))
				}
				t.Logf("skipping the first %d (PITCHTANK_FAMILY_SKIP), checking %d", n, len(vs)-n)
				vs = vs[n:]
			}
			// A new knob value can be checked alone first: PITCHTANK_FAMILY_KNOB=key=value
			// keeps the combinations above that have it.
			if kv := os.Getenv("PITCHTANK_FAMILY_KNOB"); kv != "" {
				key, val, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("PITCHTANK_FAMILY_KNOB=%q: want key=value", kv)
				}
				var only []kernels.Variant
				for _, v := range vs {
					if v.Knobs.Value(key) == val {
						only = append(only, v)
					}
				}
				if len(only) == 0 {
					// A knob value of the other problem only (token_copy is the
					// group's): nothing of this one's to check. One this problem
					// declares but the cover left out is a failure, and one no
					// problem declares (a typo) fails the parent below.
					if !slices.ContainsFunc(all, func(v kernels.Variant) bool { return v.Knobs.Value(key) == val }) {
						t.Skipf("PITCHTANK_FAMILY_KNOB=%s: not in %s's wgmma knobs (none of its %d combinations has it)", kv, p.Name, len(all))
					}
					t.Fatalf("PITCHTANK_FAMILY_KNOB=%s: none of the %d combinations checked has it", kv, len(vs))
				}
				knobSeen = true
				t.Logf("checking the %d with %s (PITCHTANK_FAMILY_KNOB)", len(only), kv)
				vs = only
			}
			shapes := append(append([]kernels.Shape{}, p.Tests...), p.Benchmarks...)
			checkVariants(t, info, p, vs, shapeCases(t, info, p, shapes, 4000))
		})
	}
	if kv := os.Getenv("PITCHTANK_FAMILY_KNOB"); kv != "" && !knobSeen {
		t.Fatalf("PITCHTANK_FAMILY_KNOB=%s: no problem that ran declares it", kv)
	}
}
