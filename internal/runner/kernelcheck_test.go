package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

const checkChildEnv = "RUNNER_TEST_CHECK_CHILD"

// TestCheckChild is the stand-in `web kernel check --json`, not a test.
func TestCheckChild(t *testing.T) {
	mode := os.Getenv(checkChildEnv)
	if mode == "" {
		t.Skip("stand-in compile check for the upload tests; it runs only when they start it")
	}
	args := os.Args
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
		}
	}
	dir := args[len(args)-1]
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		fmt.Fprintln(os.Stderr, "no submission folder:", err)
		os.Exit(70)
	}
	switch mode {
	case "compiled":
		fmt.Printf(`{"problem":%q,"archs":[{"arch":"sm_80","entries":[{"name":"clear_gemm","registers":40,"shared_bytes":0,"spill_bytes":0}]}]}`+"\n", flagValue(args, "--problem"))
		os.Exit(0)
	case "failed":
		fmt.Println(`{"archs":[{"arch":"sm_80","error":"clear.cu(12): error: identifier \"x\" is undefined"}]}`)
		fmt.Fprintln(os.Stderr, `clear.cu(12): error: identifier "x" is undefined`)
		os.Exit(1)
	case "nonvrtc":
		fmt.Fprintln(os.Stderr, "web kernel check: NVRTC is not available: libnvrtc.so: cannot open shared object file")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Minute)
	}
	os.Exit(70)
}

func checker(mode string, archs ...int) *runner.SubmissionChecker {
	return &runner.SubmissionChecker{Archs: archs, Timeout: 3 * time.Second, Command: func(ctx context.Context, problem, dir string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestCheckChild$", "--"}, runner.CheckArgs(problem, dir)...)...)
		// childEnv set: TestMain runs the tests at once (no cmd/web build).
		cmd.Env = append(os.Environ(), checkChildEnv+"="+mode, childEnv+"=check")
		return cmd
	}}
}

func TestSubmissionCompileReport(t *testing.T) {
	cases := []struct {
		mode, status, msg string
	}{
		{"compiled", "compiled", ""},
		{"failed", "failed", `clear.cu(12): error: identifier "x" is undefined`},
		{"nonvrtc", "not compiled", "not compiled here: NVRTC unavailable"},
		{"hang", "failed", "did not finish within 3s"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			start := time.Now()
			up, err := checker(c.mode).Check(context.Background(), clearFiles(t))
			if err != nil {
				t.Fatal(err)
			}
			if up.Report.Status != c.status || !strings.Contains(up.Report.Message, c.msg) {
				t.Errorf("report = %+v, want %s with %q", up.Report, c.status, c.msg)
			}
			if c.mode == "compiled" && !strings.Contains(string(up.Report.Report), `"registers":40`) {
				t.Errorf("the check's JSON is not kept: %s", up.Report.Report)
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("the check took %v", time.Since(start))
			}
		})
	}
	up, err := (&runner.SubmissionChecker{}).Check(context.Background(), clearFiles(t))
	if err != nil || up.Report.Status != "not compiled" {
		t.Errorf("without a check command: %+v, %v", up, err)
	}
}

