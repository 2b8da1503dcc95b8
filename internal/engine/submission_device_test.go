package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/repotest"
	"github.com/pitchtank/pitchtank/kernels"
)

// Device tests of submitted kernels (docs/kernel-contract.md): every kind
// runs through the same engine plan as the built-ins and is checked
// against the GPU reference.

func loadExample(t *testing.T, name string) *kernels.Submission {
	t.Helper()
	s, err := kernels.LoadSubmission(repotest.ExampleDir(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asKind is s rebuilt as a submission of kind with main file name holding
// img (PTX or cubin made from s's source at test time).
func asKind(t *testing.T, s *kernels.Submission, kind, name string, img []byte) *kernels.Submission {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.Files[kernels.ManifestFile], &m); err != nil {
		t.Fatal(err)
	}
	m["kind"], m["source"] = kind, name
	m["knobs"] = []any{} // img is built with the default STAGES; no define changes it now
	delete(m, "headers")
	raw, _ := json.Marshal(m)
	out, err := kernels.SubmissionFromFiles(map[string][]byte{kernels.ManifestFile: raw, name: img})
	if err != nil {
		t.Fatalf("as %s: %v", kind, err)
	}
	return out
}

// compileExample compiles s's default variant with NVRTC for arch (a
// compute_ arch gives PTX, without its trailing NUL).
func compileExample(t *testing.T, s *kernels.Submission, arch string) []byte {
	t.Helper()
	p, _ := kernels.LookupProblem(s.Manifest.Problem)
	v, err := p.ResolveSubmission(s, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := v.Source()
	hdrs, _ := v.Headers()
	c, err := gpu.Compile(v.SourceFile, src, gpu.CompileOptions{Arch: arch, Defines: v.Defines(), Headers: hdrs})
	if err != nil {
		t.Fatalf("compile %s for %s: %v", s.Manifest.Name, arch, err)
	}
	return []byte(strings.TrimRight(string(c.Cubin), "\x00"))
}

func submissionVariants(t *testing.T, p *kernels.Problem, s *kernels.Submission, specs ...string) []kernels.Variant {
	t.Helper()
	var vs []kernels.Variant
	for _, spec := range specs {
		v, err := p.ResolveSubmission(s, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		vs = append(vs, v)
	}
	return vs
}

// The examples as CUDA source, in every launch mode and knob value, are
// correct on every test shape and the first benchmark shape.
func TestSubmittedCUDACorrect(t *testing.T) {
	info := needDevice(t)
	p, _ := kernels.LookupProblem("nvfp4_group_gemm")
	cases := shapeCases(t, info, p, append(append([]kernels.Shape{}, p.Tests...), p.Benchmarks[0]), 7100)
	checkVariants(t, info, p, submissionVariants(t, p, loadExample(t, "clear"),
		"kernel", "kernel?stages=1", "kernel?launch=streams", "kernel?launch=graph&stages=1"), cases)
	checkVariants(t, info, p, submissionVariants(t, p, loadExample(t, "baseline"),
		"kernel", "kernel?stages=3", "kernel?launch=graph&stages=2", "kernel?launch=streams&stages=4"), cases)
}

// PTX built by NVRTC at test time goes through the driver's JIT, and a
// cubin for the device loads as is; both are correct. A cubin for another
// major architecture is refused before anything loads, naming the
// device's architecture.
func TestSubmittedPTXAndCubin(t *testing.T) {
	info := needDevice(t)
	p, _ := kernels.LookupProblem("nvfp4_group_gemm")
	clear := loadExample(t, "clear")
	cc := info.CCMajor*10 + info.CCMinor
	ptx := compileExample(t, clear, "compute_80") // PTX for sm_80 JITs forward to any newer device
	cubin := compileExample(t, clear, info.Arch)
	cases := shapeCases(t, info, p, p.Tests, 7200)
	ps := asKind(t, clear, kernels.KindPTX, "clear_gemm.ptx", ptx)
	cs := asKind(t, clear, kernels.KindCubin, "clear_gemm.cubin", cubin)
	checkVariants(t, info, p, submissionVariants(t, p, ps, "kernel", "kernel?launch=graph"), cases)
	checkVariants(t, info, p, submissionVariants(t, p, cs, "kernel", "kernel?launch=streams"), cases)

	other := "sm_80"
	if cc < 90 {
		other = "sm_90"
	}
	ws := asKind(t, clear, kernels.KindCubin, "clear_gemm.cubin", compileExample(t, clear, other))
	v, _ := p.ResolveSubmission(ws, "kernel")
	_, err := engine.Build(info, v, "")
	if err == nil || !strings.Contains(err.Error(), "no code for the device's architecture "+info.Arch) {
		t.Errorf("a %s cubin on %s: %v", other, info.Arch, err)
	}
	t.Logf("refused: %v", err)
}

// A submitted kernel with a bug fails the check (the bench's "incorrect")
// on at least one test shape.
func TestSubmittedBuggyKernelFailsCheck(t *testing.T) {
	info := needDevice(t)
	p, _ := kernels.LookupProblem("nvfp4_group_gemm")
	clear := loadExample(t, "clear")
	src := strings.Replace(string(clear.Files["clear_gemm.cu"]), "acc[1][1] += x1 * y1;", "acc[1][1] += x1 * y0;", 1)
	if src == string(clear.Files["clear_gemm.cu"]) {
		t.Fatal("the example no longer has the line this test breaks (acc[1][1] += x1 * y1;)")
	}
	files := map[string][]byte{}
	for n, b := range clear.Files {
		files[n] = b
	}
	files["clear_gemm.cu"] = []byte(src)
	bug, err := kernels.SubmissionFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.ResolveSubmission(bug, "kernel")
	b := buildAll(t, info, []kernels.Variant{v})[0]
	// Every test shape: the wrong product touches only a thread's second
	// row and column pair, which the first shapes (one token, 64 columns)
	// never reach; the server's run of the same bug fails 7 of 9 shapes.
	cases := shapeCases(t, info, p, p.Tests, 7300) // outside Do: it runs the reference there
	failed := 0
	err = dev.Do(func(c *gpu.Ctx) error {
		for _, sc := range cases {
			chk, err := runChecked(c, b, p, sc.s, limits(info), sc.in, sc.ref)
			if err != nil {
				return err
			}
			if !chk.Pass {
				failed++
			}
			t.Logf("buggy kernel, %v: %+v", sc.s, chk)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if failed == 0 {
		t.Errorf("a kernel with a wrong product passed the check on all %d test shapes", len(p.Tests))
	}
}
