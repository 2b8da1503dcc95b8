package httpserver

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// The per-shape history: one series per shape and device, oldest first,
// each point with its interval, source hash and build; a changed source is
// marked on the point, the chart and the table; a run whose result the
// viewer may not see is left out.
func TestShapeHistory(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	// Runs under no pitch come before the pitch of their variant (pitches.CheckBlindRun).
	r1 := importOn(t, a, 0, "B200", [3]float64{0, 400, 300}, [3]float64{0, 200, 150})
	r2 := importOn(t, a, 0, "B200", [3]float64{0, 400, 290}, [3]float64{0, 200, 140})
	r3 := importOn(t, a, 0, "B200", [3]float64{0, 400, 250}, [3]float64{0, 200, 120})
	r4 := importOn(t, a, 0, "H100", [3]float64{0, 500, 450})
	p := a.pitch("alice", 1, "Three stages")
	hidden := importOn(t, a, p.ID, "B200", [3]float64{0, 400, 123.4567})
	for id, h := range map[int64]string{r1.ID: "aaaa", r2.ID: "aaaa", r3.ID: "bbbb", r4.ID: "aaaa", hidden.ID: "cccc"} {
		if err := a.db.SetProvenance(t.Context(), tracking.Provenance{RunID: id, SourceHash: h, AppBuild: "rev1", RecordedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	var h shapeHistoryJSON
	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=baseline", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
	if len(h.Series) != 3 {
		t.Fatalf("series (B200 x 2 shapes, H100 x 1): %+v", h.Series)
	}
	b200 := h.Series[0]
	if b200.DeviceKey != "import:B200" || b200.Shape != "g=8 N=4096 K=7168" || len(b200.Points) != 4 {
		t.Fatalf("first series: %+v", b200)
	}
	want := []int64{r1.ID, r2.ID, r3.ID, hidden.ID}
	for i, pt := range b200.Points {
		if pt.RunID != want[i] || !pt.Speedup.HasInterval() || pt.AppBuild != "rev1" {
			t.Errorf("point %d: %+v", i, pt)
		}
		if changed := i >= 2; pt.SourceChanged != changed {
			t.Errorf("point %d (run %d): source_changed %v, want %v", i, pt.RunID, pt.SourceChanged, changed)
		}
	}
	if h.Series[2].DeviceKey != "import:H100" || len(h.Series[2].Points) != 1 {
		t.Errorf("H100 series: %+v", h.Series[2])
	}
	var one shapeHistoryJSON
	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=baseline&shape=g%3D8+N%3D7168+K%3D2048", "admin", nil).
		wantStatus(t, http.StatusOK).decode(t, &one)
	if len(one.Series) != 1 || len(one.Series[0].Points) != 3 {
		t.Errorf("one shape: %+v", one.Series)
	}
	// The shark: the pitch's run is not on the history.
	var blind shapeHistoryJSON
	res := a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=baseline", "oracle", nil).wantStatus(t, http.StatusOK)
	res.decode(t, &blind)
	if n := len(blind.Series[0].Points); n != 3 {
		t.Errorf("the shark's B200 series has %d points, want 3", n)
	}
	wantNoJSONNumber(t, res.body, `123\.45\d*`)
	wantNotContains(t, res.body, "cccc")

	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "variant")
	a.api("GET", "/api/runs/history?variant=baseline", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "problem")

	// A pitch's history follows it across its variants: a new variant with
	// another source is marked.
	req := &runner.ImportRequest{Device: "B200", Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline?stages=3",
		Baseline: "baseline", PitchID: p.ID, Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: 400, VariantUs: 110}}}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		t.Fatal(err)
	}
	run, resDoc, err := req.ImportResult(a.users["admin"].ID)
	if err != nil {
		t.Fatal(err)
	}
	next, err := a.db.Import(t.Context(), run, resDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.db.SetProvenance(t.Context(), tracking.Provenance{RunID: next.ID, SourceHash: "dddd", AppBuild: "rev2", RecordedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var ph shapeHistoryJSON
	a.api("GET", fmt.Sprintf("/api/runs/history?pitch=%d", p.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &ph)
	if len(ph.Series) != 1 || len(ph.Series[0].Points) != 2 || ph.Series[0].Points[1].Variant != "baseline?stages=3" || !ph.Series[0].Points[1].SourceChanged {
		t.Errorf("the pitch's history: %+v", ph.Series)
	}
	var phBlind shapeHistoryJSON
	a.api("GET", fmt.Sprintf("/api/runs/history?pitch=%d", p.ID), "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &phBlind)
	if len(phBlind.Series) != 0 {
		t.Errorf("the shark sees the hidden pitch's history: %+v", phBlind.Series)
	}
	a.api("GET", "/api/runs/history?pitch=x", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "pitch")
	pitchPage := a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, pitchPage, "data-pitch-history")
	hp := a.browser().login("admin").get(fmt.Sprintf("/runs/history?pitch=%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, hp, "History of", "pitch #", "data-source-change")

	page := a.browser().login("admin").get("/runs/history?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-timeline", "data-source-change", "data-source-changed", "bbbb", "on H100")
	// The page's JSON link opens in the browser's session (the API takes
	// only tokens, so a link to it answered 401) and holds the API's document.
	wantContains(t, page, `href="/runs/history.json?problem=nvfp4_group_gemm&amp;variant=baseline"`)
	var viaPage, viaAPI shapeHistoryJSON
	a.browser().login("admin").get("/runs/history.json?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).decode(t, &viaPage)
	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=baseline", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &viaAPI)
	if len(viaPage.Series) == 0 || !reflect.DeepEqual(viaPage, viaAPI) {
		t.Errorf("the page's JSON: %+v; the API's: %+v", viaPage, viaAPI)
	}
	a.browser().get("/runs/history.json?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusSeeOther)
	runPage := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", r3.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, runPage, "data-history-link", "/runs/history?baseline=baseline&amp;device=B200&amp;problem=nvfp4_group_gemm")
}

// A speedup is the baseline's time over the variant's: runs against
// another baseline or on another suite are other series, and a history
// that reads only its newest runs says so.
func TestShapeHistorySeriesKeepTheirBaselineAndSuite(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	imp := func(suite, baseline string, baseUs, varUs float64) int64 {
		var run struct{ ID int64 }
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "LAB-H100", "problem": "nvfp4_group_gemm", "suite": suite,
			"variant": "auditk", "baseline": baseline, "shapes": []map[string]any{{"label": "s1", "baseline_us": baseUs, "variant_us": varUs, "correct": true}}}).
			wantStatus(t, http.StatusCreated).decode(t, &run)
		return run.ID
	}
	first := imp("benchmarks", "baseline", 100, 50)
	other := imp("benchmarks", "baseline?stages=3", 200, 50) // the same kernel time: "4x" against a slower baseline
	tests := imp("tests", "baseline", 10, 9)
	same := imp("benchmarks", "baseline", 100, 52)
	var h shapeHistoryJSON
	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=auditk", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
	got := map[string][]int64{}
	for _, se := range h.Series {
		for _, p := range se.Points {
			got[se.Suite+" "+se.Baseline] = append(got[se.Suite+" "+se.Baseline], p.RunID)
		}
	}
	want := map[string][]int64{"benchmarks baseline": {first, same}, "benchmarks baseline?stages=3": {other}, "tests baseline": {tests}}
	if !reflect.DeepEqual(got, want) || h.Truncated {
		t.Fatalf("series %v (truncated %v), want %v", got, h.Truncated, want)
	}
	page := a.browser().login("admin").get("/runs/history?problem=nvfp4_group_gemm&variant=auditk").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "against <code>baseline?stages=3</code>", "suite tests")
	wantNotContains(t, page, "data-history-truncated")

	old := historyLimit
	historyLimit = 3
	t.Cleanup(func() { historyLimit = old })
	a.api("GET", "/api/runs/history?problem=nvfp4_group_gemm&variant=auditk", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &h)
	n := 0
	for _, se := range h.Series {
		for _, p := range se.Points {
			n++
			if p.RunID == first {
				t.Errorf("the oldest run %d is on a history of the newest 3", first)
			}
		}
	}
	if !h.Truncated || n != 3 {
		t.Fatalf("a history of the newest 3: truncated %v, %d points", h.Truncated, n)
	}
	page = a.browser().login("admin").get("/runs/history?problem=nvfp4_group_gemm&variant=auditk").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-history-truncated", "Only the newest 3 runs")
}

// The history as CSV, a row per point with its series, under the page's
// filter (here suite=tests), and the page's filter form keeping it.
func TestShapeHistoryCSVAndFilter(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	imp := func(suite string, varUs float64) int64 {
		var run struct{ ID int64 }
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "LAB-H100", "problem": "nvfp4_group_gemm", "suite": suite,
			"variant": "auditk", "baseline": "baseline", "shapes": []map[string]any{{"label": "s1", "baseline_us": 100, "variant_us": varUs, "correct": true}}}).
			wantStatus(t, http.StatusCreated).decode(t, &run)
		return run.ID
	}
	imp("benchmarks", 50)
	tests := imp("tests", 40)
	q := "problem=nvfp4_group_gemm&variant=auditk&suite=tests"
	body := a.api("GET", "/api/runs/history.csv?"+q, "admin", nil).wantStatus(t, http.StatusOK).body
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("history CSV of suite tests: %v\n%s", err, body)
	}
	row := map[string]string{}
	for i, h := range rows[0] {
		row[h] = rows[1][i]
	}
	if row["run_id"] != strconv.FormatInt(tests, 10) || row["suite"] != "tests" || row["speedup"] != "2.5" || row["device_key"] != "import:LAB-H100" {
		t.Fatalf("history CSV row %v", row)
	}
	page := a.browser().login("admin").get("/runs/history?"+q).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-history-filter", `<option value="tests" selected>`, `href="/runs/history.csv?`+strings.ReplaceAll(q, "&", "&amp;"))
	a.browser().login("admin").get("/runs/history.csv?"+q).wantStatus(t, http.StatusOK)
	a.api("GET", "/api/runs/history.csv?problem=nvfp4_group_gemm", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "variant")
}
