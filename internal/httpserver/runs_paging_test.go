package httpserver

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// enqueueRuns stores n queued runs on a device no worker serves.
func enqueueRuns(t *testing.T, a *app, n int) []int64 {
	t.Helper()
	var ids []int64
	for range n {
		run, err := a.db.Enqueue(context.Background(), runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "baseline", Baseline: "baseline", Device: "9"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	return ids
}

// GET /api/runs pages with a Link rel="next" while a page is full; walking
// the links lists every run once, newest first, and the last page has none.
func TestAPIRunsPaging(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ids := enqueueRuns(t, a, 7)
	var seen []int64
	path := "/api/runs?limit=3&device=9"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("the next links do not end")
		}
		res := a.api("GET", path, "vera", nil).wantStatus(t, http.StatusOK)
		var page []runJSON
		res.decode(t, &page)
		for _, r := range page {
			seen = append(seen, r.ID)
		}
		path = ""
		if l := res.header.Get("Link"); l != "" {
			m := nextLink.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("Link header %q", l)
			}
			path = m[1]
			if !strings.Contains(path, "device=9") || !strings.Contains(path, "limit=3") {
				t.Fatalf("next link %q drops the filter", path)
			}
		} else if len(page) == 3 && len(seen) < len(ids) {
			t.Fatalf("a full page (%v) without a next link", page)
		}
	}
	if len(seen) != len(ids) {
		t.Fatalf("walking the pages listed %v, want the %d runs %v", seen, len(ids), ids)
	}
	for i, id := range seen {
		if id != ids[len(ids)-1-i] {
			t.Fatalf("pages listed %v, want newest first %v", seen, ids)
		}
	}
	// Without a limit a page is 100 runs: 7 fit, no link.
	if l := a.api("GET", "/api/runs", "vera", nil).wantStatus(t, http.StatusOK).header.Get("Link"); l != "" {
		t.Fatalf("a page with every run has Link %q", l)
	}
}

// The /runs page lists 50 runs and links the older ones; the older page
// lists the rest and links nothing.
func TestRunsPagePaging(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ids := enqueueRuns(t, a, 53)
	b := a.browser().login("vera")
	first := b.get("/runs").wantStatus(t, http.StatusOK).body
	older := `href="/runs?before=` + strconv.FormatInt(ids[3], 10) + `"`
	wantContains(t, first, older, `href="/runs/`+strconv.FormatInt(ids[52], 10)+`"`, `href="/runs/`+strconv.FormatInt(ids[3], 10)+`"`)
	wantNotContains(t, first, `href="/runs/`+strconv.FormatInt(ids[2], 10)+`"`)
	rest := b.get("/runs?before="+strconv.FormatInt(ids[3], 10)).wantStatus(t, http.StatusOK).body
	for _, id := range ids[:3] {
		wantContains(t, rest, `href="/runs/`+strconv.FormatInt(id, 10)+`"`)
	}
	wantNotContains(t, rest, "Older runs", `href="/runs/`+strconv.FormatInt(ids[3], 10)+`"`)
}
