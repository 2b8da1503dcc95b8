package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// findChromium returns a headless-capable browser, or skips (fails when
// PITCHTANK_REQUIRE_BROWSER=1, as in CI, where a missing browser is a bug).
// The browser tests start Chromium for some twenty walks and take about a
// minute of CPU, too slow for the README's go test ./... (under 2 minutes on
// 2 cores): they run where asked, PITCHTANK_BROWSER=1 or CI's
// PITCHTANK_REQUIRE_BROWSER=1.
func findChromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("PITCHTANK_REQUIRE_BROWSER") != "1" && os.Getenv("PITCHTANK_BROWSER") != "1" {
		t.Skip("browser tests run with PITCHTANK_BROWSER=1 (.ci/run sets PITCHTANK_REQUIRE_BROWSER=1, which also fails them without a browser)")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium in PATH (Debian: apt-get install chromium); the browser test needs a real browser"
	if os.Getenv("PITCHTANK_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func newBrowser(t *testing.T) (context.Context, context.CancelFunc) {
	t.Helper()
	return newBrowserFor(t, 90*time.Second)
}

// newBrowserFor is newBrowser with the whole session's time limit given
// (the accessibility walk visits some eighty pages).
func newBrowserFor(t *testing.T, limit time.Duration) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(findChromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, limit)
	return ctx, func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
}

