package kernels

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every built-in family is registered exactly once, in the listing order,
// and each listed variant answers through its own family.
func TestFamilyRegistry(t *testing.T) {
	var names []string
	for _, f := range Families() {
		names = append(names, f.Info().Name)
	}
	want := []string{"reference", "baseline", "fused", "wgmma", "fault", "cheat"}
	if !slices.Equal(names, want) {
		t.Fatalf("families %v, want %v", names, want)
	}
	for _, n := range want {
		f, ok := LookupFamily(n)
		if !ok || f.Info().Name != n {
			t.Errorf("LookupFamily(%q) = %v, %v", n, f, ok)
		}
	}
	if _, ok := LookupFamily("kernel"); ok {
		t.Error("the submission family is registered by name; it must travel with its submission")
	}
	defer func() {
		if recover() == nil {
			t.Error("registering baseline twice did not panic")
		}
	}()
	registerFamily(baselineFamily{})
}

// Listed variants: reference, baseline, fused and wgmma for both problems;
// the test-only families never.
func TestFamilyVariantsListed(t *testing.T) {
	for _, p := range Problems() {
		var names []string
		for _, v := range p.Variants() {
			names = append(names, v.Name)
			if v.family().Info().Name != v.Base {
				t.Errorf("%s %s: family %s", p.Name, v.Name, v.family().Info().Name)
			}
		}
		want := []string{"reference", "baseline", "fused", "wgmma"}
		if !slices.Equal(names, want) {
			t.Errorf("%s: variants %v, want %v", p.Name, names, want)
		}
	}
}

// A device a family cannot run on is refused with what runs there
// instead: wgmma off Hopper, a sm_90 variant on an sm_80 device.
func TestFamilyCheckDeviceNamesAlternatives(t *testing.T) {
	p, _ := LookupProblem("nvfp4_group_gemm")
	wg, err := p.ResolveVariant("wgmma")
	if err != nil {
		t.Fatal(err)
	}
	err = wg.CheckDevice("sm_100a")
	if err == nil || !strings.Contains(err.Error(), "Hopper (sm_90a) only") || !strings.Contains(err.Error(), "use baseline or fused") {
		t.Errorf("wgmma on sm_100a: %v", err)
	}
	if err := wg.CheckDevice("sm_90a"); err != nil {
		t.Errorf("wgmma on sm_90a: %v", err)
	}
	if _, err := wg.Plan(p.Tests[0], Limits{Arch: "sm_120a"}); err == nil || !strings.Contains(err.Error(), "use baseline or fused") {
		t.Errorf("wgmma plan on sm_120a: %v", err)
	}
	tma, err := p.ResolveVariant("fused?epilogue=tma")
	if err != nil {
		t.Fatal(err)
	}
	if err := tma.CheckDevice("sm_80"); err == nil || !strings.Contains(err.Error(), "needs sm_90") || !strings.Contains(err.Error(), "use baseline or fused") {
		t.Errorf("tma on sm_80: %v", err)
	}
}

func exampleSubmission(t *testing.T, name string) *Submission {
	t.Helper()
	s, err := LoadSubmission(filepath.Join("..", "examples", "kernels", name))
	if err != nil {
		t.Fatalf("load example %s: %v", name, err)
	}
	return s
}

// withManifest is s with its manifest changed by edit (a new submission).
func withManifest(t *testing.T, s *Submission, edit func(m map[string]any)) (*Submission, error) {
	t.Helper()
	return build(t, s, edit, nil)
}

// build is s with its manifest changed by edit and then its files by
// files (either may be nil), checked anew.
func build(t *testing.T, s *Submission, edit func(m map[string]any), files func(map[string][]byte)) (*Submission, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.Files[ManifestFile], &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	fs := map[string][]byte{}
	for n, b := range s.Files {
		fs[n] = b
	}
	fs[ManifestFile] = raw
	if files != nil {
		files(fs)
	}
	return SubmissionFromFiles(fs)
}

