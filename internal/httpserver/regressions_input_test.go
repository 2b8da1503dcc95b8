package httpserver

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// A threshold's variant is bounded like every variant field
// (pitches.MaxVariantChars), one line without control characters, and in a
// variant's form unless a stored run of the problem names it (an import's
// own words); its problem is one line too. An exact duplicate (same scope,
// baseline run and percent) is refused with 409; another percent or
// baseline run is another bound. Refused thresholds store nothing and
// write no audit entry.
func TestThresholdInputIsChecked(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	p := a.pitch("alice", 1, "Three stages")
	imp := func(variant string) runner.Run {
		t.Helper()
		var run runner.Run
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": variant,
			"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400,
				"variant_us": 300}}}).wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	base := imp("baseline")
	imp("B200 fused (v2)") // measured elsewhere, named in its own words

	th := func(variant string, percent float64) map[string]any {
		return map[string]any{"problem": "nvfp4_group_gemm", "variant": variant, "baseline_run": base.ID, "percent": percent}
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"ESC in the variant", th("baseline\u001b[2J", 5), "variant"},
		{"a newline in the variant", th("baseline\nstages=3", 5), "variant"},
		{"a trailing newline in the variant", th("baseline\n", 5), "variant"},
		{"a C1 control in the variant", th("base\u0085line", 5), "variant"},
		{"a 900 KB variant", th(strings.Repeat("a", 900<<10), 5), "variant"},
		{"one past the variant limit", th("baseline?stages="+strings.Repeat("3", pitches.MaxVariantChars), 5), "variant"},
		{"not a variant, and no run names it", th("base line", 5), "variant"},
		{"a knob without a value", th("baseline?stages", 5), "variant"},
		{"ESC in the problem", map[string]any{"problem": "nvfp4\u001b_group_gemm", "variant": "baseline", "baseline_run": base.ID, "percent": 5}, "problem"},
		{"a long problem", map[string]any{"problem": strings.Repeat("p", 201), "variant": "baseline", "baseline_run": base.ID, "percent": 5}, "problem"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.api("POST", "/api/thresholds", "admin", c.body).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, c.field)
		})
	}
	// A baseline run whose kernel was wrong is no bound to hold others to.
	var wrong runner.Run
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline?stages=2",
		"baseline": "baseline", "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400, "variant_us": 300, "correct": false}}}).
		wantStatus(t, http.StatusCreated).decode(t, &wrong)
	res := a.api("POST", "/api/thresholds", "admin", map[string]any{"problem": "nvfp4_group_gemm", "variant": "baseline?stages=2",
		"baseline_run": wrong.ID, "percent": 5})
	res.wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "baseline_run")
	wantContains(t, res.body, "does not count as a result (incorrect)")
	var ths []tracking.Threshold
	a.api("GET", "/api/thresholds", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &ths)
	if len(ths) != 0 {
		t.Fatalf("refused thresholds were stored: %+v", ths)
	}

	// Good ones: a variant spec no run has yet, an import's own name, a round.
	var first tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", th("baseline?stages=3", 5)).wantStatus(t, http.StatusCreated).decode(t, &first)
	a.api("POST", "/api/thresholds", "admin", th("B200 fused (v2)", 5)).wantStatus(t, http.StatusCreated)
	round := map[string]any{"round": 1, "baseline_run": base.ID, "percent": 5}
	a.api("POST", "/api/thresholds", "admin", round).wantStatus(t, http.StatusCreated)

	// Exact duplicates are refused, naming the scope; another percent is not a duplicate.
	res = a.api("POST", "/api/thresholds", "admin", th(" baseline?stages=3 ", 5))
	res.wantError(t, http.StatusConflict, pitches.ECONFLICT, "variant")
	wantContains(t, res.body, fmt.Sprintf("threshold %d already checks", first.ID))
	a.api("POST", "/api/thresholds", "admin", round).wantError(t, http.StatusConflict, pitches.ECONFLICT, "round")
	a.api("POST", "/api/thresholds", "admin", th("baseline?stages=3", 10)).wantStatus(t, http.StatusCreated)

	a.api("GET", "/api/thresholds", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &ths)
	if len(ths) != 4 {
		t.Fatalf("%d thresholds stored, want 4: %+v", len(ths), ths)
	}
	var log struct {
		Entries []struct {
			Action string `json:"action"`
		} `json:"entries"`
	}
	a.api("GET", "/api/audit?action=threshold.create", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &log)
	if len(log.Entries) != 4 {
		t.Fatalf("%d threshold.create entries, want 4 (one per stored threshold)", len(log.Entries))
	}
}

// The round's measurement is one line per field: a control character in
// device_class (or problem, suite) is refused naming the field, and the
// round keeps its measurement.
func TestMeasurementRefusesControlCharacters(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	good := map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks", "baseline": "baseline", "device_class": "H100", "allow_imports": true}
	a.api("PUT", "/api/rounds/1/measurement", "admin", good).wantStatus(t, http.StatusOK)
	before := a.api("GET", "/api/rounds/1", "admin", nil).wantStatus(t, http.StatusOK).body
	for _, c := range []struct{ field, value string }{
		{"device_class", "H\u001b100"}, {"device_class", "H1\n00"}, {"device_class", "H\t100"}, {"device_class", "H\u009b100"},
		{"suite", "bench\u0007marks"}, {"problem", "nvfp4_group_gemm\u001b"},
	} {
		body := map[string]any{}
		for k, v := range good {
			body[k] = v
		}
		body[c.field] = c.value
		a.api("PUT", "/api/rounds/1/measurement", "admin", body).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, c.field)
	}
	if after := a.api("GET", "/api/rounds/1", "admin", nil).wantStatus(t, http.StatusOK).body; after != before {
		t.Fatalf("refused measurements changed the round:\n%s\nvs\n%s", before, after)
	}
}

// Concurrent creates of one threshold may all pass the duplicate check
// before any is stored; the store's unique index then refuses all but one
// with the check's own 409, never a 500, and one row and one audit entry
// remain.
func TestThresholdCreateRaceIsConflict(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	p := a.pitch("alice", 1, "Three stages")
	var base runner.Run
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline",
		"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400,
			"variant_us": 300}}}).wantStatus(t, http.StatusCreated).decode(t, &base)
	body := map[string]any{"problem": "nvfp4_group_gemm", "variant": "baseline?stages=3", "baseline_run": base.ID, "percent": 5}

	const n = 8
	out := make([]resp, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = a.api("POST", "/api/thresholds", "admin", body)
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for _, r := range out {
		if r.status == http.StatusCreated {
			created++
			continue
		}
		r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "variant")
		wantContains(t, r.body, "already checks variant baseline?stages=3 of nvfp4_group_gemm")
	}
	var ths []tracking.Threshold
	a.api("GET", "/api/thresholds", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &ths)
	if created != 1 || len(ths) != 1 {
		t.Fatalf("%d creates succeeded and %d thresholds stored, want 1 and 1", created, len(ths))
	}
	var log struct {
		Entries []struct{} `json:"entries"`
	}
	a.api("GET", "/api/audit?action=threshold.create", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &log)
	if len(log.Entries) != 1 {
		t.Fatalf("%d threshold.create entries, want 1", len(log.Entries))
	}
}
