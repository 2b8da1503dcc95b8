package httpserver

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// One variant on each device: a row per device with its counted runs
// pooled, the latest and best of them and the latest's times; an accepted
// suspect run counts (an unaccepted one does not); a hidden pitch's run is
// left out for a shark who may not see it; the page says speedups, not
// times, compare across devices.
func TestVariantDevices(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	b1 := importOn(t, a, 0, "B200", [3]float64{0, 400, 200}, [3]float64{0, 300, 150})
	b2 := importOn(t, a, 0, "B200", [3]float64{0, 400, 190}, [3]float64{0, 300, 140})
	h := importOn(t, a, 0, "H100", [3]float64{0, 500, 400})
	var sus runner.Run
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "H200", "problem": "nvfp4_group_gemm", "suite": "benchmarks",
		"variant": "baseline", "baseline": "baseline", "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400, "variant_us": 30}}}).
		wantStatus(t, http.StatusCreated).decode(t, &sus)
	if sus.Status != runner.StatusSuspect {
		t.Fatalf("a 13x import is %s, want suspect", sus.Status)
	}
	get := func(login string) variantDevicesJSON {
		t.Helper()
		var d variantDevicesJSON
		a.api("GET", "/api/runs/devices?problem=nvfp4_group_gemm&variant=baseline", login, nil).wantStatus(t, http.StatusOK).decode(t, &d)
		return d
	}
	byName := func(d variantDevicesJSON) map[string]deviceRow {
		m := map[string]deviceRow{}
		for _, r := range d.Devices {
			m[r.DeviceName] = r
		}
		return m
	}
	if rows := byName(get("admin")); len(rows) != 2 || rows["H200"].N != 0 {
		t.Fatalf("before the suspect run is accepted: %+v", rows)
	}
	a.api("POST", fmt.Sprintf("/api/runs/%d/accept", sus.ID), "admin", map[string]string{"reason": "profiled: the kernel skips zero blocks"}).
		wantStatus(t, http.StatusOK)
	p := a.pitch("alice", 1, "Three stages")
	hidden := importOn(t, a, p.ID, "B200", [3]float64{0, 400, 123.4567}, [3]float64{0, 300, 100})

	d := get("admin")
	if d.Variant != "baseline" || d.Truncated || len(d.Devices) != 3 {
		t.Fatalf("devices: %+v", d)
	}
	if names := []string{d.Devices[0].DeviceName, d.Devices[1].DeviceName, d.Devices[2].DeviceName}; fmt.Sprint(names) != "[B200 H100 H200]" {
		t.Errorf("rows in order %v", names)
	}
	rows := byName(d)
	b200 := rows["B200"]
	if b200.DeviceKey != "import:B200" || !b200.Imported || b200.Suite != "benchmarks" || b200.Baseline != "baseline" || b200.N != 3 ||
		b200.Latest.RunID != hidden.ID || b200.Best.RunID != hidden.ID {
		t.Errorf("B200 for the admin: %+v", b200)
	}
	if got := rows["H200"]; got.N != 1 || got.Latest.RunID != sus.ID || got.Pooled != got.Latest.Speedup {
		t.Errorf("the accepted suspect run on H200: %+v", got)
	}
	if got := rows["H100"]; got.N != 1 || got.Latest.RunID != h.ID || got.Best.RunID != h.ID || !got.Pooled.HasInterval() ||
		len(got.LatestShapes) != 1 || got.LatestShapes[0].VariantMedianUs != 400 {
		t.Errorf("H100: %+v", got)
	}

	// The shark has not scored the open round's pitch: its run is left
	// out entirely, and B200 pools the two runs of no pitch.
	res := a.api("GET", "/api/runs/devices?problem=nvfp4_group_gemm&variant=baseline", "oracle", nil).wantStatus(t, http.StatusOK)
	var blind variantDevicesJSON
	res.decode(t, &blind)
	wantNoJSONNumber(t, res.body, `123\.45\d*`)
	b200 = byName(blind)["B200"]
	if b200.N != 2 || b200.Latest.RunID != b2.ID || b200.Best.RunID != b2.ID {
		t.Fatalf("B200 for the shark: %+v", b200)
	}
	want := math.Sqrt(b1.Speedup.Value * b2.Speedup.Value)
	if math.Abs(b200.Pooled.Value-want) > 1e-9 || !(b200.Pooled.Lo < want && want < b200.Pooled.Hi) || b200.Min != b1.Speedup.Value || b200.Max != b2.Speedup.Value {
		t.Errorf("B200 pooled %+v (min %v max %v), want the geomean %v of runs %d and %d", b200.Pooled, b200.Min, b200.Max, want, b1.ID, b2.ID)
	}
	if len(b200.LatestShapes) != 2 || b200.LatestShapes[0].VariantMedianUs != 190 || b200.LatestShapes[1].VariantMedianUs != 140 {
		t.Errorf("the latest B200 run's times: %+v", b200.LatestShapes)
	}

	page := a.browser().login("admin").get("/runs/devices?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "on each device", "data-devices-note", "only figure comparable across devices", "not comparable across rows",
		"data-device-row", "H100", "H200", fmt.Sprintf(`href="/runs/%d"`, hidden.ID), "g=8 N=7168 K=2048: 100.00 µs",
		`href="/runs/devices.json?problem=nvfp4_group_gemm&amp;variant=baseline"`, `href="/runs/history?problem=nvfp4_group_gemm&amp;variant=baseline"`)
	shark := a.browser().login("oracle").get("/runs/devices?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).body
	wantNotContains(t, shark, fmt.Sprintf(`href="/runs/%d"`, hidden.ID), "123.45")
	var viaPage variantDevicesJSON
	a.browser().login("oracle").get("/runs/devices.json?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).decode(t, &viaPage)
	if len(viaPage.Devices) != 3 || byName(viaPage)["B200"].N != 2 {
		t.Errorf("the page's JSON for the shark: %+v", viaPage)
	}

	// Linked from the history's header and the run page.
	hp := a.browser().login("admin").get("/runs/history?problem=nvfp4_group_gemm&variant=baseline&suite=benchmarks").wantStatus(t, http.StatusOK).body
	wantContains(t, hp, "data-devices-link", `href="/runs/devices?problem=nvfp4_group_gemm&amp;suite=benchmarks&amp;variant=baseline"`)
	rp := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", h.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, rp, "data-devices-link", `href="/runs/devices?baseline=baseline&amp;problem=nvfp4_group_gemm&amp;suite=benchmarks&amp;variant=baseline"`)

	a.api("GET", "/api/runs/devices?problem=nvfp4_group_gemm", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "variant")
	a.api("GET", "/api/runs/devices?variant=baseline", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "problem")
	a.browser().login("admin").get("/runs/devices?problem=nvfp4_group_gemm").wantStatus(t, http.StatusBadRequest)
}

// Reading at most the newest runs, as the history does, and saying so.
func TestVariantDevicesTruncated(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	for range 3 {
		importOn(t, a, 0, "B200", [3]float64{0, 400, 200})
	}
	old := historyLimit
	historyLimit = 2
	t.Cleanup(func() { historyLimit = old })
	var d variantDevicesJSON
	a.api("GET", "/api/runs/devices?problem=nvfp4_group_gemm&variant=baseline", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &d)
	if !d.Truncated || len(d.Devices) != 1 || d.Devices[0].N != 2 {
		t.Fatalf("the newest 2 of 3 runs: %+v", d)
	}
	page := a.browser().login("admin").get("/runs/devices?problem=nvfp4_group_gemm&variant=baseline").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-devices-truncated", "Only the newest 2 runs")
}
