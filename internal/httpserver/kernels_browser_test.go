package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A contestant uploads a kernel on the pitch page in headless Chromium,
// lands on the kernel page with the source highlighted and the diff against
// the round's baseline, then replaces it and sees the diff against the
// first version; the pitch's variant names the newest.
func TestBrowserKernelUpload(t *testing.T) {
	ctx, cancel := newBrowser(t)
	defer cancel()
	a, p := kernelApp(t, Config{})
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
	files := exampleFiles(t)
	dir1, dir2 := t.TempDir(), t.TempDir()
	for n, d := range files {
		os.WriteFile(filepath.Join(dir1, n), d, 0o644)
		if n == "clear_gemm.cu" {
			d = bytes.Replace(d, []byte("#define STAGES 2"), []byte("#define STAGES 1 // browser edit"), 1)
		}
		os.WriteFile(filepath.Join(dir2, n), d, 0o644)
	}
	upload := func(dir string) {
		t.Helper()
		do("upload from "+dir,
			chromedp.Navigate(fmt.Sprintf("%s/pitches/%d", a.srv.URL, p.ID)),
			chromedp.WaitVisible(`form.kernel-upload`),
			chromedp.SetUploadFiles(`form.kernel-upload input[name=files]`, []string{filepath.Join(dir, "manifest.json"), filepath.Join(dir, "clear_gemm.cu")}),
			chromedp.Click(`form.kernel-upload button[type=submit]`),
			chromedp.WaitVisible(`.kernel-code`),
		)
	}
	do("log in",
		chromedp.Navigate(a.srv.URL+"/login"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "alice"),
		chromedp.SendKeys(`input[name=password]`, testPassword),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		chromedp.WaitVisible(`section.hero`),
	)
	upload(dir1)
	if f := text(`.flash`); !strings.Contains(f, "Kernel uploaded: version 1") {
		t.Errorf("flash: %q", f)
	}
	// Highlighted: the entry point's name sits in a chroma token span.
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".hl-chroma span[class^=hl-]").length`))
	if err != nil || n < 100 {
		t.Errorf("highlighted tokens: %d (%v)", n, err)
	}
	if src := text(`.kernel-code`); !strings.Contains(src, "clear_gemm(") {
		t.Errorf("source not shown: %.200q", src)
	}
	if d := text(`#diff-baseline`); !strings.Contains(d, "--- gemm.cu") || !strings.Contains(d, "+++ clear_gemm.cu") {
		t.Errorf("baseline diff: %.300q", d)
	}

	upload(dir2)
	if d := text(`#diff-previous .diff-add`); !strings.Contains(d, "#define STAGES 1 // browser edit") {
		t.Errorf("diff against version 1: %q", d)
	}
	if d := text(`#diff-previous .diff-del`); !strings.Contains(d, "#define STAGES 2") {
		t.Errorf("diff against version 1 (removed): %q", d)
	}
	got, err := a.db.Pitch(context.Background(), p.ID)
	vs, _ := a.db.KernelVersions(context.Background(), p.ID)
	if err != nil || len(vs) != 2 || got.Variant != "kernel:"+vs[1].Hash {
		t.Fatalf("pitch variant %q, versions %+v (%v)", got.Variant, vs, err)
	}
}

// The kernel page and the pitch page's upload form pass axe-core (no
// serious or critical violation) and do not scroll sideways at 390 px:
// the source, the diffs and the tables scroll inside their own boxes.
func TestKernelPagesAccessible(t *testing.T) {
	axe := axeSource(t)
	ctx, cancel := newBrowser(t)
	defer cancel()
	a, p := kernelApp(t, Config{})
	files := exampleFiles(t)
	var v1, v2 kernelVersionJSON
	a.api("POST", fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", jsonUpload(files, nil)).wantStatus(t, 201).decode(t, &v1)
	files["clear_gemm.cu"] = bytes.Replace(files["clear_gemm.cu"], []byte("#define STAGES 2"), []byte("#define STAGES 1"), 1)
	a.api("POST", fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", jsonUpload(files, nil)).wantStatus(t, 201).decode(t, &v2)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(a.srv.URL+"/login"),
		chromedp.WaitVisible(`input[name=login]`),
		chromedp.SendKeys(`input[name=login]`, "alice"),
		chromedp.SendKeys(`input[name=password]`, testPassword),
		chromedp.Click(`form[action="/login"] button[type=submit]`),
		// Logged in: the next page has the log-out form. (Waiting for
		// <main> matched the login page itself, and the next Navigate
		// then aborted the redirect still loading: net::ERR_ABORTED.)
		chromedp.WaitVisible(`form[action="/logout"]`),
	); err != nil {
		t.Fatalf("log in: %v", err)
	}
	var problems []string
	for _, page := range []string{fmt.Sprintf("/kernels/%s?pitch=%d&v=2", v2.Hash, p.ID), fmt.Sprintf("/pitches/%d", p.ID), "/pitches/new"} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(a.srv.URL+page), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](axe+`;
			axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
				.filter(v => v.impact === "serious" || v.impact === "critical")
				.map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")).join("\n"))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("axe on %s: %v", page, err)
		}
		if res != "" {
			problems = append(problems, page+": "+res)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(a.srv.URL+page), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const s = document.scrollingElement;
			return s.scrollWidth > s.clientWidth ? s.scrollWidth + " px wide in " + s.clientWidth : ""; })()`))
		if err != nil {
			t.Fatal(err)
		}
		if wide != "" {
			problems = append(problems, page+" at 390 px: "+wide)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}
