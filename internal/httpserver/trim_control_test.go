package httpserver

import (
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// A control character at the end of a one-line field is refused naming the
// field, as one in the middle is; it used to be trimmed away with the
// spaces ("H100\n" stored as "H100", "\u0085" as "": any device). Spaces
// around a value are still trimmed.
func TestTrailingControlCharactersAreRefused(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	m := func(dc, baseline string) map[string]any {
		return map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks", "baseline": baseline, "device_class": dc, "allow_imports": true}
	}
	a.api("PUT", "/api/rounds/1/measurement", "admin", m("H100\n", "baseline")).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "device_class")
	a.api("PUT", "/api/rounds/1/measurement", "admin", m("\u0085", "baseline")).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "device_class")
	a.api("PUT", "/api/rounds/1/measurement", "admin", m("H100", "baseline\t")).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	r, err := a.db.Round(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Measurement.Problem != "" || r.Measurement.DeviceClass != "" {
		t.Fatalf("a refused measurement was stored: %+v", r.Measurement)
	}
	a.api("PUT", "/api/rounds/1/measurement", "admin", m(" H100 ", " baseline ")).wantStatus(t, http.StatusOK)
	if r, err = a.db.Round(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if r.Measurement.DeviceClass != "H100" || r.Baseline != "baseline" {
		t.Fatalf("spaces are trimmed: device class %q, baseline %q", r.Measurement.DeviceClass, r.Baseline)
	}
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]any{"baseline": "baseline\n"}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline")
	a.api("POST", "/api/runs", "admin", map[string]any{"problem": "nvfp4_group_gemm", "variant": "reference\n", "baseline": "reference",
		"suite": "tests", "device": "cpu"}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "variant")
}
