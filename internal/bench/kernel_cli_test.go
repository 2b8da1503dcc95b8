package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/result"
)

// examplesDir is a submitted-kernel example of examples/kernels.
func examplesDir(name string) string { return filepath.Join("..", "..", "examples", "kernels", name) }

// --kernel on the CPU is a usage error that says why: CPU mode runs only
// the reference.
func TestCLIKernelOnCPUIsUsage(t *testing.T) {
	r := runCLI(t, "--kernel", examplesDir("clear"), "--device", "cpu")
	if r.code != result.ExitUsage || !strings.Contains(r.stderr, "--kernel runs a submitted kernel, which needs a GPU") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	last := r.lines[len(r.lines)-1]
	if last["type"] != "error" || last["phase"] != "usage" {
		t.Errorf("final line %v", last)
	}
}

// A refused submission, a variant the submission does not declare and a
// problem other than the manifest's are usage errors naming the cause.
func TestCLIKernelRefusals(t *testing.T) {
	broken := t.TempDir()
	m, err := os.ReadFile(filepath.Join(examplesDir("clear"), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(filepath.Join(examplesDir("clear"), "clear_gemm.cu"))
	os.WriteFile(filepath.Join(broken, "manifest.json"), []byte(strings.Replace(string(m), `"min_arch": 80`, `"min_arch": 70`, 1)), 0o644)
	os.WriteFile(filepath.Join(broken, "clear_gemm.cu"), src, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", broken, "--device", "0"}, "min_arch: 70"},
		{[]string{"--kernel", t.TempDir(), "--device", "0"}, "manifest.json"},
		{[]string{"--kernel", examplesDir("clear"), "--variant", "kernel?stages=3", "--device", "0"}, "knob stages"},
		{[]string{"--kernel", examplesDir("clear"), "--problem", "nvfp4_dual_gemm", "--device", "0"}, "is a kernel for nvfp4_group_gemm"},
		{[]string{"--problem", "nvfp4_group_gemm", "--variant", "kernel:abc", "--device", "0"}, "--kernel DIR"},
	} {
		r := runCLI(t, c.args...)
		if r.code != result.ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %s (want %q)", c.args, r.code, r.stderr, c.want)
		}
	}
}

// A valid submission passes every check before the device: without a GPU
// the run ends at opening it, as a built-in's does.
func TestCLIKernelReachesTheDevice(t *testing.T) {
	if _, err := gpu.DeviceCount(); err == nil {
		t.Skip("a CUDA driver is present here: this test is about machines without one (the device test measures a submission)")
	}
	r := runCLI(t, "--kernel", examplesDir("clear"), "--variant", "kernel?stages=1", "--device", "0", "--suite", "tests")
	if r.code != result.ExitCouldNotRun || !strings.Contains(r.stderr, "libcuda") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
}
