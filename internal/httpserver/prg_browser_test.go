package httpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// A refused form leaves no POST in the browser's history: after a wrong
// password, reloading (as Back then Forward would) fetches the login page
// with GET instead of posting the form again; the page shows no error and
// the server counts one failure, not two.
func TestRefusedFormReloadDoesNotResubmit(t *testing.T) {
	ctx, cancel := newBrowserFor(t, 2*time.Minute)
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
	h, err := New(Config{}, db)
	if err != nil {
		t.Fatal(err)
	}
	app := newTestServer(t, h)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/login?next=%2Frounds%2F5"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "oracle"),
		chromedp.SendKeys(`input[name=password]`, "not the password"),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(`.form-error`),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/login?next=%2Frounds%2F5") {
		t.Fatalf("after the refused post the address is %q (%v), want the form's GET address", loc, err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(`input[name=login]`)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	errs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".form-error").length`))
	if err != nil || errs != 0 {
		t.Fatalf("reloading re-posted the refused form (%d errors shown, %v)", errs, err)
	}
}
