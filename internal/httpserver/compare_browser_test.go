package httpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// The compare page in headless Chromium: an admin ticks three runs on
// /runs, presses "Compare selected runs", and lands on the permalink with
// the per-shape table, the chart, the ratio against the reference and an
// import from another device named not comparable. A shark who has not
// scored the pitch of one of them sees that run without figures.
func TestBrowserCompareRuns(t *testing.T) {
	ctx, cancel := newBrowser(t)
	defer cancel()
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	// Runs under no pitch come before the pitch of their variant (pitches.CheckBlindRun).
	r1 := importOn(t, a, 0, "B200", [3]float64{0, 400, 300})
	r2 := importOn(t, a, 0, "B200", [3]float64{0, 400, 250})
	r3 := importOn(t, a, 0, "H100", [3]float64{0, 500, 450})
	p := a.pitch("alice", 1, "Three stages")
	hidden := importOn(t, a, p.ID, "B200", [3]float64{0, 400, 123.4567})

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
	login := func(who string) {
		t.Helper()
		do("log in as "+who,
			chromedp.Navigate(a.srv.URL+"/login"),
			chromedp.WaitVisible(`input[name=login]`),
			chromedp.SendKeys(`input[name=login]`, who),
			chromedp.SendKeys(`input[name=password]`, testPassword),
			chromedp.Click(`form[action="/login"] button[type=submit]`),
			chromedp.WaitVisible(`section.hero`),
		)
	}
	login("admin")
	do("open the runs page", chromedp.Navigate(a.srv.URL+"/runs"), chromedp.WaitVisible(`form[data-compare-form]`))
	for _, id := range []int64{r1.ID, r2.ID, r3.ID} {
		do(fmt.Sprintf("tick run %d", id), chromedp.Click(fmt.Sprintf(`form[data-compare-form] input[name=ids][value="%d"]`, id)))
	}
	do("compare", chromedp.Click(`form[data-compare-form] button[type=submit]`), chromedp.WaitVisible(`table[data-compare-shapes]`))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "/runs/compare?") {
		t.Fatalf("after pressing compare: %q %v", loc, err)
	}
	permalink := text(`[data-permalink]`)
	if want := fmt.Sprintf("/runs/compare?ids=%d,%d,%d", r1.ID, r2.ID, r3.ID); permalink != want {
		t.Errorf("permalink %q, want %q", permalink, want)
	}
	if note := text(fmt.Sprintf(`tr[data-compare-run="%d"] [data-comparable]`, r3.ID)); !strings.HasPrefix(note, "not comparable: different device") {
		t.Errorf("the H100 import against the B200 reference: %q", note)
	}
	if got := text(`table[data-compare-shapes] [data-vs-reference]`); !strings.Contains(got, "1.2000x") {
		t.Errorf("run %d against the reference: %q (want 300/250 = 1.2000x)", r2.ID, got)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg[data-compare-chart] rect[class^=series-]").length`))
	if err != nil || bars < 3 {
		t.Errorf("chart bars: %d %v", bars, err)
	}

	// The shark opens the permalink with the hidden run in it.
	do("log out", chromedp.Click(`form[action="/logout"] button`), chromedp.WaitVisible(`input[name=login]`))
	login("oracle")
	do("open the comparison", chromedp.Navigate(fmt.Sprintf("%s/runs/compare?ids=%d,%d", a.srv.URL, r1.ID, hidden.ID)),
		chromedp.WaitVisible(`table[data-compare-runs]`))
	if note := text(fmt.Sprintf(`tr[data-compare-run="%d"]`, hidden.ID)); !strings.Contains(note, "results hidden") || strings.Contains(note, "3.24") {
		t.Errorf("hidden run's row for the shark: %q", note)
	}
	if body := text(`main`); strings.Contains(body, "123.46") || strings.Contains(body, "3.24") {
		t.Errorf("the hidden run's figures reach the shark:\n%s", body)
	}
}
