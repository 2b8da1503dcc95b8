package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
)

// TestGPUServerRuns is issue 4's end-to-end check on a GPU machine: the real
// `web` binary serves the demo with GPU 0, and runs launched through the API
// and from a pitch page go through the runner's child `web bench`. A kernel
// that faults and one that never ends (the test-only fault variant) fail
// their runs with the CUDA error and the time limit, and the runs after them
// succeed on the same device; /healthz answers throughout.
//
// The GPU machine has no Go: build the binaries here and carry bin/ there
// (dev/gpucall/README.md):
//
//	CGO_ENABLED=1 go test -c -o bin/webgpu.test ./cmd/web
//	CGO_ENABLED=1 go build -o bin/web ./cmd/web
//	PITCHTANK_GPU_E2E=1 ./bin/webgpu.test -test.run TestGPUServerRuns -test.v
//
// Settings (environment): PITCHTANK_WEB_BIN (default bin/web or
// ../../bin/web), PITCHTANK_GPU_E2E_RUN_TIMEOUT (the server's --run-timeout,
// default 90s: long enough for an A/A run of the test suite with a cold
// cubin cache; the hanging run costs exactly this much).
func TestGPUServerRuns(t *testing.T) {
	if os.Getenv("PITCHTANK_GPU_E2E") != "1" {
		t.Skip("needs a GPU and the built bin/web: set PITCHTANK_GPU_E2E=1 to run (dev/gpucall/README.md)")
	}
	bin := webBinary(t)
	runTimeout := 90 * time.Second
	if s := os.Getenv("PITCHTANK_GPU_E2E_RUN_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("PITCHTANK_GPU_E2E_RUN_TIMEOUT=%q: want a positive duration such as 90s", s)
		}
		runTimeout = d
	}
	testStart := time.Now()

	// The server, with the test-only kernels enabled in its environment (the
	// bench children inherit it).
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "pt.db")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dbPath, "--devices", "0", "--run-timeout", runTimeout.String())
	cmd.Env = append(os.Environ(), kernels.TestKernelsEnv+"=1")
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
	logins := map[string]demoLogin{}
	loginRE := regexp.MustCompile(`^\s+(\S+)\s+(\S+)\s+(admin|shark|contestant|viewer)\s+(.*)$`)
	sc := bufio.NewScanner(stdout)
	var base, line string
	for sc.Scan() {
		line = sc.Text()
		if m := loginRE.FindStringSubmatch(line); m != nil {
			logins[m[1]] = demoLogin{login: m[1], password: m[2], role: m[3]}
		}
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
	wc, ok := logins["wildcard"]
	if !ok || wc.role != "contestant" {
		t.Fatalf("the demo did not print the wildcard contestant's login (got %v)", logins)
	}

	// /healthz answers 200 all along, polled every second.
	var healthOK, healthBad atomic.Int64
	var healthLast atomic.Value
	stopHealth := make(chan struct{})
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		c := &http.Client{Timeout: 5 * time.Second}
		for {
			res, err := c.Get(base + "/healthz")
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			if err == nil && res.StatusCode == 200 {
				healthOK.Add(1)
			} else {
				healthBad.Add(1)
				healthLast.Store(fmt.Sprintf("%v %v", err, res))
			}
			select {
			case <-stopHealth:
				return
			case <-time.After(time.Second):
			}
		}
	}()

	// (a) An admin's API token, made with the CLI on the served database;
	// round 5's baseline set to "baseline" (the demo's value; setting it
	// again checks the admin path while the round is judging).
	code, tok, stderr := cliDB(t, "", "token", "create", "--db", dbPath, "--user", "admin", "--label", "gpu-e2e")
	if code != 0 {
		t.Fatalf("token create: %s", stderr)
	}
	tok = strings.TrimSpace(tok)
	api := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	// The pitch page's run form queues the round's measurement (problem,
	// suite, baseline): the group GEMM's test suite, so (c) stays short.
	if st, body := api("PUT", "/api/rounds/5/measurement", `{"problem":"nvfp4_group_gemm","suite":"tests","baseline":"baseline","device_class":"","allow_imports":true}`); st != 200 {
		t.Fatalf("(a) PUT /api/rounds/5/measurement: %d %s", st, body)
	}
	t.Logf("(a) round 5 measures nvfp4_group_gemm tests against baseline")

	submit := func(step, variant string) int64 {
		t.Helper()
		body := fmt.Sprintf(`{"problem":"nvfp4_group_gemm","variant":%q,"baseline":"baseline","device":"0","suite":"tests"}`, variant)
		st, b := api("POST", "/api/runs", body)
		if st != 201 {
			t.Fatalf("%s: POST /api/runs %s: %d %s", step, body, st, b)
		}
		var r runner.Run
		if err := json.Unmarshal(b, &r); err != nil || r.ID == 0 {
			t.Fatalf("%s: submit answer %s: %v", step, b, err)
		}
		return r.ID
	}
	// wait polls the run until it finishes; it logs the outcome with the
	// wall time from submission.
	wait := func(step string, id int64, limit time.Duration) runner.Run {
		t.Helper()
		start := time.Now()
		deadline := start.Add(limit)
		var r runner.Run
		for {
			st, b := api("GET", fmt.Sprintf("/api/runs/%d", id), "")
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
			if time.Now().After(deadline) {
				t.Fatalf("%s: run %d still %s after %v", step, id, r.Status, limit)
			}
			time.Sleep(500 * time.Millisecond)
		}
		ran := r.FinishedAt.Sub(r.StartedAt)
		t.Logf("%s: run %d %s %s vs %s: %s after %.1fs (%.1fs running); speedup %.4f [%.4f, %.4f] correct=%v flags=%v reason=%q",
			step, r.ID, r.Problem, r.Variant, r.Baseline, r.Status, time.Since(start).Seconds(), ran.Seconds(),
			r.Speedup.Value, r.Speedup.Lo, r.Speedup.Hi, r.Correct, r.Flags, r.Reason)
		if r.Stderr != "" && r.Status != runner.StatusSucceeded {
			t.Logf("%s: run %d stderr (last 2 KiB):\n%s", step, r.ID, tailString(r.Stderr, 2048))
		}
		return r
	}
	succeeded := func(step string, r runner.Run) {
		t.Helper()
		if r.Status != runner.StatusSucceeded || !r.HasResult || !r.Correct || r.Speedup.Value <= 0 {
			t.Fatalf("%s: run %d: %s (has result %v, correct %v, speedup %v), reason %q; want succeeded and correct",
				step, r.ID, r.Status, r.HasResult, r.Correct, r.Speedup.Value, r.Reason)
		}
	}
	runLimit := runTimeout + 60*time.Second // queue wait, kill grace, drain

	// (b) Baseline against baseline through the API. Its stored document
	// is the current schema and names, per shape and role, the module that
	// ran (baseline's one module, its build's cubin).
	aa := wait("(b) A/A baseline", submit("(b)", "baseline"), runLimit)
	succeeded("(b) A/A baseline", aa)
	doc, err := result.ParseResult(aa.Result)
	if err != nil {
		t.Fatalf("(b) run %d's document: %v", aa.ID, err)
	}
	if doc.SchemaVersion != result.SchemaVersion || doc.Variant.CubinKey == "" {
		t.Fatalf("(b) run %d: schema_version %d (want %d), variant cubin_key %q", aa.ID, doc.SchemaVersion, result.SchemaVersion, doc.Variant.CubinKey)
	}
	if len(doc.Shapes) == 0 {
		t.Fatalf("(b) run %d's document has no shapes", aa.ID)
	}
	for _, sh := range doc.Shapes {
		if len(sh.Launch) == 0 { // else the module check below holds vacuously
			t.Fatalf("(b) run %d shape %d: no launch plan named", aa.ID, sh.Index)
		}
		for _, pl := range sh.Launch {
			if pl.Module != "baseline" || pl.CubinKey != doc.Variant.CubinKey {
				t.Fatalf("(b) run %d shape %d %s: module %q cubin %q, want baseline and %q", aa.ID, sh.Index, pl.Role, pl.Module, pl.CubinKey, doc.Variant.CubinKey)
			}
		}
	}

	// (c) A pitch's variant from its pitch page, as its contestant in a
	// browser: log in through the form, post the page's run form with the
	// headers a browser sends, follow the redirect to the run page.
	st, b := api("GET", "/api/rounds/5/pitches", "")
	if st != 200 {
		t.Fatalf("(c) GET /api/rounds/5/pitches: %d %s", st, b)
	}
	var r5 []struct {
		ID      int64  `json:"id"`
		Title   string `json:"title"`
		Variant string `json:"variant"`
	}
	if err := json.Unmarshal(b, &r5); err != nil {
		t.Fatalf("(c) round 5 pitches: %v: %s", err, b)
	}
	i := slices.IndexFunc(r5, func(p struct {
		ID      int64  `json:"id"`
		Title   string `json:"title"`
		Variant string `json:"variant"`
	}) bool {
		return p.Variant == "baseline?launch=streams"
	})
	if i < 0 {
		t.Fatalf("(c) no round-5 pitch with variant baseline?launch=streams: %s", b)
	}
	pitch := r5[i]
	browser := newBrowser(t, base)
	browser.login(wc.login, wc.password)
	page := browser.get(fmt.Sprintf("/pitches/%d", pitch.ID))
	action, fields := runPitchForm(t, page)
	vals := url.Values{}
	// The form picks only the device; problem, suite and baseline are the
	// round's measurement, set in (a).
	for name, options := range fields {
		want := map[string]string{"device": "0"}[name]
		if want == "" {
			want = options[0] // a browser submits a select's first option
		}
		if !slices.Contains(options, want) {
			t.Fatalf("(c) pitch page run form: select %s offers %v, want %q among them", name, options, want)
		}
		vals.Set(name, want)
	}
	if vals.Get("device") == "" {
		t.Fatalf("(c) pitch page run form has no device select (fields %v)", fields)
	}
	runPath, runPage := browser.post(action, vals)
	m := regexp.MustCompile(`^/runs/(\d+)$`).FindStringSubmatch(runPath)
	if m == nil {
		t.Fatalf("(c) posting the pitch's run form ended on %s, want /runs/{id}:\n%s", runPath, tailString(runPage, 2000))
	}
	pitchRunID, _ := strconv.ParseInt(m[1], 10, 64)
	t.Logf("(c) %s's run form on /pitches/%d (%s) queued run %d", wc.login, pitch.ID, pitch.Title, pitchRunID)
	pr := wait("(c) pitch page "+pitch.Variant, pitchRunID, runLimit)
	if pr.PitchID != pitch.ID || pr.Problem != "nvfp4_group_gemm" || pr.Variant != "baseline?launch=streams" || pr.Baseline != "baseline" || pr.Device != "0" || pr.Suite != "tests" {
		t.Errorf("(c) run %d: pitch %d %s variant %q baseline %q device %q suite %q; want pitch %d, nvfp4_group_gemm baseline?launch=streams vs baseline on 0, tests",
			pr.ID, pr.PitchID, pr.Problem, pr.Variant, pr.Baseline, pr.Device, pr.Suite, pitch.ID)
	}
	succeeded("(c) pitch page", pr)
	if after := browser.get(fmt.Sprintf("/runs/%d", pitchRunID)); !strings.Contains(after, "succeeded") {
		t.Errorf("(c) the run page of run %d does not say succeeded", pitchRunID)
	}

	// (d) A kernel that writes through a wild pointer: the run fails with
	// the CUDA error's name.
	fr := wait("(d) fault?mode=illegal_address", submit("(d)", "fault?mode=illegal_address"), runLimit)
	if fr.Status != runner.StatusFailed || !strings.Contains(fr.Reason, "CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Errorf("(d) run %d: %s, reason %q; want failed with CUDA_ERROR_ILLEGAL_ADDRESS", fr.ID, fr.Status, fr.Reason)
	}

	// (e) A kernel that never ends: the runner's time limit kills the
	// process group.
	hr := wait("(e) fault?mode=hang", submit("(e)", "fault?mode=hang"), runLimit)
	reason := strings.ToLower(hr.Reason)
	if hr.Status != runner.StatusFailed || !(strings.Contains(reason, "time limit") || strings.Contains(reason, "timeout") || strings.Contains(reason, "timed out")) {
		t.Errorf("(e) run %d: %s, reason %q; want failed with the time limit", hr.ID, hr.Status, hr.Reason)
	}

	// (f) The device works again for the next run.
	succeeded("(f) A/A baseline after the faults", wait("(f) A/A baseline after the faults", submit("(f)", "baseline"), runLimit))

	close(stopHealth)
	<-healthDone
	if n := healthBad.Load(); n > 0 {
		t.Errorf("/healthz failed %d of %d polls (last: %v)", n, n+healthOK.Load(), healthLast.Load())
	} else {
		t.Logf("/healthz answered 200 to all %d polls", healthOK.Load())
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

type demoLogin struct{ login, password, role string }

// webBinary finds the built `web`: PITCHTANK_WEB_BIN, else bin/web from the
// repository root (the GPU machine runs the test binary there) or from
// cmd/web (go test's working directory).
func webBinary(t *testing.T) string {
	t.Helper()
	cands := []string{"bin/web", "../../bin/web"}
	if p := os.Getenv("PITCHTANK_WEB_BIN"); p != "" {
		cands = []string{p}
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			abs, err := filepath.Abs(c)
			if err != nil {
				t.Fatal(err)
			}
			return abs
		}
	}
	t.Fatalf("no web binary at %v: build it with `CGO_ENABLED=1 go build -o bin/web ./cmd/web` or set PITCHTANK_WEB_BIN", cands)
	return ""
}

