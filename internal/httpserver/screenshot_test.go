package httpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// TestREADMEScreenshot writes the README's screenshot (docs/screenshot.png):
// round 2 of the demo as the viewer sees it, at 1280 px, in headless
// Chromium. It runs only when asked:
//
//	PITCHTANK_SCREENSHOT=$PWD/docs/screenshot.png go test ./internal/httpserver -run TestREADMEScreenshot
func TestREADMEScreenshot(t *testing.T) {
	out := os.Getenv("PITCHTANK_SCREENSHOT")
	if out == "" {
		t.Skip("set PITCHTANK_SCREENSHOT=/path/to/docs/screenshot.png to regenerate the README screenshot")
	}
	ctx, cancel := newBrowser(t)
	defer cancel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.BcryptCost = bcrypt.MinCost
	if _, err := demo.Load(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	rn, err := runner.New(runner.Config{Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Runner: rn}, db)
	if err != nil {
		t.Fatal(err)
	}
	app := newTestServer(t, h)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 1100),
		chromedp.Navigate(app.URL+"/login"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "viewer"),
		chromedp.SendKeys(`input[name=password]`, "demo-viewer"),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(`form[action="/logout"]`),
		chromedp.Navigate(app.URL+"/rounds/2"),
		chromedp.WaitVisible(`#standings`),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(png))
}
