package httpserver

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// searchFixture is an app with a measured round 1 and three imported runs
// of variant baseline: free1 (1.33x) and free2 (2x) on no pitch, hidden
// (4x) on a round-1 pitch whose results the shark oracle may not see.
func searchFixture(t *testing.T) (a *app, free1, free2, hidden *runner.Run) {
	t.Helper()
	a, _ = newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	// The free runs come before the pitch of their variant (pitches.CheckBlindRun).
	free1 = importOn(t, a, 0, "B200", [3]float64{0, 400, 300}) // 1.33x
	free2 = importOn(t, a, 0, "B200", [3]float64{0, 400, 200}) // 2x
	p := a.pitch("alice", 1, "Three pipeline stages")
	hidden = importOn(t, a, p.ID, "B200", [3]float64{0, 400, 100}) // 4x, hidden from the shark
	return a, free1, free2, hidden
}

func runIDsOf(rs []runJSON) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// Runs searched and sorted through the API and the page: a variant prefix
// finds what the exact filter does not, text, person and round narrow,
// the sort is kept in the column heads' links; a shark who may not see a
// pitch's results never learns their order or outcome from a search.
func TestRunSearch(t *testing.T) {
	a, free1, free2, hidden := searchFixture(t)

	var got []runJSON
	res := a.api("GET", "/api/runs?variant_prefix=base&sort=speedup&dir=desc", "admin", nil).wantStatus(t, http.StatusOK)
	res.decode(t, &got)
	if ids := runIDsOf(got); fmt.Sprint(ids) != fmt.Sprint([]int64{hidden.ID, free2.ID, free1.ID}) {
		t.Errorf("admin, by speedup: %v", ids)
	}
	if res.header.Get("X-Total-Count") != "3" {
		t.Errorf("X-Total-Count %q", res.header.Get("X-Total-Count"))
	}
	a.api("GET", "/api/runs?variant=base", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if len(got) != 0 {
		t.Errorf("the exact variant filter stays exact: %v", runIDsOf(got))
	}
	a.api("GET", "/api/runs?q=PIPELINE", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 1 || ids[0] != hidden.ID {
		t.Errorf("text in the pitch's title: %v", ids)
	}
	a.api("GET", "/api/runs?round=1&person=admin", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 1 || ids[0] != hidden.ID {
		t.Errorf("round 1, asked by admin: %v", ids)
	}
	a.api("GET", "/api/runs?sort=id&dir=asc&limit=1&offset=1", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 1 || ids[0] != free2.ID {
		t.Errorf("second of three by id: %v", ids)
	}
	a.api("GET", "/api/runs?from=2000-01-01&to=2000-01-02", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if len(got) != 0 {
		t.Errorf("a date range before any run: %v", runIDsOf(got))
	}

	// The shark: sorted by speedup or filtered by outcome, the hidden run
	// is left out and the total is not given.
	res = a.api("GET", "/api/runs?sort=speedup", "oracle", nil).wantStatus(t, http.StatusOK)
	res.decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 2 || res.header.Get("X-Total-Count") != "" {
		t.Errorf("shark by speedup: %v, total %q", ids, res.header.Get("X-Total-Count"))
	}
	res = a.api("GET", "/api/runs?q=baseline&status=succeeded", "oracle", nil).wantStatus(t, http.StatusOK)
	res.decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 2 || res.header.Get("X-Total-Count") != "" {
		t.Errorf("shark, succeeded: %v, total %q", ids, res.header.Get("X-Total-Count"))
	}
	res = a.api("GET", "/api/runs?q=pipeline", "oracle", nil).wantStatus(t, http.StatusOK)
	res.decode(t, &got)
	if len(got) != 1 || !got[0].ResultHidden || got[0].Status != runner.StatusMeasured || got[0].HasResult {
		t.Errorf("shark sees the hidden run as: %+v", got)
	}
	wantNoJSONNumber(t, res.body, `4(\.0*)?`, `100(\.0*)?`) // the 4x speedup, the 100 us median

	// Bad parameters name themselves.
	for q, field := range map[string]string{"sort=colour": "sort", "dir=up&sort=id": "dir", "from=yesterday": "from", "to=2026-13-01": "to",
		"round=0": "round", "offset=-1": "offset", "q=x&before=3": "before"} {
		a.api("GET", "/api/runs?"+q, "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", field)
	}

	// The page: the search fields and sortable heads keep the query.
	body := a.browser().login("admin").get("/runs?variant_prefix=base&sort=variant&dir=asc").wantStatus(t, http.StatusOK).body
	wantContains(t, body, `name="variant_prefix" value="base"`, "3 runs match.", `data-sort="speedup"`,
		`href="/runs?dir=asc&amp;sort=speedup&amp;variant_prefix=base"`, `aria-sort="ascending"`,
		`href="/runs?dir=desc&amp;sort=variant&amp;variant_prefix=base"`)
	shark := a.browser().login("oracle").get("/runs?sort=speedup&dir=desc").wantStatus(t, http.StatusOK).body
	wantNotContains(t, shark, fmt.Sprintf(`href="/runs/%d"`, hidden.ID))
	bad := a.browser().login("admin").get("/runs?sort=colour").wantStatus(t, http.StatusOK).body
	wantContains(t, bad, "sort must be one of")
}

func TestPitchSearch(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	a.round(2)
	p1 := a.pitch("alice", 1, "Pipeline stages")
	p2 := a.pitch("bob", 2, "Wider tiles")
	if _, err := a.db.WithdrawPitch(t.Context(), a.users["bob"], p2.ID); err != nil {
		t.Fatal(err)
	}
	var got []pitchJSON
	ids := func() string {
		var out []string
		for _, p := range got {
			out = append(out, fmt.Sprint(p.ID))
		}
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"q=pipeline":                     fmt.Sprint(p1.ID),
		"status=withdrawn":               fmt.Sprint(p2.ID),
		"person=alice":                   fmt.Sprint(p1.ID),
		"round=2":                        fmt.Sprint(p2.ID),
		"variant_prefix=base&sort=title": fmt.Sprintf("%d,%d", p1.ID, p2.ID),
		"sort=title&dir=desc":            fmt.Sprintf("%d,%d", p2.ID, p1.ID),
		"sort=filed":                     fmt.Sprintf("%d,%d", p2.ID, p1.ID),
		"variant_prefix=stages":          "",
	} {
		res := a.api("GET", "/api/pitches?"+q, "vera", nil).wantStatus(t, http.StatusOK)
		res.decode(t, &got)
		if ids() != want {
			t.Errorf("%s: pitches %s, want %s", q, ids(), want)
		}
	}
	a.api("GET", "/api/pitches?status=gone", "vera", nil).wantError(t, http.StatusBadRequest, "bad_request", "status")
	a.api("GET", "/api/pitches?sort=score", "vera", nil).wantError(t, http.StatusBadRequest, "bad_request", "sort")
	a.api("GET", "/api/pitches", "", nil).wantStatus(t, http.StatusUnauthorized)
	body := a.browser().login("vera").get("/pitches?q=tiles").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "Wider tiles", "1 pitch matches.", `data-sort="title"`)
	wantNotContains(t, body, "Pipeline stages")
	bad := a.browser().login("vera").get("/pitches?from=someday").wantStatus(t, http.StatusBadRequest).body
	wantContains(t, bad, "from must be a date")
}

// The exports follow a search as the page does: the /runs page's export
// links carry its search, and /api/runs.csv and .json with search
// parameters give every match in the search's order (or one page with a
// Link to the next), leaving out what the viewer may not see.
func TestRunSearchExports(t *testing.T) {
	a, free1, free2, hidden := searchFixture(t)
	want := fmt.Sprint([]int64{free1.ID, free2.ID, hidden.ID}) // by speedup, ascending: not the export's default order

	res := a.api("GET", "/api/runs.csv?variant_prefix=base&sort=speedup&dir=asc", "admin", nil).wantStatus(t, http.StatusOK)
	rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "run_id" {
		t.Fatalf("search CSV: %v, %d rows", err, len(rows))
	}
	shape := slices.Index(rows[0], "variant_median_us")
	var ids []int64
	for _, row := range rows[1:] { // one row per shape: each run once, in order
		if shape < 0 || row[shape] == "" {
			t.Fatalf("search CSV row without its shape's median: %v", row)
		}
		id, err := strconv.ParseInt(row[0], 10, 64)
		if err != nil {
			t.Fatalf("run_id %q: %v", row[0], err)
		}
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	if fmt.Sprint(ids) != want || res.header.Get("X-Total-Count") != "3" {
		t.Errorf("search CSV by speedup: runs %v, X-Total-Count %q; want %s and 3", ids, res.header.Get("X-Total-Count"), want)
	}
	var got []runJSON
	a.api("GET", "/api/runs.json?variant_prefix=nothing-starts-so", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if len(got) != 0 {
		t.Errorf("an export searching for no variant: %v", runIDsOf(got))
	}

	page := a.api("GET", "/api/runs.json?variant_prefix=base&sort=speedup&dir=desc&limit=1", "admin", nil).wantStatus(t, http.StatusOK)
	page.decode(t, &got)
	if len(got) != 1 || got[0].ID != hidden.ID || !strings.Contains(page.header.Get("Link"), "offset=1") {
		t.Errorf("one page of the search: %v, Link %q", runIDsOf(got), page.header.Get("Link"))
	}
	a.api("GET", "/api/runs.json?variant_prefix=base&sort=speedup", "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if ids := runIDsOf(got); len(ids) != 2 {
		t.Errorf("the shark's export sorted by speedup: %v; the hidden run is left out", ids)
	}
	a.api("GET", "/api/runs.csv?sort=colour", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "sort")

	body := a.browser().login("admin").get("/runs?variant_prefix=base&sort=variant&dir=asc&offset=1").wantStatus(t, http.StatusOK).body
	wantContains(t, body, `href="/runs.csv?dir=asc&amp;sort=variant&amp;variant_prefix=base"`,
		`href="/runs.json?dir=asc&amp;sort=variant&amp;variant_prefix=base"`)
}