// browser is an HTTP client with a cookie jar that sends what a browser
// sends with a same-origin form post.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

func (b *browser) get(path string) string {
	b.t.Helper()
	res, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		b.t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, tailString(string(body), 2000))
	}
	return string(body)
}

// post submits a form and follows the redirect; it returns the final path
// and page.
func (b *browser) post(path string, vals url.Values) (string, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		b.t.Fatalf("POST %s: ended with %d on %s\n%s", path, res.StatusCode, res.Request.URL, tailString(string(body), 2000))
	}
	return res.Request.URL.Path, string(body)
}

func (b *browser) login(login, password string) {
	b.t.Helper()
	b.get("/login")
	b.post("/login", url.Values{"login": {login}, "password": {password}, "next": {"/"}})
	u, _ := url.Parse(b.base)
	if len(b.c.Jar.Cookies(u)) == 0 {
		b.t.Fatalf("logging in as %s through the form set no cookie", login)
	}
}

// runPitchForm finds the pitch page's run form (data-run-pitch) and returns
// its action and each select's option values.
func runPitchForm(t *testing.T, page string) (string, map[string][]string) {
	t.Helper()
	at := strings.Index(page, "data-run-pitch")
	if at < 0 {
		t.Fatalf("the pitch page has no run form (data-run-pitch): is the user allowed to run, and does the server have a runner?")
	}
	start := strings.LastIndex(page[:at], "<form")
	end := strings.Index(page[at:], "</form>")
	if start < 0 || end < 0 {
		t.Fatalf("the pitch page's run form is not a complete <form>")
	}
	form := page[start : at+end]
	m := regexp.MustCompile(`action="([^"]*)"`).FindStringSubmatch(form)
	if m == nil {
		t.Fatalf("the run form has no action: %s", form)
	}
	fields := map[string][]string{}
	for _, sel := range regexp.MustCompile(`(?s)<select name="([^"]+)"[^>]*>(.*?)</select>`).FindAllStringSubmatch(form, -1) {
		for _, o := range regexp.MustCompile(`<option value="([^"]*)"`).FindAllStringSubmatch(sel[2], -1) {
			fields[sel[1]] = append(fields[sel[1]], html.UnescapeString(o[1]))
		}
		if len(fields[sel[1]]) == 0 {
			t.Fatalf("the run form's select %s has no options", sel[1])
		}
	}
	return html.UnescapeString(m[1]), fields
}

// lockedBuffer collects the server's stderr while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tailString(l.b.String(), n)
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