// The baseline expressed through the contract is the built-in baseline:
// same defines for the same knobs, and plans that differ in nothing but
// the variant's name, in every per-group launch mode and grouped.
func TestSubmissionPlansLikeBuiltin(t *testing.T) {
	p, _ := LookupProblem("nvfp4_group_gemm")
	sub := exampleSubmission(t, "baseline")
	shapes := append(append([]Shape{}, p.Tests...), p.Benchmarks[0])
	lim := Limits{SMs: 132, MaxSharedOptin: hopperSharedOptin, Arch: "sm_90a"}
	for _, c := range []struct{ kernel, builtin string }{
		{"kernel", "baseline"},
		{"kernel?stages=3", "baseline?stages=3"},
		{"kernel?launch=streams", "baseline?launch=streams"},
		{"kernel?launch=graph&stages=2", "baseline?stages=2&launch=graph"},
	} {
		kv, err := p.ResolveSubmission(sub, c.kernel)
		if err != nil {
			t.Fatalf("%s: %v", c.kernel, err)
		}
		bv, err := p.ResolveVariant(c.builtin)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(kv.Defines(), map[string]string{"DUAL": "0", "STAGES": bv.Defines()["STAGES"]}) {
			t.Errorf("%s: defines %v", c.kernel, kv.Defines())
		}
		for _, s := range shapes {
			kp, err := kv.Plan(s, lim)
			if err != nil {
				t.Fatalf("%s on %v: %v", c.kernel, s, err)
			}
			bp, err := bv.Plan(s, lim)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(kp.Launches, bp.Launches) || kp.Mode != bp.Mode || kp.Streams != bp.Streams {
				t.Errorf("%s on %v: plan %+v, built-in %+v", c.kernel, s, kp, bp)
			}
		}
	}
	// grouped: the same table, byte for byte.
	gsub, err := withManifest(t, sub, func(m map[string]any) {
		m["entry"] = "gemm_grouped"
		m["launch"].(map[string]any)["mode"] = "grouped"
	})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := p.ResolveSubmission(gsub, "kernel:"+gsub.Hash()+"?stages=2")
	if err != nil {
		t.Fatal(err)
	}
	bv, _ := p.ResolveVariant("baseline?stages=2&launch=grouped")
	addr := func(b Buffer, g int) uint64 { return uint64(b)<<32 | uint64(g)<<8 }
	for _, s := range shapes {
		kp, err := kv.Plan(s, lim)
		if err != nil {
			t.Fatal(err)
		}
		bp, _ := bv.Plan(s, lim)
		if !reflect.DeepEqual(kp.Launches, bp.Launches) || !slices.Equal(kp.TableBytes(addr), bp.TableBytes(addr)) {
			t.Errorf("grouped on %v: plans differ", s)
		}
	}
	if _, err := p.ResolveSubmission(gsub, "kernel?launch=sequential"); err == nil {
		t.Error("a grouped entry resolved launch=sequential")
	}
}

// Knob resolution of a submission: canonical names in manifest order,
// KnobErrors naming the knob, the hash checked, the problem checked.
func TestSubmissionKnobResolution(t *testing.T) {
	p, _ := LookupProblem("nvfp4_group_gemm")
	sub := exampleSubmission(t, "clear")
	base := "kernel:" + sub.Hash()
	v, err := p.ResolveSubmission(sub, "kernel")
	if err != nil || v.Name != base || v.Base != base || v.MinArch != 80 || v.Kernel != sub {
		t.Fatalf("default: %+v, %v", v, err)
	}
	if k := v.KernelNames(); !slices.Equal(k, []string{"clear_gemm"}) {
		t.Errorf("entries %v", k)
	}
	v, err = p.ResolveSubmission(sub, base+"?launch=graph&stages=1")
	if err != nil || v.Name != base+"?stages=1&launch=graph" || v.Defines()["STAGES"] != "1" || v.Knobs.Launch != "graph" {
		t.Errorf("overrides: %q %v %v", v.Name, v.Defines(), err)
	}
	var ke *KnobError
	if _, err := p.ResolveSubmission(sub, "kernel?stages=3"); !errors.As(err, &ke) || ke.Knob != "stages" || !slices.Equal(ke.Allowed, []string{"1", "2"}) {
		t.Errorf("stages=3: %v", err)
	}
	if _, err := p.ResolveSubmission(sub, "kernel?tile_m=64"); !errors.As(err, &ke) || ke.Knob != "tile_m" || !strings.Contains(err.Error(), "known: stages, launch") {
		t.Errorf("tile_m: %v", err)
	}
	if _, err := p.ResolveSubmission(sub, "kernel:0123"); err == nil || !strings.Contains(err.Error(), "names kernel 0123") {
		t.Errorf("other hash: %v", err)
	}
	if _, err := p.ResolveVariant(base); err == nil || !strings.Contains(err.Error(), "--kernel") {
		t.Errorf("ResolveVariant of a submission spec: %v", err)
	}
	d, _ := LookupProblem("nvfp4_dual_gemm")
	if _, err := d.ResolveSubmission(sub, "kernel"); err == nil || !strings.Contains(err.Error(), "is for nvfp4_group_gemm") {
		t.Errorf("dual problem: %v", err)
	}
	// min_arch: a submission asking for sm_90 is refused on sm_80 with
	// what runs there.
	s90, err := withManifest(t, sub, func(m map[string]any) { m["min_arch"] = 90 })
	if err != nil {
		t.Fatal(err)
	}
	v90, _ := p.ResolveSubmission(s90, "kernel")
	if _, err := v90.Plan(p.Tests[0], Limits{Arch: "sm_80"}); err == nil || !strings.Contains(err.Error(), "min_arch") || !strings.Contains(err.Error(), "use baseline or fused") {
		t.Errorf("min_arch 90 on sm_80: %v", err)
	}
	if v90.SourceHash() != s90.Hash() || v90.SourceHash() == v.SourceHash() {
		t.Error("a submission's source hash is its content address")
	}
}

