package httpserver

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
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

// The runs CSV tells devices apart: beside the server's device field (0,
// cpu, an import's label) it names the model measured on and, for a bench
// document, its fingerprint, driver and NVRTC; an accepted suspect run says
// when it was accepted. Search finds runs by that model too.
func TestRunsCSVNamesTheDeviceAndAcceptance(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	var doc, fast runner.Run
	raw, err := os.ReadFile("../runner/testdata/h200-group-g2.json")
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	generic["suite"] = "benchmarks" // measured on a shapes file
	a.api("POST", "/api/runs/import", "admin", generic).wantStatus(t, http.StatusCreated).decode(t, &doc)
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "LAB-H100", "problem": "nvfp4_group_gemm", "variant": "auditq",
		"baseline": "baseline", "shapes": []map[string]any{{"label": "s1", "baseline_us": 100, "variant_us": 8, "correct": true}}}).
		wantStatus(t, http.StatusCreated).decode(t, &fast)
	a.api("POST", fmt.Sprintf("/api/runs/%d/accept", fast.ID), "admin", map[string]string{"reason": "profiled: real"}).wantStatus(t, http.StatusOK)
	body := a.api("GET", "/api/runs.csv", "admin", nil).wantStatus(t, http.StatusOK).body
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byRun := map[string]map[string]string{}
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = row[i]
		}
		byRun[m["run_id"]] = m
	}
	d := byRun[strconv.FormatInt(doc.ID, 10)]
	if d["device_name"] != "NVIDIA H200" || d["fingerprint_key"] != "5eb031bb271c013d" ||
		d["driver_version"] != "580.159.04" || d["nvrtc_version"] != "13.0" || d["accepted_at"] != "" {
		t.Errorf("the document import's row: %v", d)
	}
	f := byRun[strconv.FormatInt(fast.ID, 10)]
	if f["device_name"] != "LAB-H100" || f["fingerprint_key"] != "" || f["accepted_at"] == "" {
		t.Errorf("the accepted hand-written import's row: %v", f)
	}
	var found []runner.Run
	a.api("GET", "/api/runs?q=h200", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &found)
	if len(found) != 1 || found[0].ID != doc.ID {
		t.Errorf("runs found by their device model: %+v", found)
	}
}
