package kernels_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/nvfp4"
	"github.com/pitchtank/pitchtank/kernels"
)

func problem(t *testing.T, name string) *kernels.Problem {
	t.Helper()
	p, err := kernels.LookupProblem(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProblemsLoad(t *testing.T) {
	ps := kernels.Problems()
	if len(ps) != 2 || ps[0].Name != "nvfp4_group_gemm" || ps[1].Name != "nvfp4_dual_gemm" {
		t.Fatalf("problems = %v", ps)
	}
	for _, p := range ps {
		if len(p.Tests) == 0 || len(p.Benchmarks) != 4 {
			t.Errorf("%s: %d tests, %d benchmarks", p.Name, len(p.Tests), len(p.Benchmarks))
		}
		// The tolerances are nvfp4's defaults, whose derivation is there.
		if p.ATol != nvfp4.DefaultATol || p.RTol != nvfp4.DefaultRTol {
			t.Errorf("%s: atol %g rtol %g, nvfp4 defaults are %g and %g", p.Name, p.ATol, p.RTol, nvfp4.DefaultATol, nvfp4.DefaultRTol)
		}
	}
	if _, err := kernels.LookupProblem("nvfp4_gemv"); err == nil || !strings.Contains(err.Error(), "nvfp4_group_gemm") {
		t.Errorf("unknown problem error should list the known ones: %v", err)
	}
}

// The test shapes cover the edge cases the kernels must handle.
func TestTestShapesCoverEdges(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	var m1, oddM, n64, k128, g16 bool
	for _, s := range g.Tests {
		for _, m := range s.M {
			m1 = m1 || m == 1
			oddM = oddM || (m%2 == 1 && m > 1)
		}
		n64 = n64 || s.N == 64
		k128 = k128 || s.K == 128
		g16 = g16 || len(s.M) == 16
		if s.N > 1024 || s.K > 1024 {
			t.Errorf("test shape %v is too big for the CPU reference", s)
		}
	}
	if !m1 || !oddM || !n64 || !k128 || !g16 {
		t.Errorf("group tests miss an edge: M=1 %v, odd M %v, N=64 %v, K=128 %v, 16 groups %v", m1, oddM, n64, k128, g16)
	}
}

func TestBenchmarksMatchTaskYML(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	want := []kernels.Shape{
		{M: []int{80, 176, 128, 72, 64, 248, 96, 160}, N: 4096, K: 7168},
		{M: []int{40, 76, 168, 72, 164, 148, 196, 160}, N: 7168, K: 2048},
		{M: []int{192, 320}, N: 3072, K: 4096},
		{M: []int{128, 384}, N: 4096, K: 1536},
	}
	for i, s := range want {
		if g.Benchmarks[i].String() != s.String() {
			t.Errorf("group benchmark %d = %v, want %v", i, g.Benchmarks[i], s)
		}
	}
	d := problem(t, "nvfp4_dual_gemm")
	for i, mnk := range [][3]int{{256, 4096, 7168}, {512, 4096, 7168}, {256, 3072, 4096}, {512, 3072, 7168}} {
		s := d.Benchmarks[i]
		if len(s.M) != 1 || s.M[0] != mnk[0] || s.N != mnk[1] || s.K != mnk[2] {
			t.Errorf("dual benchmark %d = %v, want %v", i, s, mnk)
		}
	}
}

// The floors of kernels.md: fp16 floor 75.2/37.6/16.1/8.05 us (group) and
// 37.6/75.2/16.1/56.4 us (dual), geomeans 24.6 and 40.0 us; H100 memory
// floors 43.2/24.5/5.5/3.5 us and MB moved 144.6/81.9/18.5/11.7.
func TestFloorsMatchKernelsMD(t *testing.T) {
	h100 := kernels.CeilingsFor("NVIDIA H100 80GB HBM3", 9, 0)
	close := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
	for _, tc := range []struct {
		name    string
		floors  []float64
		geomean float64
		mb      []float64
		mem     []float64
	}{
		{"nvfp4_group_gemm", []float64{75.2, 37.6, 16.1, 8.05}, 24.6, []float64{144.6, 81.9, 18.5, 11.7}, []float64{43.2, 24.5, 5.5, 3.5}},
		{"nvfp4_dual_gemm", []float64{37.6, 75.2, 16.1, 56.4}, 40.0, nil, nil},
	} {
		p := problem(t, tc.name)
		var fs []float64
		for i, s := range p.Benchmarks {
			f, bound := kernels.Floor(p, s, h100)
			us := f * 1e6
			fs = append(fs, us)
			if !close(us, tc.floors[i], 0.05) || bound != "compute" {
				t.Errorf("%s %v: floor %.3f us (%s), want %.2f us compute", tc.name, s, us, bound, tc.floors[i])
			}
			if tc.mb != nil {
				if mb := p.MinBytes(s) / 1e6; !close(mb, tc.mb[i], 0.05) {
					t.Errorf("%s %v: %.2f MB moved, want %.1f", tc.name, s, mb, tc.mb[i])
				}
				if mem := p.MinBytes(s) / h100.MemBytesPerSec * 1e6; !close(mem, tc.mem[i], 0.05) {
					t.Errorf("%s %v: memory floor %.2f us, want %.1f", tc.name, s, mem, tc.mem[i])
				}
			}
		}
		if g := kernels.GeoMean(fs); !close(g, tc.geomean, 0.05) {
			t.Errorf("%s: geomean floor %.3f us, want %.1f", tc.name, g, tc.geomean)
		}
	}
}

func TestCeilings(t *testing.T) {
	if c := kernels.CeilingsFor("NVIDIA H200", 9, 0); c.MemBytesPerSec != 4.8e12 || c.TensorFLOPS != 800e12 {
		t.Errorf("H200: %+v", c)
	}
	if c := kernels.CeilingsFor("NVIDIA B200", 10, 0); c.TensorFLOPS != 2.25e15 {
		t.Errorf("B200: %+v", c)
	}
	c := kernels.CeilingsFor("Mystery GPU", 8, 9)
	if !strings.Contains(c.Source, "fallback") || c.TensorFLOPS <= 0 || c.MemBytesPerSec <= 0 {
		t.Errorf("unknown device: %+v", c)
	}
}

func TestShapeRules(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	d := problem(t, "nvfp4_dual_gemm")
	for _, tc := range []struct {
		p    *kernels.Problem
		s    kernels.Shape
		rule string // "" = valid
	}{
		{g, kernels.Shape{M: []int{1}, N: 64, K: 128}, ""},
		{g, kernels.Shape{M: make([]int, 16), N: 64, K: 128}, "M >= 1"},
		{g, kernels.Shape{M: []int{5}, N: 100, K: 128}, "N must be a multiple of 64"},
		{g, kernels.Shape{M: []int{5}, N: 64, K: 96}, "K must be a multiple of 128"},
		{g, kernels.Shape{M: []int{0}, N: 64, K: 128}, "M >= 1"},
		{g, kernels.Shape{M: nil, N: 64, K: 128}, "1..16 groups"},
		{g, kernels.Shape{M: make([]int, 17), N: 64, K: 128}, "1..16 groups"},
		{g, kernels.Shape{M: []int{5}, N: 0, K: 128}, "N must be a multiple of 64"},
		{g, kernels.Shape{M: []int{5}, N: 64, K: -128}, "K must be a multiple of 128"},
		{d, kernels.Shape{M: []int{5, 6}, N: 64, K: 128}, "exactly 1 group"},
		{d, kernels.Shape{M: []int{5}, N: 64, K: 256}, ""},
	} {
		err := tc.p.CheckShape(tc.s)
		if tc.rule == "" {
			if err != nil {
				t.Errorf("%v: unexpected %v", tc.s, err)
			}
			continue
		}
		var se *kernels.ShapeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.rule) || !strings.HasPrefix(err.Error(), "shape rule: ") {
			t.Errorf("%v: error %v, want a ShapeError naming %q", tc.s, err, tc.rule)
		}
	}
	if err := g.CheckShape(kernels.Shape{M: []int{5}, N: 100, K: 128}); err.Error() != "shape rule: N must be a multiple of 64 (got 100)" {
		t.Errorf("message = %q", err)
	}
}

func TestFLOPsAndBytes(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	d := problem(t, "nvfp4_dual_gemm")
	s := kernels.Shape{M: []int{3, 5}, N: 64, K: 128}
	if f := g.FLOPs(s); f != 2*8*64*128 {
		t.Errorf("group FLOPs %g", f)
	}
	// A: 8 rows, B: 2 x 64 rows, each row 64 + 8 bytes; C: 8 x 64 fp16.
	if b := g.MinBytes(s); b != float64(8*72+128*72+8*64*2) {
		t.Errorf("group bytes %g", b)
	}
	ds := kernels.Shape{M: []int{8}, N: 64, K: 128}
	if f := d.FLOPs(ds); f != 2*2*8*64*128 {
		t.Errorf("dual FLOPs %g", f)
	}
	if b := d.MinBytes(ds); b != float64(8*72+128*72+8*64*2) {
		t.Errorf("dual bytes %g", b)
	}
}

func TestParseShapes(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	ss, err := g.ParseShapes([]byte(`[{"m":[1,2],"n":64,"k":128},{"m":[7],"n":128,"k":256}]`))
	if err != nil || len(ss) != 2 || ss[1].M[0] != 7 {
		t.Fatalf("parse: %v %v", ss, err)
	}
	for _, bad := range []string{`[]`, `{"m":[1]}`, `[{"m":[1],"n":100,"k":128}]`, `[{"m":[1],"n":64,"k":128,"x":1}]`, `nonsense`} {
		if _, err := g.ParseShapes([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestResolveVariant(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v, err := g.ResolveVariant("baseline")
	if err != nil || v.Knobs.TileM != 128 || v.Knobs.TileN != 128 || v.Knobs.TileK != 256 || v.Knobs.Stages != 1 || v.Knobs.Launch != "sequential" || v.Name != "baseline" {
		t.Fatalf("baseline: %+v %v", v, err)
	}
	v, err = g.ResolveVariant("baseline?stages=3&tile_m=64")
	if err != nil || v.Knobs.Stages != 3 || v.Knobs.TileM != 64 {
		t.Fatalf("override: %+v %v", v, err)
	}
	if v.Name != "baseline?tile_m=64&stages=3" {
		t.Errorf("canonical name %q", v.Name)
	}
	if d := v.Defines(); d["STAGES"] != "3" || d["TILE_M"] != "64" || d["DUAL"] != "0" {
		t.Errorf("defines %v", d)
	}
	// A default written out is the same variant.
	if v2, _ := g.ResolveVariant("baseline?stages=1"); v2.Name != "baseline" {
		t.Errorf("explicit default named %q", v2.Name)
	}

	var ke *kernels.KnobError
	_, err = g.ResolveVariant("baseline?pipeline=3")
	if !errors.As(err, &ke) || ke.Knob != "pipeline" || !strings.Contains(err.Error(), "stages") {
		t.Errorf("unknown knob: %v", err)
	}
	_, err = g.ResolveVariant("baseline?stages=7")
	if !errors.As(err, &ke) || ke.Knob != "stages" || !strings.Contains(err.Error(), "1, 2, 3, 4") {
		t.Errorf("out of range: %v", err)
	}
	// Declared but not implemented values are not declared.
	for _, spec := range []string{"baseline?warp_roles=producer_consumer", "baseline?split_k=2", "baseline?swap_ab=maybe", "baseline?epilogue=wgmma"} {
		if _, err := g.ResolveVariant(spec); !errors.As(err, &ke) {
			t.Errorf("%s: %v", spec, err)
		}
	}
	// Combination rules.
	if _, err := g.ResolveVariant("baseline?tile_n=256"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "accumulator") {
		t.Errorf("128x256: %v", err)
	}
	if _, err := g.ResolveVariant("baseline?stages=2&stages=3"); err == nil {
		t.Error("repeated knob accepted")
	}
	if _, err := g.ResolveVariant("fastest"); err == nil || !strings.Contains(err.Error(), "baseline") {
		t.Errorf("unknown variant: %v", err)
	}
	if _, err := g.ResolveVariant("reference?stages=2"); err == nil {
		t.Error("reference took knobs")
	}
	if _, err := g.ResolveVariant("baseline?%zz"); err == nil {
		t.Error("bad query accepted")
	}

	d := problem(t, "nvfp4_dual_gemm")
	dv, err := d.ResolveVariant("baseline")
	if err != nil || dv.Knobs.TileM != 64 || dv.Defines()["DUAL"] != "1" {
		t.Errorf("dual baseline: %+v %v", dv, err)
	}
	if _, err := d.ResolveVariant("baseline?launch=grouped"); !errors.As(err, &ke) {
		t.Errorf("dual grouped: %v", err)
	}
}

func TestSourcesAndHashes(t *testing.T) {
	for _, p := range kernels.Problems() {
		for _, v := range p.Variants() {
			src, err := v.Source()
			if err != nil || !strings.Contains(src, "extern \"C\" __global__") {
				t.Errorf("%s %s: source: %v", p.Name, v.Name, err)
			}
			// The one include is the shared header, given to NVRTC with
			// the source; no toolkit headers (NVRTC alone compiles them).
			if strings.Contains(strings.ReplaceAll(src, `#include "`+kernels.CommonHeader+`"`, ""), "#include") {
				t.Errorf("%s %s: sources include no headers but %s (NVRTC alone compiles them)", p.Name, v.Name, kernels.CommonHeader)
			}
			for _, k := range v.KernelNames() {
				if !strings.Contains(src, " "+k+"(") {
					t.Errorf("%s %s: entry %s not in source", p.Name, v.Name, k)
				}
			}
			if len(v.SourceHash()) != 64 {
				t.Errorf("hash %q", v.SourceHash())
			}
		}
	}
}

func TestKnobCombinationsValid(t *testing.T) {
	for _, p := range kernels.Problems() {
		combos := p.KnobCombinations()
		if len(combos) < 10 {
			t.Errorf("%s: only %d combinations", p.Name, len(combos))
		}
		for _, k := range combos {
			if sb := kernels.SharedBytes(p.Name, k); sb > 232448 {
				t.Errorf("%s %+v: %d bytes of shared memory", p.Name, k, sb)
			}
		}
	}
}
