package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/web"
)

// The hidden pitch's figures, chosen so that no other page text contains
// them, in every format the app prints: the geomean 7.3191x (%.4f, %.3f,
// %.2f), its interval, its inverse, the percentage of the recap sentence,
// the variant's shape median 123.457 us (%.3f, %.2f) and the baseline's.
// timestamps matches the times pages and documents print (RFC 3339 with
// or without fractions, and "2006-01-02 15:04:05"), which the leak check
// leaves out.
var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?`)

var hiddenFigures = []string{"7.3191", "7.319", "7.32", "7.2017", "7.4388", "0.1366", "632%", "123.457", "123.46", "903.59", "903.6"}

// blindFixture is a judging round with two pitches on the same variant:
// "Secret" (alice's), which oracle has not scored, with every kind of run
// carrying the hidden figures, and "Open" (bob's), which oracle scored,
// with an import whose history chart would plot Secret's import.
type blindFixture struct {
	a                 *app
	rn                *runner.Runner
	secret, open      *pitches.Pitch
	measured, failed  *runner.Run // measured here with log and stderr; failed quoting figures
	suspect           *runner.Run // suspect, accepted with a reason quoting figures
	incorrect         *runner.Run // incorrect, its reason quoting figures
	imported, openRun *runner.Run // imports of Secret and Open, same variant and device
	running           *runner.Run // a live run whose progress carries the median
	runIDs, pitchIDs  []int64
}

func allScores(x float64) pitches.ScorecardInput {
	in := pitches.ScorecardInput{Scores: map[string]float64{}, Estimate: pitches.Range{Lo: 1.1, Hi: 1.6}, Verdict: "FUND"}
	for _, c := range rubric {
		in.Scores[c.Key] = x
	}
	return in
}

func newBlindFixture(t *testing.T) *blindFixture {
	t.Helper()
	ctx := context.Background()
	// The stand-in for `web bench` prints a progress line with the hidden
	// median and a log line with the geomean, then waits to be cancelled.
	child := func(run *runner.Run, resultPath string) (*exec.Cmd, error) {
		return exec.Command("sh", "-c", `echo '{"type":"progress","phase":"timing","shape":0,"shapes":1,"samples":77,"median_us":123.457}'; `+
			`echo 'partial geomean 7.3191x'; exec sleep 60`), nil
	}
	a, rn := newRunsApp(t, runner.Config{Devices: []string{"0"}, Command: child, TimeLimit: 2 * time.Minute, KillGrace: time.Second}, true)
	f := &blindFixture{a: a, rn: rn}
	measuredRound(t, a, 1)
	f.secret = a.pitch("alice", 1, "Secret")
	f.open = a.pitch("bob", 1, "Open")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(ctx, a.users["oracle"], f.open.ID, allScores(7)); err != nil {
		t.Fatalf("oracle scores Open: %v", err)
	}
	if _, err := a.db.SubmitScorecard(ctx, a.users["pragmatist"], f.secret.ID, allScores(6)); err != nil {
		t.Fatalf("pragmatist scores Secret: %v", err)
	}

	// A run measured here (on a device no worker serves, finished by hand):
	// result document, shape rows, log and stderr all carry the figures.
	doc := `{"schema_version":2,"status":"ok","shapes":[{"index":0,"variant_timing":{"stats":{"median_ns":123457,"rel_sem":0.0123457}}}],` +
		`"summary":{"geomean_speedup":7.3191}}`
	shape := runner.Shape{Index: 0, Label: "g=8 N=4096 K=7168", BaselineMedianUs: 903.5968, BaselineSEMUs: 1.5, BaselineSamples: 50,
		VariantMedianUs: 123.457, VariantSEMUs: 1.2, VariantSamples: 50, FloorUs: 61.7285, FractionOfFloor: 0.5,
		Speedup: runner.Interval{Value: 7.3191, Lo: 7.2017, Hi: 7.4388}, Correct: true}
	res := &runner.Result{Doc: json.RawMessage(doc), Speedup: runner.Interval{Value: 7.3191, Lo: 7.2017, Hi: 7.4388}, Correct: true,
		Shapes: []runner.Shape{shape}, DeviceName: "NVIDIA H100"}
	finishMeasured := func(status runner.Status, reason string) *runner.Run {
		run, err := a.db.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline",
			Baseline: "baseline", Device: "9", PitchID: f.secret.ID, RequestedBy: a.users["alice"].ID})
		if err != nil {
			t.Fatalf("enqueue: %v", err)
		}
		if err := a.db.MarkRunning(ctx, run.ID); err != nil {
			t.Fatalf("mark running: %v", err)
		}
		fin := runner.Finish{Reason: reason, Log: "shape 0 median 123.457 us\ngeomean speedup 7.3191x",
			Stderr: "status ok: geomean speedup 7.3191 [7.2017, 7.4388] (inverse 0.13663)"}
		if status == runner.StatusFailed {
			err = a.db.MarkFailed(ctx, run.ID, fin)
		} else {
			err = a.db.MarkMeasured(ctx, run.ID, status, res, fin)
		}
		if err != nil {
			t.Fatalf("finish run as %s: %v", status, err)
		}
		return run
	}
	f.measured = finishMeasured(runner.StatusSucceeded, "")
	f.failed = finishMeasured(runner.StatusFailed, "crashed after shape 0: median 123.457 us, geomean so far 7.3191x")
	f.suspect = finishMeasured(runner.StatusSuspect, "suspect: shape 0: median 123.457 us is below the floor")
	f.incorrect = finishMeasured(runner.StatusIncorrect, "incorrect: shape 0: variant check timed_sample after a 123.457 us median")
	if _, err := a.db.Accept(ctx, f.suspect.ID, a.users["admin"].ID, "checked by hand: 7.3191x is real"); err != nil {
		t.Fatalf("accept: %v", err)
	}

	// Imports of both pitches, same variant, baseline, suite and device:
	// comparable, so each is in the other's history chart.
	imp := func(p *pitches.Pitch, baseUs, varUs float64, note string) *runner.Run {
		req := &runner.ImportRequest{Device: "B200", Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline",
			Baseline: "baseline", PitchID: p.ID, Note: note,
			Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: baseUs, VariantUs: varUs}}}
		if err := req.Validate(runner.KernelsCatalog{}); err != nil {
			t.Fatalf("import document: %v", err)
		}
		run, r, err := req.ImportResult(a.users["admin"].ID)
		if err != nil {
			t.Fatalf("import result: %v", err)
		}
		stored, err := a.db.Import(ctx, run, r)
		if err != nil {
			t.Fatalf("store import: %v", err)
		}
		return stored
	}
	f.imported = imp(f.secret, 903.5968, 123.457, "measured 7.3191x on a B200")
	f.openRun = imp(f.open, 105.12, 100, "measured on a B200")

	// A live run: its progress carries the median.
	var err error
	if f.running, err = rn.Submit(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline",
		Baseline: "baseline", Device: "0", PitchID: f.secret.ID, RequestedBy: a.users["alice"].ID}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	events, stop := rn.Subscribe(f.running.ID)
	defer stop()
	deadline := time.After(10 * time.Second)
	for progressed := false; !progressed; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the live run ended before its progress")
			}
			progressed = ev.Type == "progress"
		case <-deadline:
			t.Fatal("no progress from the stand-in child within 10s")
		}
	}
	f.runIDs = []int64{f.measured.ID, f.failed.ID, f.suspect.ID, f.incorrect.ID, f.imported.ID, f.openRun.ID, f.running.ID}
	f.pitchIDs = []int64{f.secret.ID, f.open.ID}
	return f
}

var routeParam = regexp.MustCompile(`\{(\w+)(:[^}]*)?\}`)

// urls expands every GET route of the server's router into the URLs to
// fetch: {number} is the round, {id} every pitch or every run (by the
// route's prefix), /static/* every embedded file. A parameter it cannot
// fill fails the test, so a new route is never skipped silently.
func (f *blindFixture) urls(t *testing.T, routes chi.Routes) []string {
	t.Helper()
	var out []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method != http.MethodGet {
			return nil
		}
		if route == "/static/*" {
			return fs.WalkDir(web.Static(), ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					out = append(out, "/static/"+p)
				}
				return err
			})
		}
		route = strings.TrimSuffix(route, "/*") // chi's Route prefix
		var ids []int64
		switch {
		case strings.HasPrefix(route, "/pitches/{id") || strings.HasPrefix(route, "/api/pitches/{id"):
			ids = f.pitchIDs
		case strings.HasPrefix(route, "/runs/{id") || strings.HasPrefix(route, "/api/runs/{id"):
			ids = f.runIDs
		case strings.Contains(route, "/webhooks/{id"):
			ids = []int64{1} // admins only; none exists here
		}
		var fillErr error
		fill := func(id int64) string {
			return routeParam.ReplaceAllStringFunc(route, func(m string) string {
				switch name := routeParam.FindStringSubmatch(m)[1]; {
				case name == "number":
					return "1"
				case name == "id" && id != 0:
					return fmt.Sprint(id)
				case name == "hash":
					// A kernel no pitch carries: its page is a 404 for
					// everyone (the kernel tests check visibility).
					return strings.Repeat("0", 64)
				default:
					fillErr = fmt.Errorf("the walk cannot fill {%s} in %s: teach it", name, route)
					return m
				}
			})
		}
		if len(ids) == 0 {
			out = append(out, fill(0))
		}
		for _, id := range ids {
			out = append(out, fill(id))
		}
		return fillErr
	})
	if err != nil {
		t.Fatal(err)
	}
	// Filtered lists and exports too.
	for _, q := range []string{"/runs?pitch=%d", "/api/runs?pitch=%d", "/api/runs.csv?pitch=%d", "/api/runs.json?pitch=%d",
		"/runs?pitch=%d&status=succeeded", "/api/runs?pitch=%d&status=suspect",
		"/runs?pitch=%d&sort=speedup&dir=desc", "/api/runs?pitch=%d&q=baseline&sort=speedup"} {
		out = append(out, fmt.Sprintf(q, f.secret.ID))
	}
	// The per-shape history of the variants the hidden runs measured.
	for _, r := range []*runner.Run{f.measured, f.imported, f.suspect} {
		q := url.Values{"problem": {r.Problem}, "variant": {r.Variant}}.Encode()
		out = append(out, "/runs/history?"+q, "/api/runs/history?"+q)
	}
	// Every run compared side by side (at most 12 at once).
	for i := 0; i < len(f.runIDs); i += 12 {
		var ids []string
		for _, id := range f.runIDs[i:min(i+12, len(f.runIDs))] {
			ids = append(ids, fmt.Sprint(id))
		}
		if len(ids) == 1 {
			ids = append(ids, fmt.Sprint(f.runIDs[0]))
		}
		q := strings.Join(ids, ",")
		out = append(out, "/runs/compare?ids="+q, "/api/runs/compare?ids="+q)
	}
	sort.Strings(out)
	return out
}

// walk fetches every URL as login (session cookie for pages, token for the
// API; event streams read until a short deadline) and returns the bodies.
func (f *blindFixture) walk(t *testing.T, urls []string, login string) map[string]string {
	t.Helper()
	b := f.a.browser().login(login)
	bodies := map[string]string{}
	for _, u := range urls {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.a.srv.URL+u, nil)
		if err != nil {
			t.Fatal(err)
		}
		client := b.c
		if strings.HasPrefix(u, "/api/") {
			req.Header.Set("Authorization", "Bearer "+f.a.tokens[login])
			client = http.DefaultClient
		}
		res, err := client.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("GET %s as %s: %v", u, login, err)
		}
		// A live run's event stream does not end: read it for 400 ms from
		// its headers (what came is what counts). The headers themselves
		// get the request's 10 s, since a loaded machine (CI, go test ./...
		// in parallel) took longer than 400 ms to send them.
		if strings.HasSuffix(u, "/events") {
			time.AfterFunc(400*time.Millisecond, func() { res.Body.Close() })
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if res.StatusCode >= 500 {
			t.Fatalf("GET %s as %s: status %d: %s", u, login, res.StatusCode, body)
		}
		bodies[u] = string(body)
	}
	return bodies
}

// TestBlindJudgingWalk visits every GET route of the router as a shark who
// has not scored a pitch with a distinctive result (and as another
// contestant and a viewer), and finds none of its figures anywhere; the
// same walk as an admin finds each of them, so the figures are really there
// to leak.
func TestBlindJudgingWalk(t *testing.T) {
	start := time.Now()
	f := newBlindFixture(t)
	routes := newServer(Config{Runner: f.rn}, f.a.db).routes()
	urls := f.urls(t, routes)
	if len(urls) < 60 {
		t.Fatalf("the walk found only %d URLs: %v", len(urls), urls)
	}

	t.Logf("walking %d URLs", len(urls))
	admin := f.walk(t, urls, "admin")
	for _, fig := range hiddenFigures {
		found := false
		for _, body := range admin {
			if strings.Contains(body, fig) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the admin's walk never shows %q: the figure list does not match what the app prints", fig)
		}
	}
	// The paths that leaked before, as the admin sees them.
	for u, want := range map[string]string{
		fmt.Sprintf("/api/runs/%d", f.measured.ID):       "inverse 0.13663",               // stderr
		fmt.Sprintf("/api/runs/%d/events", f.running.ID): `"median_us":123.457`,           // live progress
		fmt.Sprintf("/runs/%d", f.openRun.ID):            "#" + fmt.Sprint(f.imported.ID), // Secret's import in Open's history chart
		fmt.Sprintf("/api/runs/%d", f.suspect.ID):        "checked by hand",
	} {
		if !strings.Contains(admin[u], want) {
			t.Errorf("admin: %s does not contain %q:\n%s", u, want, admin[u])
		}
	}

	// The shark who has not scored Secret, and the others the rule hides
	// it from while the round is open: another contestant, a viewer.
	var shark map[string]string
	for _, login := range []string{"oracle", "bob", "vera"} {
		bodies := f.walk(t, urls, login)
		if login == "oracle" {
			shark = bodies
		}
		for _, u := range urls {
			// Timestamps are not figures: "15:13:10.136683815Z" holds
			// "0.1366" by chance, and the check failed on it once.
			body := timestamps.ReplaceAllString(bodies[u], "<time>")
			for _, fig := range hiddenFigures {
				if i := strings.Index(body, fig); i >= 0 {
					lo, hi := max(0, i-120), min(len(body), i+120)
					t.Errorf("%s sees Secret's %q at %s: …%s…", login, fig, u, body[lo:hi])
				}
			}
		}
	}
	// Open's result stays visible to oracle, who scored it: the walk does
	// not pass by hiding everything.
	wantContains(t, shark[fmt.Sprintf("/runs/%d", f.openRun.ID)], "1.0512")
	wantNotContains(t, shark[fmt.Sprintf("/runs/%d", f.openRun.ID)], "#"+fmt.Sprint(f.imported.ID)+" ")
	wantContains(t, shark[fmt.Sprintf("/api/runs/%d", f.measured.ID)], `"result_hidden": true`)

	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the walk took %v; keep it under 10s", d)
	}
}

// The other roles of the rule: the pitch's contestant sees her results,
// another contestant and a viewer do not while the round is open, and
// everyone does once it is closed.
func TestBlindJudgingRoles(t *testing.T) {
	f := newBlindFixture(t)
	runURL := fmt.Sprintf("/api/runs/%d", f.measured.ID)
	for login, visible := range map[string]bool{"alice": true, "pragmatist": true, "admin": true, "bob": false, "vera": false, "oracle": false} {
		body := f.a.api("GET", runURL, login, nil).wantStatus(t, http.StatusOK).body
		if got := jsonNumber(body, `7\.3191\d*`) != ""; got != visible {
			t.Errorf("%s sees the result: %v, want %v", login, got, visible)
		}
	}
	// The live run of a pitch must end before its round closes (its result
	// would otherwise change afterwards); its requester may no longer stop
	// it once it measures, an admin may.
	cancel := fmt.Sprintf("/api/runs/%d/cancel", f.running.ID)
	closeRound := map[string]string{"status": "closed"}
	r := f.a.api("POST", "/api/rounds/1/status", "admin", closeRound)
	r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "status")
	wantContains(t, r.body, fmt.Sprintf("run %d of its pitches queued or running", f.running.ID))
	f.a.api("POST", cancel, "alice", nil).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	f.a.api("POST", cancel, "admin", nil).wantStatus(t, http.StatusOK)
	f.a.api("POST", "/api/rounds/1/status", "admin", closeRound).wantStatus(t, http.StatusOK)
	// Closed: nobody starts, repeats or accepts a run of its pitches.
	f.a.api("POST", "/api/runs", "admin", map[string]any{"pitch": f.secret.ID, "device": "0"}).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch")
	f.a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", f.running.ID), "admin", nil).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch")
	for _, login := range []string{"bob", "vera", "oracle"} {
		wantContains(t, f.a.api("GET", runURL, login, nil).wantStatus(t, http.StatusOK).body, "7.3191")
	}
}

// A run's outcome is itself derived from its result: a shark who has not
// scored the pitch sees succeeded, incorrect and suspect runs as
// "measured", and a list filtered by one of those statuses leaves the
// hidden runs out (else ?status=suspect would tell the outcome); the pitch's
// contestant sees the real statuses.
func TestBlindJudgingHidesTheOutcome(t *testing.T) {
	f := newBlindFixture(t)
	for run, status := range map[*runner.Run]string{f.measured: "succeeded", f.suspect: "suspect", f.incorrect: "incorrect"} {
		url := fmt.Sprintf("/api/runs/%d", run.ID)
		wantContains(t, f.a.api("GET", url, "oracle", nil).wantStatus(t, http.StatusOK).body, `"status": "measured"`)
		wantContains(t, f.a.api("GET", url, "alice", nil).wantStatus(t, http.StatusOK).body, `"status": "`+status+`"`)
	}
	for _, st := range []string{"suspect", "incorrect", "succeeded"} {
		body := f.a.api("GET", "/api/runs?status="+st, "oracle", nil).wantStatus(t, http.StatusOK).body
		for _, id := range []int64{f.measured.ID, f.suspect.ID, f.incorrect.ID} {
			if strings.Contains(body, fmt.Sprintf(`"id": %d,`, id)) {
				t.Errorf("oracle's ?status=%s lists hidden run %d: %s", st, id, body)
			}
		}
		page := f.a.browser().login("oracle").get("/runs?status="+st).wantStatus(t, http.StatusOK).body
		if strings.Contains(page, fmt.Sprintf("/runs/%d\"", f.suspect.ID)) && st == "suspect" {
			t.Errorf("oracle's /runs?status=suspect page lists the hidden suspect run")
		}
	}
	body := f.a.api("GET", "/api/runs?status=suspect", "alice", nil).wantStatus(t, http.StatusOK).body
	wantContains(t, body, fmt.Sprintf(`"id": %d,`, f.suspect.ID))
}
