package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/kernelcheck"
	"github.com/pitchtank/pitchtank/internal/repotest"
)

// needNVRTC skips without NVRTC, or fails under PITCHTANK_REQUIRE_NVRTC=1
// (CI), as the kernels' compile tests do.
func needNVRTC(t *testing.T) {
	t.Helper()
	if _, err := gpu.NVRTCVersion(); err != nil {
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required (PITCHTANK_REQUIRE_NVRTC=1) but unavailable: %v", err)
		}
		t.Skipf("NVRTC is not installed here (%v): web kernel check needs it", err)
	}
}

func kernelCheck(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"kernel", "check"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// Every example compiles for every architecture the local NVRTC supports,
// with registers, shared memory and spills per entry point.
func TestKernelCheckExamples(t *testing.T) {
	needNVRTC(t)
	ents, err := os.ReadDir(filepath.Join("..", "..", "examples", "kernels"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		code, out, errs := kernelCheck("--problem", "nvfp4_group_gemm", repotest.ExampleDir(t, e.Name()))
		if code != 0 || !strings.HasSuffix(out, "ok\n") || !strings.Contains(out, " registers, ") || !strings.Contains(out, "B spill stores") {
			t.Errorf("%s: exit %d\n%s%s", e.Name(), code, out, errs)
		}
		t.Logf("%s:\n%s", e.Name(), out)
	}
}

// A broken kernel fails with NVRTC's message at file:line and exit 1, in
// text and in --json.
func TestKernelCheckBroken(t *testing.T) {
	needNVRTC(t)
	dir := t.TempDir()
	broken := 0
	for _, f := range []string{"manifest.json", "clear_gemm.cu"} {
		b, err := os.ReadFile(filepath.Join(repotest.ExampleDir(t, "clear"), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "clear_gemm.cu" {
			lines := strings.Split(string(b), "\n")
			for i, l := range lines {
				if strings.Contains(l, "acc[0][0] += x0 * y0;") {
					lines[i] = strings.Replace(l, "y0", "y_undeclared", 1)
					broken = i + 1
					b = []byte(strings.Join(lines, "\n"))
					break
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if broken == 0 {
		t.Fatal("the example no longer has the line this test breaks (acc[0][0] += x0 * y0;)")
	}
	loc := fmt.Sprintf("clear_gemm.cu:%d: error: identifier \"y_undeclared\" is undefined", broken)
	code, out, errs := kernelCheck(dir)
	if code != kernelcheck.ExitFailed || !strings.Contains(out, loc) || !strings.HasSuffix(out, "FAILED\n") {
		t.Fatalf("exit %d, want %q in\n%s%s", code, loc, out, errs)
	}
	code, out, errs = kernelCheck("--json", dir)
	var rep kernelcheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if code != kernelcheck.ExitFailed || rep.OK || len(rep.Archs) == 0 || rep.Archs[0].OK || !strings.Contains(rep.Archs[0].Variants[0].Messages, loc) || !strings.Contains(errs, loc) {
		t.Errorf("--json: exit %d, report %+v, stderr %s", code, rep, errs)
	}
}

// --json of a good kernel: the report the server stores.
func TestKernelCheckJSON(t *testing.T) {
	needNVRTC(t)
	code, out, errs := kernelCheck(repotest.ExampleDir(t, "clear"), "--json")
	var rep kernelcheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errs)
	}
	if !rep.OK || rep.Name != "clear" || len(rep.Hash) != 64 || rep.Kind != "cuda" || len(rep.Archs) < 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, a := range rep.Archs {
		if len(a.Variants) != 2 { // the default (stages=2) and stages=1
			t.Errorf("%s: %d variants", a.Arch, len(a.Variants))
		}
		for _, v := range a.Variants {
			if len(v.Entries) != 1 || v.Entries[0].Name != "clear_gemm" || v.Entries[0].Registers == 0 || v.Entries[0].SharedStatic == 0 {
				t.Errorf("%s %s: entries %+v", a.Arch, v.Variant, v.Entries)
			}
		}
	}
}

// Usage errors exit 2 without compiling: no path, a refused manifest
// (naming the field), a lone .cu without --problem, another subcommand.
func TestKernelCheckUsage(t *testing.T) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "manifest.json"), []byte(`{"name": "x", "problem": "nvfp4_group_gemm", "kind": "cuda", "source": "k.cu", "min_arch": 80, "entry": "k", "launch": {"mode": "sequential", "block": [0, 1, 1], "tile_m": 8, "tile_n": 8}}`), 0o644)
	os.WriteFile(filepath.Join(bad, "k.cu"), []byte(`extern "C" __global__ void k() {}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want exactly one PATH"},
		{[]string{bad}, "launch.block"},
		{[]string{filepath.Join(bad, "k.cu")}, "--problem is required"},
		{[]string{"--problem", "nvfp4_dual_gemm", repotest.ExampleDir(t, "clear")}, "the manifest says nvfp4_group_gemm"},
	} {
		code, _, errs := kernelCheck(c.args...)
		if code != kernelcheck.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %s", c.args, code, errs)
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"kernel", "compile"}, strings.NewReader(""), &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "the only subcommand is \"check\"") {
		t.Errorf("kernel compile: exit %d, %s", code, errb.String())
	}
}

// A lone .cu file compiles too, with the entry points ptxas finds.
func TestKernelCheckLoneFile(t *testing.T) {
	needNVRTC(t)
	code, out, errs := kernelCheck("--problem", "nvfp4_group_gemm", filepath.Join(repotest.ExampleDir(t, "clear"), "clear_gemm.cu"))
	if code != 0 || !strings.Contains(out, "kernel clear_gemm.cu (nvfp4_group_gemm, cuda)") || !strings.Contains(out, "clear_gemm: ") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