// TestBrowserEndToEnd drives the real app in headless Chromium over the demo
// tournament: the Oracle logs in, scores a round-5 pitch (checking the live
// total the page's script computes), votes, and sees the standings change.
// On the way, a page on another origin tries to vote on the Oracle's behalf
// and must change nothing.
func TestBrowserEndToEnd(t *testing.T) {
	ctx, cancel := newBrowser(t)
	defer cancel()

	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	defer db.Close()
	db.BcryptCost = bcrypt.MinCost
	if _, err := demo.Load(context.Background(), db); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	h, err := New(Config{}, db)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	app := httptest.NewServer(h)
	defer app.Close()

	ps, err := db.Pitches(context.Background(), 5)
	if err != nil || len(ps) < 3 {
		t.Fatalf("round 5 pitches: %v %v", ps, err)
	}
	target, other := ps[0], ps[2] // wild card A gets scored; C is the forger's choice
	users, _ := db.Users(context.Background())
	var oracle *pitches.User
	for i := range users {
		if users[i].Login == "oracle" {
			oracle = &users[i]
		}
	}

	// The other origin: a page that auto-submits a vote form to the app.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body><form id="f" method="post" action="%s/rounds/5/vote">
<input name="pitch" value="%d"><input name="justification" value="forged"></form>
<script>document.getElementById("f").submit()</script></body>`, app.URL, other.ID)
	}))
	defer evil.Close()

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
		chromedp.Navigate(app.URL+"/login"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "oracle"),
		chromedp.SendKeys(`input[name=password]`, "demo-oracle"),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(`section.hero`),
		chromedp.Navigate(app.URL+"/rounds/5"),
		chromedp.WaitVisible(`#standings`),
	)
	standingsBefore := text(`#standings`)
	if !strings.Contains(standingsBefore, "hidden until you score it") {
		t.Fatalf("before scoring, standings should hide unscored rows:\n%s", standingsBefore)
	}

	// Cross-origin forgery attempt, with the Oracle's cookies in the jar.
	// The forged post lands on the app's refusal page, which (unlike the
	// other origin's page) has a <main>.
	do("visit the other origin", chromedp.Navigate(evil.URL), chromedp.WaitVisible(`main`))
	evilBody := text(`body`)
	if votes, _ := db.VisibleVotes(context.Background(), oracle, 5); hasVoteBy(votes, oracle.ID) {
		t.Fatalf("cross-origin form post cast a vote: %+v (page said %q)", votes, evilBody)
	}
	if !strings.Contains(evilBody, "cross-origin request refused") {
		t.Errorf("forged post landed on %q, want the refusal page", evilBody)
	}

	setScores := `(() => {
	  const v = {speedup: "7", feasibility: "9", risk: "8", pitch_quality: "8"};
	  for (const [k, x] of Object.entries(v)) {
	    const s = document.getElementById("score_" + k);
	    s.value = x;
	    s.dispatchEvent(new Event("change", {bubbles: true}));
	  }
	  return true;
	})()`
	do("open the pitch", chromedp.Navigate(fmt.Sprintf("%s/pitches/%d", app.URL, target.ID)), chromedp.WaitVisible(`form[data-score-form]`))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](setScores)); err != nil {
		t.Fatalf("browser: pick scores: %v", err)
	}
	if live := text(`[data-live-total]`); live != "7.85" {
		t.Errorf("live total = %q, want 7.85 (40/25/20/15 over 7/9/8/8)", live)
	}
	do("submit the scorecard",
		chromedp.SendKeys(`form[data-score-form] input[name=lo]`, "1.1"),
		chromedp.SendKeys(`form[data-score-form] input[name=hi]`, "2.4"),
		chromedp.SendKeys(`form[data-score-form] input[name=verdict]`, "CONDITIONAL"),
		chromedp.SendKeys(`input[name=note_speedup]`, "Triton has no native FP4"),
		chromedp.Click(`form[data-score-form] button[type=submit]`),
		chromedp.WaitVisible(`.flash`),
	)
	if flash := text(`.flash`); !strings.Contains(flash, "Scorecard saved") {
		t.Fatalf("after scoring, flash = %q", flash)
	}
	if cards := text(`.cards`); !strings.Contains(cards, "total 7.85") || !strings.Contains(cards, "Triton has no native FP4") {
		t.Errorf("scorecards after submit:\n%s", cards)
	}

	do("vote",
		chromedp.SendKeys(`#vote textarea[name=justification]`, "The cheapest hypothesis to test."),
		chromedp.Click(`#vote button[type=submit]`),
		chromedp.WaitVisible(`#standings`),
	)
	if flash := text(`.flash`); !strings.Contains(flash, "Vote recorded") {
		t.Errorf("after voting, flash = %q", flash)
	}
	standingsAfter := text(`#standings`)
	row := rowOf(standingsAfter, target.Title)
	if !strings.Contains(row, "7.85") || strings.Contains(row, "hidden") {
		t.Fatalf("standings row of %q after scoring and voting = %q\nwhole table:\n%s", target.Title, row, standingsAfter)
	}
	if standingsAfter == standingsBefore {
		t.Fatalf("standings did not change")
	}
	votes, err := db.VisibleVotes(context.Background(), oracle, 5)
	if err != nil || !hasVoteBy(votes, oracle.ID) {
		t.Fatalf("oracle's vote not stored: %+v %v", votes, err)
	}

	// PITCHTANK_SCREENSHOT_DIR=docs go test -run TestBrowserEndToEnd
	// ./internal/httpserver writes screenshot.png (round 2, closed, as the
	// Oracle sees it; the README's picture) and a few more pages to look at.
	if dir := os.Getenv("PITCHTANK_SCREENSHOT_DIR"); dir != "" {
		screenshot(t, ctx, app.URL+"/rounds/2", filepath.Join(dir, "screenshot.png"))
		screenshot(t, ctx, app.URL+"/", filepath.Join(dir, "screenshot-home.png"))
		r1, _ := db.Pitches(context.Background(), 1)
		if len(r1) > 0 {
			screenshot(t, ctx, fmt.Sprintf("%s/pitches/%d", app.URL, r1[0].ID), filepath.Join(dir, "screenshot-pitch.png"))
		}
		screenshot(t, ctx, fmt.Sprintf("%s/pitches/%d", app.URL, ps[1].ID), filepath.Join(dir, "screenshot-score.png"))
	}
}

func hasVoteBy(votes []pitches.Vote, id int64) bool {
	for _, v := range votes {
		if v.SharkID == id {
			return true
		}
	}
	return false
}

// rowOf returns the line of the standings text that names title.
func rowOf(table, title string) string {
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, title) {
			return line
		}
	}
	return ""
}

// screenshot saves a 1280x900 picture of url (used for docs/screenshot.png).
func screenshot(t *testing.T, ctx context.Context, url, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitVisible(`footer`)); err != nil {
		t.Fatalf("screenshot %s: %v", url, err)
	}
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", url, err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
}
