package httpserver

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// A pitch's result pools its runs: the results export names every pooled
// run and its device with the pool's interval, not the newest run alone as
// if it had measured the pooled figure. In a round that names no device
// class, a run on another device than the first is not pooled.
func TestRoundResultsExportNamesThePool(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.api("POST", "/api/rounds", "admin", map[string]any{"number": 1, "title": "R1", "criteria": []map[string]any{
		{"key": "speedup", "name": "Speedup", "weight": 100}}}).wantStatus(t, http.StatusCreated)
	a.api("PUT", "/api/rounds/1/measurement", "admin", map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks",
		"baseline": "baseline", "device_class": "", "allow_imports": true}).wantStatus(t, http.StatusOK)
	var p struct{ ID int64 }
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": "Stages", "body": "b",
		"claim": map[string]float64{"lo": 1.1, "hi": 1.3}, "variant": "baseline?stages=3"}).wantStatus(t, http.StatusCreated).decode(t, &p)
	imp := func(device string, variantUs float64) int64 {
		var run struct{ ID int64 }
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": device, "problem": "nvfp4_group_gemm",
			"variant": "baseline?stages=3", "baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{
				{"label": "g=8 N=4096 K=7168", "baseline_us": 100, "variant_us": variantUs, "correct": true}}}).
			wantStatus(t, http.StatusCreated).decode(t, &run)
		return run.ID
	}
	first := imp("LAB-H100", 80)
	second := imp("LAB-H100", 90)
	imp("B200", 50) // a faster device: not pooled with the H100's runs
	want := math.Sqrt(100.0 / 80 * 100.0 / 90)

	var results []struct {
		Pitch  int64 `json:"pitch_id"`
		Result struct {
			N       int      `json:"n"`
			Runs    []int64  `json:"runs"`
			Devices []string `json:"devices"`
		} `json:"result"`
		Measured float64 `json:"measured_speedup"`
	}
	a.api("GET", "/api/rounds/1/results", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &results)
	if len(results) != 1 || results[0].Result.N != 2 || fmt.Sprint(results[0].Result.Runs) != fmt.Sprint([]int64{second, first}) ||
		strings.Join(results[0].Result.Devices, ",") != "LAB-H100,LAB-H100" || math.Abs(results[0].Measured-want) > 1e-3 {
		t.Fatalf("results %+v, want runs %d and %d on LAB-H100 pooled at %.4f", results, second, first, want)
	}

	body := a.api("GET", "/api/rounds/1/results.csv", "admin", nil).wantStatus(t, http.StatusOK).body
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("results CSV: %v\n%s", err, body)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	got, _ := strconv.ParseFloat(col["measured_speedup"], 64)
	lo, _ := strconv.ParseFloat(col["measured_lo"], 64)
	hi, _ := strconv.ParseFloat(col["measured_hi"], 64)
	if col["n_runs"] != "2" || col["run_ids"] != fmt.Sprintf("%d %d", second, first) || col["devices"] != "LAB-H100 | LAB-H100" ||
		math.Abs(got-want) > 1e-3 || !(lo < got && got < hi) || col["run_id"] != strconv.FormatInt(second, 10) {
		t.Fatalf("CSV row %v, want the pool of runs %d and %d on LAB-H100 at %.4f", col, second, first, want)
	}
}