// Uploads that are refused, each with the field it names: nothing of them
// reaches the store (the checker returns no upload).
func TestSubmissionRefused(t *testing.T) {
	base := func() map[string][]byte { return clearFiles(t) }
	manifest := func(edit func(m map[string]any)) map[string][]byte {
		f := base()
		var m map[string]any
		if err := json.Unmarshal(f["manifest.json"], &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		f["manifest.json"], _ = json.Marshal(m)
		return f
	}
	withCubin := func(file string) map[string][]byte {
		b, err := os.ReadFile(filepath.Join("testdata", "kernels", file))
		if err != nil {
			t.Fatal(err)
		}
		f := manifest(func(m map[string]any) { m["kind"], m["source"] = "cubin", "clear.cubin"; delete(m, "knobs") })
		delete(f, "clear.cu")
		f["clear.cubin"] = b
		return f
	}
	big := base()
	big["clear.cu"] = append(big["clear.cu"], bytes.Repeat([]byte("// padding\n"), pitches.MaxKernelBytes/10)...)
	many := base()
	for i := 0; i < pitches.MaxKernelFiles; i++ {
		many[fmt.Sprintf("n%d.cuh", i)] = []byte("x")
	}
	cases := []struct {
		name  string
		files map[string][]byte
		archs []int
		field string
		msg   string
	}{
		{"oversized", big, nil, "files", "the limit is 1048576"},
		{"too many files", many, nil, "files", "at most 32 files"},
		{"path", map[string][]byte{"manifest.json": base()["manifest.json"], "../clear.cu": []byte("x")}, nil, "files.../clear.cu", "outside the kernel's folder"},
		{"unknown kind", map[string][]byte{"manifest.json": base()["manifest.json"], "clear.exe": []byte("x")}, nil, "files.clear.exe", "unknown kind"},
		{"no manifest", map[string][]byte{"clear.cu": base()["clear.cu"]}, nil, "files.manifest.json", "needs a manifest.json"},
		{"garbage manifest", map[string][]byte{"manifest.json": []byte("\x00\x01garbage"), "clear.cu": base()["clear.cu"]}, nil, "files.manifest.json", "manifest.json: parse"},
		{"unknown field", manifest(func(m map[string]any) { m["colour"] = "red" }), nil, "files.manifest.json", `unknown field "colour"`},
		{"bad kind", manifest(func(m map[string]any) { m["kind"] = "python" }), nil, "manifest.kind", "want cuda, ptx or cubin"},
		{"unknown problem", manifest(func(m map[string]any) { m["problem"] = "matmul" }), nil, "manifest.problem", "unknown problem"},
		{"missing source", manifest(func(m map[string]any) { m["source"] = "other.cu" }), nil, "manifest.source", `file "other.cu" is missing`},
		{"binary source", func() map[string][]byte { f := base(); f["clear.cu"] = []byte{0xff, 0xfe, 0, 1}; return f }(), nil, "manifest.source", "not UTF-8 text"},
		{"bad knob default", manifest(func(m map[string]any) {
			m["knobs"] = []any{map[string]any{"key": "unroll", "define": "UNROLL", "values": []string{"1"}, "default": "8"}}
		}), nil, "manifest.knobs[0].default", `"8" is not one of the values`},
		{"min_arch above the GPUs", manifest(func(m map[string]any) { m["min_arch"] = 100 }), []int{90}, "manifest.min_arch", "min_arch 100 (sm_100) is above every GPU it could run on: this server's GPUs are sm_90"},
		{"min_arch unknown", manifest(func(m map[string]any) { m["min_arch"] = 130 }), nil, "manifest.min_arch", "130: want one of 80"},
		{"min_arch above all", manifest(func(m map[string]any) { m["min_arch"] = 121 }), []int{80, 90, 100, 120}, "manifest.min_arch", "this server's GPUs are sm_80, sm_90, sm_100, sm_120"},
		{"cubin for sm_75", withCubin("clear_sm75.cubin"), nil, "files.clear.cubin", "holds code for sm_75 only"},
		{"cubin for sm_80 on an H100", withCubin("clear_sm80.cubin"), []int{90}, "files.clear.cubin", "none runs on this server's GPUs (sm_90)"},
		{"cubin garbage", func() map[string][]byte {
			f := withCubin("clear_sm80.cubin")
			f["clear.cubin"] = []byte("not an ELF")
			return f
		}(), nil, "manifest.source", "not a cubin (ELF for EM_CUDA) or fatbin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up, err := checker("compiled", c.archs...).Check(context.Background(), c.files)
			if up != nil || pitches.ErrorCode(err) != pitches.EINVALID {
				t.Fatalf("got %v, %v; want refused", up != nil, err)
			}
			if pitches.ErrorField(err) != c.field || !strings.Contains(pitches.ErrorMessage(err), c.msg) {
				t.Errorf("err = %v\nwant field %q with %q", err, c.field, c.msg)
			}
		})
	}
	// The sm_80 cubin is accepted where an sm_8x GPU (or, without GPUs, a
	// supported architecture) can run it.
	for _, archs := range [][]int{nil, {86}} {
		if _, err := checker("compiled", archs...).Check(context.Background(), withCubin("clear_sm80.cubin")); err != nil {
			t.Errorf("sm_80 cubin with GPUs %v: %v", archs, err)
		}
	}
}
