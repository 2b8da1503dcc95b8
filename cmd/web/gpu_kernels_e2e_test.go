package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/repotest"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// TestGPUServerKernels is issue 10's end-to-end check on a GPU machine (its
// "done means" 2): the real `web` binary serves an empty database with GPU 0,
// and an admin, through the JSON API only, makes a pitching round that
// measures nvfp4_group_gemm on the test suite against `baseline`, files one
// pitch per submission, uploads the submission to it and runs the pitch:
//
//   - cuda:  examples/kernels/clear as uploaded (multipart, like curl -F);
//   - ptx:   that source compiled to PTX by nvcc (JSON upload, base64);
//   - cubin: that source compiled by nvcc for the device's architecture;
//   - bug:   the clear example with one wrong product in its inner loop.
//
// The first three must succeed, correct on every shape, with a geomean
// speedup stored on the run and in the round's results; the buggy one must
// end `incorrect` with a reason naming the shape and the failed check. Each
// kind gets its own pitch because a measured pitch's kernel is locked
// (docs/api.md, "Kernels"). The PTX and cubin parts need nvcc on PATH and
// are skipped, saying so, without it.
//
// The GPU machine has no Go: build here, carry bin/ there and run
// `bash dev/gpucall/kernels.sh server` (it runs):
//
//	CGO_ENABLED=1 go test -c -o bin/webgpu.test ./cmd/web
//	CGO_ENABLED=1 go build -o bin/web ./cmd/web
//	PITCHTANK_GPU_E2E=1 ./bin/webgpu.test -test.run TestGPUServerKernels -test.v
//
// Settings (environment): PITCHTANK_WEB_BIN and PITCHTANK_GPU_E2E_RUN_TIMEOUT
// as for TestGPUServerRuns (default run timeout here 120s: a submission's
// run compiles it with NVRTC in the child before measuring).
func TestGPUServerKernels(t *testing.T) {
	if os.Getenv("PITCHTANK_GPU_E2E") != "1" {
		t.Skip("needs a GPU, NVRTC and the built bin/web: set PITCHTANK_GPU_E2E=1 to run (dev/gpucall/kernels.sh server)")
	}
	bin := webBinary(t)
	runTimeout := 120 * time.Second
	if s := os.Getenv("PITCHTANK_GPU_E2E_RUN_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("PITCHTANK_GPU_E2E_RUN_TIMEOUT=%q: want a positive duration such as 120s", s)
		}
		runTimeout = d
	}
	clearDir := repotest.ExampleDir(t, "clear")
	headerDir := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(clearDir))), "kernels", "cuda")
	testStart := time.Now()

	// The server on an empty database (it loads the demo), GPU 0 only.
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "pt.db")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dbPath, "--devices", "0", "--run-timeout", runTimeout.String())
	serverErr := &lockedBuffer{}
	cmd.Stderr = serverErr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s serve: %v", bin, err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server stderr (last 8 KiB):\n%s", serverErr.tail(8192))
		}
	}()
	sc := bufio.NewScanner(stdout)
	var base, line string
	for sc.Scan() {
		line = sc.Text()
		if m := listening.FindStringSubmatch(line); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("the server never said it was listening (last line %q)", line)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if !strings.Contains(line, "devices: 0") {
		t.Fatalf("listening line %q: want devices: 0 (is GPU 0 visible?)", line)
	}
	t.Logf("server %s up in %.1fs: %s", bin, time.Since(testStart).Seconds(), line)

	// An admin's API token, made with the CLI on the served database.
	code, tok, stderr := cliDB(t, "", "token", "create", "--db", dbPath, "--user", "admin", "--label", "gpu-kernels-e2e")
	if code != 0 {
		t.Fatalf("token create: %s", stderr)
	}
	c := &kernelE2E{base: base, token: strings.TrimSpace(tok), runLimit: runTimeout + 60*time.Second}

	// (a) A pitching round measuring the group GEMM's test suite against
	// baseline on any device.
	st, b := c.api(t, "GET", "/api/rounds", "application/json", nil)
	if st != 200 {
		t.Fatalf("(a) GET /api/rounds: %d %s", st, b)
	}
	var rounds []struct {
		Number int `json:"number"`
	}
	if err := json.Unmarshal(b, &rounds); err != nil {
		t.Fatalf("(a) rounds: %v: %s", err, b)
	}
	round := 1
	for _, r := range rounds {
		round = max(round, r.Number+1)
	}
	st, b = c.apiJSON(t, "POST", "/api/rounds", map[string]any{
		"number": round, "title": fmt.Sprintf("Round %d: submitted kernels on the GPU", round),
		"rules":       "Bring your own kernel: CUDA source, PTX or a cubin.",
		"baseline":    "baseline",
		"measurement": map[string]any{"problem": "nvfp4_group_gemm", "suite": "tests", "device_class": "", "allow_imports": false},
		"criteria":    []map[string]any{{"key": "speedup", "name": "Expected speedup", "weight": 100}},
	})
	if st != 201 {
		t.Fatalf("(a) POST /api/rounds: %d %s", st, b)
	}
	t.Logf("(a) round %d: pitching, measures nvfp4_group_gemm tests vs baseline on any device", round)

	manifest, err := os.ReadFile(filepath.Join(clearDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(filepath.Join(clearDir, "clear_gemm.cu"))
	if err != nil {
		t.Fatal(err)
	}

	// (b) The clear example as CUDA source, uploaded like `curl -F`.
	cudaPitch := c.pitch(t, "(b)", round, "clear example, CUDA source")
	c.upload(t, "(b) cuda", cudaPitch, true, map[string][]byte{"manifest.json": manifest, "clear_gemm.cu": source}, "cuda")
	c.succeeded(t, "(b) cuda", c.wait(t, "(b) cuda", c.run(t, "(b) cuda", cudaPitch)))

	// (c), (d) PTX and a cubin built from the same source by nvcc, each
	// with the clear manifest's kind and source changed and its knobs
	// emptied (the image is built with the default STAGES; no define can
	// change it now).
	t.Run("nvcc", func(t *testing.T) {
		nvcc, err := exec.LookPath("nvcc")
		if err != nil {
			// This test runs only with PITCHTANK_GPU_E2E=1, on the GPU
			// machine, which has nvcc: a skip there would leave the PTX and
			// cubin paths unchecked and the test passing.
			t.Fatal("no nvcc on PATH: the PTX and cubin submissions need it to be built (the GPU machine has it)")
		}
		out := t.TempDir()
		build := func(step, kind string, args ...string) []byte {
			t.Helper()
			file := filepath.Join(out, "clear_gemm."+kind)
			args = append(args, "-I"+clearDir, "-I"+headerDir, "-o", file, filepath.Join(clearDir, "clear_gemm.cu"))
			cmd := exec.Command(nvcc, args...)
			msg, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %s: %v\n%s", step, strings.Join(cmd.Args, " "), err, msg)
			}
			img, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s: %d bytes", step, strings.Join(cmd.Args, " "), len(img))
			return img
		}
		asKind := func(kind string, img []byte) map[string][]byte {
			t.Helper()
			var m map[string]any
			if err := json.Unmarshal(manifest, &m); err != nil {
				t.Fatal(err)
			}
			m["kind"], m["source"], m["knobs"] = kind, "clear_gemm."+kind, []any{}
			raw, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			return map[string][]byte{"manifest.json": raw, "clear_gemm." + kind: img}
		}

		ptx := build("(c) ptx", "ptx", "-ptx", "-arch=compute_80") // sm_80 PTX JITs forward to any newer device
		p := c.pitch(t, "(c)", round, "clear example, PTX from nvcc")
		c.upload(t, "(c) ptx", p, false, asKind("ptx", ptx), "ptx")
		c.succeeded(t, "(c) ptx", c.wait(t, "(c) ptx", c.run(t, "(c) ptx", p)))

		q, err := exec.Command("nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader", "--id=0").Output()
		cc := strings.ReplaceAll(strings.TrimSpace(string(q)), ".", "")
		if err != nil || !regexp.MustCompile(`^\d{2,3}$`).MatchString(cc) {
			t.Fatalf("(d) reading GPU 0's compute capability from nvidia-smi: %q, %v", q, err)
		}
		cubin := build("(d) cubin", "cubin", "-cubin", "-arch=sm_"+cc)
		p = c.pitch(t, "(d)", round, "clear example, cubin from nvcc for sm_"+cc)
		c.upload(t, "(d) cubin", p, false, asKind("cubin", cubin), "cubin")
		c.succeeded(t, "(d) cubin", c.wait(t, "(d) cubin", c.run(t, "(d) cubin", p)))
	})

	// (e) A bug: one product of the 2 x 2 micro-tile reads the wrong B
	// column, so a quarter of C is wrong. The run must end incorrect with
	// the shape and the check that caught it in its reason.
	const good, bad = "acc[1][1] += x1 * y1;", "acc[1][1] += x1 * y0;"
	if !bytes.Contains(source, []byte(good)) {
		t.Fatalf("(e) examples/kernels/clear/clear_gemm.cu no longer has %q to break: update the test's bug", good)
	}
	buggy := bytes.Replace(source, []byte(good), []byte(bad), 1)
	bugPitch := c.pitch(t, "(e)", round, "clear example with a wrong product")
	c.upload(t, "(e) bug", bugPitch, true, map[string][]byte{"manifest.json": manifest, "clear_gemm.cu": buggy}, "cuda")
	br := c.wait(t, "(e) bug", c.run(t, "(e) bug", bugPitch))
	failed := regexp.MustCompile(`shape (\d+)(?: \([^)]*\))?: variant check ([a-z_]+)`).FindStringSubmatch(br.Reason)
	switch {
	case br.Status != runner.StatusIncorrect:
		t.Errorf("(e) run %d: %s, reason %q; want incorrect", br.ID, br.Status, br.Reason)
	case failed == nil:
		t.Errorf("(e) run %d: reason %q names no shape and check (want \"shape N (label): variant check NAME\")", br.ID, br.Reason)
	case br.Correct || !slices.ContainsFunc(br.Shapes, func(s runner.Shape) bool { return !s.Correct }):
		t.Errorf("(e) run %d: correct %v and no shape marked incorrect, yet status %s", br.ID, br.Correct, br.Status)
	default:
		t.Logf("(e) run %d failed shape %s's %s check, as stored: %s", br.ID, failed[1], failed[2], br.Reason)
	}

	// (f) The round's results carry the CUDA pitch's measured speedup
	// (admins see results while the round is open).
	st, b = c.api(t, "GET", fmt.Sprintf("/api/rounds/%d/results", round), "application/json", nil)
	if st != 200 {
		t.Fatalf("(f) GET /api/rounds/%d/results: %d %s", round, st, b)
	}
	var results []struct {
		PitchID  int64    `json:"pitch_id"`
		Title    string   `json:"title"`
		Measured *float64 `json:"measured_speedup"`
	}
	if err := json.Unmarshal(b, &results); err != nil {
		t.Fatalf("(f) results: %v: %s", err, b)
	}
	seen := map[int64]bool{}
	for _, r := range results {
		seen[r.PitchID] = true
		m := "none"
		if r.Measured != nil {
			m = fmt.Sprintf("%.4f", *r.Measured)
		}
		t.Logf("(f) round %d result: pitch %d %q measured %s", round, r.PitchID, r.Title, m)
		if r.PitchID == cudaPitch && (r.Measured == nil || *r.Measured <= 0) {
			t.Errorf("(f) pitch %d (CUDA submission) has no measured speedup in the round's results", r.PitchID)
		}
		if r.PitchID == bugPitch && r.Measured != nil {
			t.Errorf("(f) pitch %d (buggy submission) has a measured speedup %v from an incorrect run", r.PitchID, *r.Measured)
		}
	}
	// Both checks above hold vacuously for a pitch the results leave out.
	for _, id := range []int64{cudaPitch, bugPitch} {
		if !seen[id] {
			t.Errorf("(f) pitch %d is not in round %d's results", id, round)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		stopped = true
		if err != nil {
			t.Errorf("server after SIGTERM: %v", err)
		}
	case <-time.After(45 * time.Second):
		t.Error("server did not stop within 45s of SIGTERM")
	}
	t.Logf("total %.1fs", time.Since(testStart).Seconds())
}

// kernelE2E is an API client of the served database with an admin token.
// Its helpers take the (sub)test they report to.
type kernelE2E struct {
	base, token string
	runLimit    time.Duration
}

func (c *kernelE2E) api(t *testing.T, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (c *kernelE2E) apiJSON(t *testing.T, method, path string, v any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return c.api(t, method, path, "application/json", body)
}

// pitch files an admin's pitch in round; its variant is replaced by the
// upload.
func (c *kernelE2E) pitch(t *testing.T, step string, round int, title string) int64 {
	t.Helper()
	st, b := c.apiJSON(t, "POST", "/api/pitches", map[string]any{
		"round": round, "title": title, "category": "submitted kernel",
		"body":  "The clear example of docs/kernel-contract.md, measured through the server.",
		"claim": map[string]any{"lo": 0.05, "hi": 1.0}, "variant": "baseline",
	})
	if st != 201 {
		t.Fatalf("%s: POST /api/pitches: %d %s", step, st, b)
	}
	var p struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ID == 0 {
		t.Fatalf("%s: pitch answer %s: %v", step, b, err)
	}
	return p.ID
}

// upload posts files as the pitch's kernel (multipart or JSON with
// base64) and checks that the pitch now names the stored kernel and that
// the server's compile check did not fail it.
func (c *kernelE2E) upload(t *testing.T, step string, pitch int64, multipartForm bool, files map[string][]byte, kind string) {
	t.Helper()
	path := fmt.Sprintf("/api/pitches/%d/kernel", pitch)
	note := "gpu e2e: " + step
	var st int
	var b []byte
	if multipartForm {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fw, err := w.CreateFormFile("files", n)
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(files[n])
		}
		w.WriteField("note", note)
		w.Close()
		st, b = c.api(t, "POST", path, w.FormDataContentType(), body.Bytes())
	} else {
		enc := map[string]string{}
		for n, data := range files {
			enc[n] = base64.StdEncoding.EncodeToString(data)
		}
		st, b = c.apiJSON(t, "POST", path, map[string]any{"files": enc, "note": note})
	}
	if st != 201 {
		t.Fatalf("%s: POST %s: %d %s", step, path, st, b)
	}
	var v struct {
		Version int    `json:"version"`
		Hash    string `json:"hash"`
		Variant string `json:"variant"`
		Kind    string `json:"kind"`
		Size    int64  `json:"size"`
		Report  *struct {
			Status string          `json:"status"`
			Report json.RawMessage `json:"report"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: upload answer %s: %v", step, b, err)
	}
	if v.Hash == "" || v.Variant != "kernel:"+v.Hash || v.Kind != kind {
		t.Fatalf("%s: upload answer hash %q variant %q kind %q; want variant kernel:<hash> of kind %s", step, v.Hash, v.Variant, v.Kind, kind)
	}
	if v.Report == nil || v.Report.Status == "failed" {
		t.Fatalf("%s: the server's compile check of the upload: %s", step, b)
	}
	t.Logf("%s: pitch %d version %d: %s (%s, %d bytes), compile check %s", step, pitch, v.Version, v.Variant, v.Kind, v.Size, v.Report.Status)
	st, b = c.api(t, "GET", fmt.Sprintf("/api/pitches/%d", pitch), "", nil)
	var p struct {
		Variant string `json:"variant"`
	}
	if st != 200 || json.Unmarshal(b, &p) != nil || p.Variant != v.Variant {
		t.Fatalf("%s: GET /api/pitches/%d: %d, variant %q; want %q", step, pitch, st, p.Variant, v.Variant)
	}
}

// run queues the pitch's variant against the round's baseline on device
// 0, test suite.
func (c *kernelE2E) run(t *testing.T, step string, pitch int64) int64 {
	t.Helper()
	body := map[string]any{"problem": "nvfp4_group_gemm", "pitch": pitch, "device": "0", "suite": "tests"}
	st, b := c.apiJSON(t, "POST", "/api/runs", body)
	if st != 201 {
		t.Fatalf("%s: POST /api/runs %v: %d %s", step, body, st, b)
	}
	var r runner.Run
	if err := json.Unmarshal(b, &r); err != nil || r.ID == 0 {
		t.Fatalf("%s: submit answer %s: %v", step, b, err)
	}
	if r.PitchID != pitch || !strings.HasPrefix(r.Variant, "kernel:") || r.Baseline != "baseline" {
		t.Fatalf("%s: run %d: pitch %d variant %q baseline %q; want pitch %d's kernel vs baseline", step, r.ID, r.PitchID, r.Variant, r.Baseline, pitch)
	}
	return r.ID
}

// wait polls the run until it finishes and logs one line per run: id,
// status, geomean speedup, wall time from submission and time running.
func (c *kernelE2E) wait(t *testing.T, step string, id int64) runner.Run {
	t.Helper()
	start := time.Now()
	var r runner.Run
	for {
		st, b := c.api(t, "GET", fmt.Sprintf("/api/runs/%d", id), "", nil)
		if st != 200 {
			t.Fatalf("%s: GET /api/runs/%d: %d %s", step, id, st, b)
		}
		r = runner.Run{}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: run %d: %v", step, id, err)
		}
		if r.Status.Finished() {
			break
		}
		if time.Since(start) > c.runLimit {
			t.Fatalf("%s: run %d still %s after %v", step, id, r.Status, c.runLimit)
		}
		time.Sleep(500 * time.Millisecond)
	}
	incorrect := 0
	for _, s := range r.Shapes {
		if !s.Correct {
			incorrect++
		}
	}
	t.Logf("%s: run %d %s vs %s on %s (%s): %s after %.1fs (%.1fs running); geomean speedup %.4f; %d shapes, %d incorrect; correct=%v flags=%v reason=%q",
		step, r.ID, r.Variant, r.Baseline, r.Device, r.DeviceName, r.Status, time.Since(start).Seconds(), r.FinishedAt.Sub(r.StartedAt).Seconds(),
		r.Speedup.Value, len(r.Shapes), incorrect, r.Correct, r.Flags, r.Reason)
	if r.Stderr != "" && r.Status != runner.StatusSucceeded && r.Status != runner.StatusIncorrect {
		t.Logf("%s: run %d stderr (last 2 KiB):\n%s", step, r.ID, tailString(r.Stderr, 2048))
	}
	return r
}

// succeeded requires a correct, measured run: every shape correct and a
// positive geomean speedup stored.
func (c *kernelE2E) succeeded(t *testing.T, step string, r runner.Run) {
	t.Helper()
	if r.Status != runner.StatusSucceeded || !r.HasResult || !r.Correct || r.Speedup.Value <= 0 || len(r.Shapes) == 0 {
		t.Fatalf("%s: run %d: %s (has result %v, correct %v, speedup %v, %d shapes), reason %q; want succeeded and correct",
			step, r.ID, r.Status, r.HasResult, r.Correct, r.Speedup.Value, len(r.Shapes), r.Reason)
	}
	for _, s := range r.Shapes {
		if !s.Correct || s.VariantMedianUs <= 0 || s.BaselineMedianUs <= 0 {
			t.Fatalf("%s: run %d shape %d (%s): correct %v, variant %.2f µs, baseline %.2f µs; want correct and both timed",
				step, r.ID, s.Index, s.Label, s.Correct, s.VariantMedianUs, s.BaselineMedianUs)
		}
	}
}
