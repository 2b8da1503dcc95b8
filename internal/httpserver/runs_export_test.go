package httpserver

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// An export without limit holds every matching run, across the store's
// pages (exportPage at a time), where it once stopped at the default page
// of 100 with no hint (issue 13: 100 of 5,117): the JSON and the CSV of a
// filter, and of a search (paged by offset), each once and newest first,
// with X-Total-Count saying how many came.
func TestRunsExportEveryRun(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	n := exportPage + 50
	ids := enqueueRuns(t, a, n)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	for _, path := range []string{"/api/runs.json?device=9", "/api/runs.json?device=9&variant_prefix=base"} {
		res := a.api("GET", path, "vera", nil).wantStatus(t, http.StatusOK)
		var got []runJSON
		res.decode(t, &got)
		if gotIDs := runIDsOf(got); !slices.Equal(gotIDs, newestFirst) {
			t.Errorf("%s: %d runs (first %v); want all %d, newest first", path, len(gotIDs), gotIDs[:min(3, len(gotIDs))], n)
		}
		if c := res.header.Get("X-Total-Count"); c != strconv.Itoa(n) {
			t.Errorf("%s: X-Total-Count %q, want %d", path, c, n)
		}
	}

	res := a.api("GET", "/api/runs.csv?device=9", "vera", nil).wantStatus(t, http.StatusOK)
	rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || len(rows) == 0 || rows[0][0] != "run_id" {
		t.Fatalf("runs CSV: %v, %d rows", err, len(rows))
	}
	var csvIDs []int64
	for _, row := range rows[1:] { // a queued run has no shapes: one row each
		id, err := strconv.ParseInt(row[0], 10, 64)
		if err != nil {
			t.Fatalf("run_id %q: %v", row[0], err)
		}
		csvIDs = append(csvIDs, id)
	}
	if !slices.Equal(csvIDs, newestFirst) || res.header.Get("X-Total-Count") != strconv.Itoa(n) {
		t.Errorf("runs CSV: %d rows, X-Total-Count %q; want every one of the %d runs, newest first", len(csvIDs), res.header.Get("X-Total-Count"), n)
	}
}