// The project's baseline example is gemm.cu byte for byte, so it cannot
// drift from the kernel it stands for.
func TestBaselineExampleIsGemmCu(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("..", "examples", "kernels", "baseline", "gemm.cu"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cudaFiles.ReadFile("cuda/gemm.cu")
	if string(a) != string(b) {
		t.Error("examples/kernels/baseline/gemm.cu differs from kernels/cuda/gemm.cu: copy it again")
	}
}

// The source hash covers the shared header: a built-in's hash changes
// with pt_common.cuh's bytes.
func TestSourceHashCoversHeaders(t *testing.T) {
	p, _ := LookupProblem("nvfp4_group_gemm")
	v, _ := p.ResolveVariant("fused")
	h, err := v.Headers()
	if err != nil || !strings.Contains(h[CommonHeader], "fg_dec") {
		t.Fatalf("headers %v: %v", len(h), err)
	}
	src, _ := v.Source()
	if !strings.Contains(src, `#include "pt_common.cuh"`) {
		t.Error("fast_group_gemm.cu does not include the shared header")
	}
	before := v.SourceHash()
	if before != v.SourceHash() {
		t.Fatal("hash not stable")
	}
	orig := readCUDA
	defer func() { readCUDA = orig }()
	readCUDA = func(name string) ([]byte, error) {
		b, err := orig(name)
		if name == "cuda/"+CommonHeader {
			b = append(b, ' ')
		}
		return b, err
	}
	if v.SourceHash() == before {
		t.Error("changing the shared header left the source hash unchanged")
	}
}

// toyFamily is what a new built-in family's file holds: its own knob
// ("swizzle", which Knobs has no field for), defines, entries and plan
// (the per-group machinery). Registering it is all it takes to be
// resolvable by name.
type toyFamily struct{}

func (toyFamily) Info() FamilyInfo { return FamilyInfo{Name: "toy", Order: 40} }
func (toyFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{Name: "toy", Base: "toy", Title: "toy", Problem: p.Name, SourceFile: "gemm.cu", MinArch: 80}
	v.Knobs, _ = defaultKnobs(p.Name, toyFamily{})
	return v, true
}
func (toyFamily) KnobSpace(string) []KnobSpec {
	return []KnobSpec{
		{Key: "stages", Values: []string{"1", "2"}, Default: "1"},
		{Key: "swizzle", Values: []string{"none", "xor"}, Default: "none"},
	}
}
func (toyFamily) Fixed(string) Knobs        { return Knobs{TileM: 64, TileN: 64, Launch: "sequential"} }
func (toyFamily) Check(string, Knobs) error { return nil }
func (toyFamily) MinArch(string, Knobs) int { return 80 }
func (toyFamily) Defines(v Variant, d map[string]string) map[string]string {
	d["STAGES"], d["SWIZZLE"] = v.Knobs.Value("stages"), v.Knobs.Value("swizzle")
	return d
}
func (toyFamily) Entries(Variant) []string { return []string{"gemm_group"} }
func (toyFamily) Plan(v Variant, s Shape, _ Limits) (*Plan, error) {
	return perGroupPlan(v.Name, v.Knobs.Launch, false, s, perGroup{Group: "gemm_group", Block: [3]uint32{128, 1, 1}, TileM: 64, TileN: 64})
}
func (toyFamily) CheckDevice(v Variant, arch string) error { return checkArchAtLeast(v, arch) }

// A family is one registration: its own knobs resolve, name and define
// without any change elsewhere in the package.
func TestFamilyAddedByOneRegistration(t *testing.T) {
	registerFamily(toyFamily{})
	defer delete(families, "toy")
	p, _ := LookupProblem("nvfp4_group_gemm")
	var names []string
	for _, v := range p.Variants() {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"reference", "baseline", "fused", "wgmma", "toy"}) {
		t.Errorf("listing order: %v", names)
	}
	v, err := p.ResolveVariant("toy?swizzle=xor&stages=2")
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "toy?stages=2&swizzle=xor" || v.Knobs.Value("swizzle") != "xor" || v.Defines()["SWIZZLE"] != "xor" || v.Defines()["STAGES"] != "2" {
		t.Errorf("%s: %v", v.Name, v.Defines())
	}
	if n := len(p.VariantCombinations("toy")); n != 4 {
		t.Errorf("%d combinations", n)
	}
	pl, err := v.Plan(p.Tests[0], Limits{})
	if err != nil || len(pl.Launches) != len(p.Tests[0].M) {
		t.Errorf("plan %+v %v", pl, err)
	}
	var ke *KnobError
	if _, err := p.ResolveVariant("toy?swizzle=rot"); !errors.As(err, &ke) || ke.Knob != "swizzle" {
		t.Errorf("swizzle=rot: %v", err)
	}
}
