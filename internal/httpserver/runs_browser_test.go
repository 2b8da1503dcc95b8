package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// The runs form in headless Chromium: an admin queues the CPU reference on
// the test shapes, the run page follows the server-sent events (the page's
// script) until "succeeded" and then shows the per-shape table.
func TestBrowserRunsFormToSucceeded(t *testing.T) {
	if testing.Short() {
		t.Skip("the CPU bench takes about 20 s; skipped with -short")
	}
	ctx, cancel := newBrowser(t)
	defer cancel()
	bin := webBinary(t)
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}, Command: runner.BenchCommand(bin, 5*time.Minute)}, true)

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browser: %s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("browser: text of %s: %v", sel, err)
		}
		return s
	}
	do("log in",
		chromedp.Navigate(a.srv.URL+"/login"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "admin"),
		chromedp.SendKeys(`input[name=password]`, testPassword),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(`section.hero`),
	)
	fill := `(() => {
	  const f = document.querySelector("form[data-run-form]");
	  f.problem.value = "nvfp4_group_gemm";
	  f.variant.value = "reference";
	  f.baseline.value = "reference";
	  f.suite.value = "tests";
	  f.device.value = "cpu";
	  return true;
	})()`
	do("open the runs page", chromedp.Navigate(a.srv.URL+"/runs"), chromedp.WaitVisible(`form[data-run-form]`))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fill)); err != nil {
		t.Fatalf("browser: fill the form: %v", err)
	}
	do("queue the run",
		chromedp.Click(`form[data-run-form] button[type=submit]`),
		chromedp.WaitVisible(`[data-run]`),
	)
	if flash := text(`.flash`); !strings.Contains(flash, "Run queued") {
		t.Errorf("flash after queueing: %q", flash)
	}
	// The page follows the run and reloads itself with the result.
	do("wait for the result", chromedp.WaitVisible(`table[data-shapes]`))
	if st := text(`section.hero .eyebrow`); !strings.Contains(strings.ToLower(st), "succeeded") {
		t.Fatalf("status on the page: %q", st)
	}
	table := text(`table[data-shapes]`)
	runs, err := a.db.List(context.Background(), runner.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("stored runs: %v %v", runs, err)
	}
	run, err := a.db.Get(context.Background(), runs[0].ID)
	if err != nil || run.Status != runner.StatusSucceeded || len(run.Shapes) == 0 {
		t.Fatalf("stored run: %+v %v", run, err)
	}
	for _, s := range run.Shapes {
		if !strings.Contains(table, s.Label) {
			t.Errorf("shape %q missing from the page's table:\n%s", s.Label, table)
		}
	}
}

// The pitch page's run button: for the pitch's contestant, sharks and
// admins; not for a viewer; it queues the pitch's variant against the
// round's baseline.
func TestPitchRunButton(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"0", "cpu"}}, false)
	if _, err := a.db.CreateRound(context.Background(), a.users["admin"], pitches.RoundInput{Number: 1, Title: "R1", Baseline: "baseline", Criteria: rubric,
		Measurement: &pitches.RoundMeasurement{Problem: "nvfp4_dual_gemm", Suite: "tests"}}); err != nil {
		t.Fatal(err)
	}
	p, err := a.db.FilePitch(context.Background(), a.users["alice"], pitches.PitchInput{RoundNumber: 1, Title: "Three stages",
		Claim: pitches.Range{Lo: 1.5, Hi: 1.8}, Variant: "baseline?stages=3"})
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/pitches/%d", p.ID)
	for login, want := range map[string]bool{"alice": true, "oracle": true, "admin": true, "vera": false, "bob": false} {
		body := a.browser().login(login).get(path).wantStatus(t, http.StatusOK).body
		if got := strings.Contains(body, "data-run-pitch"); got != want {
			t.Errorf("%s sees the run button: %v, want %v", login, got, want)
		}
	}
	b := a.browser().login("alice")
	r := b.post(path+"/runs", map[string][]string{"device": {"0"}, "suite": {"tests"}})
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/runs/") {
		t.Fatalf("run from the pitch page: %d %v %s", r.status, r.header, r.body)
	}
	runs, _ := a.db.List(context.Background(), runner.Filter{PitchID: p.ID})
	// The round's measurement decides problem and suite: the form picks the device.
	if len(runs) != 1 || runs[0].Variant != "baseline?stages=3" || runs[0].Baseline != "baseline" || runs[0].Device != "0" ||
		runs[0].Problem != "nvfp4_dual_gemm" || runs[0].Suite != "tests" {
		t.Fatalf("queued %+v", runs)
	}
	page := b.get(r.header.Get("Location")).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "queued", `http-equiv="refresh"`, "data-live", "Cancel run")
	// The cpu device refuses a GPU variant: the pitch page says why.
	r = b.post(path+"/runs", map[string][]string{"device": {"cpu"}, "suite": {"tests"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "cpu device runs only the reference") {
		t.Fatalf("cpu run of a GPU variant: %d", r.status)
	}
}
