package httpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// axeSource is axe-core's axe.min.js: PITCHTANK_AXE_JS names it (.ci/run
// installs a pinned axe-core with npm and sets it), else node_modules at the
// module root. Missing: skipped with the reason, or failed when
// PITCHTANK_REQUIRE_BROWSER=1 (CI), like a missing browser.
func axeSource(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("PITCHTANK_AXE_JS"), filepath.Join("..", "..", "node_modules", "axe-core", "axe.min.js")}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	msg := "axe-core not found: set PITCHTANK_AXE_JS to axe.min.js (npm install axe-core; .ci/run does it)"
	if os.Getenv("PITCHTANK_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// a11yPages are the pages of the demo each role visits: every page of the
// app a person reaches from the nav and the round, pitch and run pages.
var a11yPages = []string{
	"/", "/rounds", "/rounds/1", "/rounds/2", "/rounds/5", "/rounds/6",
	"/pitches/1", "/pitches/9", "/pitches/10", "/pitches/new?round=5", "/runs", "/runs/1", "/calibration",
	"/tokens", "/account", "/admin/rounds", "/admin/users", "/login",
	"/pitches", "/runs?sort=speedup&dir=desc", "/runs/history?problem=nvfp4_group_gemm&variant=baseline%3Fstages%3D3",
	"/runs/devices?problem=nvfp4_group_gemm&variant=baseline%3Fstages%3D3",
	"/runs/compare?ids=1,2", "/admin/audit", "/admin/webhooks", "/admin/regressions",
	"/regressions",
}

// TestPagesAccessibleAndFitting runs axe-core on every page for every role
// (admin, shark, contestant, viewer, anonymous) and fails on any serious or
// critical violation; at 390 px wide no page scrolls sideways, and at
// 1280 px no table in a page's main content hides a column (its scroll box
// is as wide as the table).
func TestPagesAccessibleAndFitting(t *testing.T) {
	axe := axeSource(t)
	ctx, cancel := newBrowserFor(t, 8*time.Minute)
	defer cancel()

	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.BcryptCost = bcrypt.MinCost
	if _, err := demo.Load(context.Background(), db); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	seedAlerts(t, db)
	rn, err := runner.New(runner.Config{Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Runner: rn, PublicClosedRounds: true}, db)
	if err != nil {
		t.Fatal(err)
	}
	app := newTestServer(t, h)

	// The check can fail: axe finds a low-contrast paragraph put on the
	// login page (set through the CSSOM, which the CSP allows).
	if err := chromedp.Do(ctx, chromedp.Navigate(app.URL+"/login"), chromedp.WaitReady(`body`)); err != nil {
		t.Fatalf("browser: %v", err)
	}
	probe, err := chromedp.Run(ctx, chromedp.Evaluate[string](axe+`;
		(() => { const p = document.createElement("p"); p.textContent = "faint text"; p.style.color = "#aaa"; p.style.background = "#bbb";
		  document.querySelector("main").appendChild(p);
		  return axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => v.id + ":" + v.impact).join(" ")); })()`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(probe, "color-contrast:serious") {
		t.Fatalf("axe self-check: a low-contrast paragraph gave %q (%v), want color-contrast:serious", probe, err)
	}

	passwords := map[string]string{}
	for _, l := range demo.Logins {
		passwords[l.Login] = l.Password
	}
	var problems []string
	visited := 0
	for _, role := range []string{"admin", "oracle", "contestant1", "viewer", ""} {
		who := role
		if who == "" {
			who = "anonymous"
		}
		// A fresh session per role: log the previous one out (its form).
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(app.URL+"/login"), chromedp.WaitReady(`body`)); err != nil {
			t.Fatalf("browser: %v", err)
		}
		if out, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const f = document.querySelector('form[action="/logout"]'); if (f) f.submit(); return !!f; })()`)); out {
			if err := chromedp.Do(ctx, chromedp.WaitVisible(`input[name=login]`)); err != nil {
				t.Fatalf("log out: %v", err)
			}
		}
		if role != "" {
			if err := chromedp.Do(ctx,
				chromedp.Navigate(app.URL+"/login"),
				chromedp.WaitVisible(`input[name=login]`),
				chromedp.SendKeys(`input[name=login]`, role),
				chromedp.SendKeys(`input[name=password]`, passwords[role]),
				chromedp.Click(`form[action="/login"] button[type=submit]`),
				// Logged in: the next page has the log-out form (the
				// login page has a <main> too).
				chromedp.WaitVisible(`form[action="/logout"]`),
			); err != nil {
				t.Fatalf("log in as %s: %v", role, err)
			}
		}
		for _, page := range a11yPages {
			url := app.URL + page
			// 1280 px: axe, and the tables' last columns.
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitReady(`body`)); err != nil {
				t.Fatalf("%s %s: %v", who, page, err)
			}
			visited++
			res, err := chromedp.Run(ctx, chromedp.Evaluate[string](axe+`;
				typeof axe.run !== "function" ? "axe-core did not load" : axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
					.filter(v => v.impact === "serious" || v.impact === "critical")
					.map(v => v.id + " (" + v.impact + "): " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | "))
					.join("\n"))`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("axe on %s as %s: %v", page, who, err)
			}
			if res != "" {
				problems = append(problems, fmt.Sprintf("%s as %s (1280 px), axe:\n%s", page, who, res))
			}
			clipped, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("main table"))
				.filter(t => t.offsetParent !== null)
				.map(t => {
					const box = t.closest(".table-scroll") || t.parentElement;
					return box.scrollWidth > box.clientWidth + 1
						? (t.className || "table") + ": " + box.scrollWidth + " px wide in " + box.clientWidth + " px" : "";
				}).filter(Boolean).join("; ")`))
			if err != nil {
				t.Fatalf("tables on %s: %v", page, err)
			}
			// A checkbox sits beside its label's text, on one line.
			checks, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("label.check")).filter(l => l.offsetParent !== null)
				.filter(l => { const i = l.querySelector("input").getBoundingClientRect(), r = l.getBoundingClientRect(); return r.height > 2.5 * Math.max(i.height, 14); })
				.map(l => l.textContent.trim()).join(", ")`))
			if err != nil {
				t.Fatalf("checkboxes on %s: %v", page, err)
			}
			if checks != "" {
				problems = append(problems, fmt.Sprintf("%s as %s (1280 px): checkbox not beside its label: %s", page, who, checks))
			}
			if clipped != "" {
				problems = append(problems, fmt.Sprintf("%s as %s (1280 px): a table hides columns: %s", page, who, clipped))
			}
			// 390 px: nothing scrolls sideways.
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(url), chromedp.WaitReady(`body`)); err != nil {
				t.Fatalf("%s %s at 390 px: %v", who, page, err)
			}
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
				const s = document.scrollingElement;
				if (s.scrollWidth <= s.clientWidth) return "";
				const over = Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > s.clientWidth + 1 && !e.closest(".table-scroll, .chart-wrap"))
					.slice(0, 4).map(e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ").join(".") : "") + " " + Math.round(e.getBoundingClientRect().right) + "px");
				return s.scrollWidth + " px wide in " + s.clientWidth + " px; widest: " + over.join(", ");
			})()`))
			if err != nil {
				t.Fatalf("width of %s: %v", page, err)
			}
			if wide != "" {
				problems = append(problems, fmt.Sprintf("%s as %s (390 px) scrolls sideways: %s", page, who, wide))
			}
			// Scorecard note fields take the form's width on a phone.
			narrow, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('form[data-score-form] input[name^="note_"]'))
				.filter(i => i.getBoundingClientRect().width < 0.8 * i.form.getBoundingClientRect().width)
				.map(i => i.name + " " + Math.round(i.getBoundingClientRect().width) + " px of " + Math.round(i.form.getBoundingClientRect().width)).join(", ")`))
			if err != nil {
				t.Fatalf("note fields on %s: %v", page, err)
			}
			if narrow != "" {
				problems = append(problems, fmt.Sprintf("%s as %s (390 px): scorecard note fields not full width: %s", page, who, narrow))
			}
		}
	}
	t.Logf("checked %d pages", visited)
	if len(problems) > 0 {
		t.Fatalf("%d problems:\n%s", len(problems), strings.Join(problems, "\n\n"))
	}
}

// seedAlerts gives the demo a threshold and two alerts, one dismissed, so
// that /regressions shows its lists and the admins' dismiss and restore
// forms (the demo raises none).
func seedAlerts(t *testing.T, db *sqlite.DB) {
	t.Helper()
	ctx := context.Background()
	admin, err := db.UserByLogin(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	th, err := db.AddThreshold(ctx, tracking.Threshold{Problem: "nvfp4_group_gemm", Variant: "baseline", BaselineRun: 1, Percent: 5, CreatedBy: admin.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []int64{2, 3} {
		a, err := db.AddAlert(ctx, tracking.Alert{RunID: run, ThresholdID: th.ID, BaselineRun: 1, Percent: 5, Scope: th.Scope(),
			Shapes: []tracking.ShapeRegression{}, Summary: fmt.Sprintf("run #%d is more than 5%% slower than baseline run #1", run), CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if run == 3 {
			if _, _, err := db.DismissAlert(ctx, a.ID, admin.ID, "a noisy machine"); err != nil {
				t.Fatal(err)
			}
		}
	}
}
