package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// measure sets round n's measurement straight in the store (tests that are
// not about the measurement API).
func (a *app) measure(n int, m runner.Measurement) {
	a.t.Helper()
	_, err := a.db.SetRoundMeasurement(context.Background(), a.users["admin"], n,
		pitches.RoundMeasurement{Problem: m.Problem, Suite: m.Suite, DeviceClass: m.DeviceClass, AllowImports: m.AllowImports}, m.Baseline)
	if err != nil {
		a.t.Fatalf("set measurement of round %d: %v", n, err)
	}
}

// countRuns is how many runs the store holds.
func (a *app) countRuns() int {
	a.t.Helper()
	runs, err := a.db.List(context.Background(), runner.Filter{Limit: 1000})
	if err != nil {
		a.t.Fatal(err)
	}
	return len(runs)
}

func importBody(pitchID int64, variantUs float64) string {
	return fmt.Sprintf(`{"device":"NVIDIA H100 80GB HBM3","problem":"nvfp4_group_gemm","variant":"baseline","baseline":"baseline","pitch_id":%d,
		"shapes":[{"label":"g=8 N=4096 K=7168","baseline_us":373,"variant_us":%g,"correct":true}]}`, pitchID, variantUs)
}

// Who may import a run for a pitch, per role and round state, with and
// without the round allowing imports: an admin while the round is open; the
// pitch's own contestant only while it is open and allows imports; nobody on
// a closed round; never a shark, another contestant or a viewer. A refusal
// stores nothing.
func TestImportPermissions(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	type state struct {
		status pitches.RoundStatus
		allow  bool
	}
	states := []state{{pitches.RoundPitching, true}, {pitches.RoundJudging, true}, {pitches.RoundClosed, true},
		{pitches.RoundPitching, false}, {pitches.RoundJudging, false}}
	// want[login] per state, in the order above: the HTTP status.
	want := map[string][5]int{
		"admin":      {201, 201, 409, 201, 201},
		"alice":      {201, 201, 409, 403, 403}, // the pitch's contestant
		"bob":        {403, 403, 403, 403, 403}, // another contestant
		"oracle":     {403, 403, 403, 403, 403}, // a shark
		"vera":       {403, 403, 403, 403, 403}, // a viewer
		"":           {401, 401, 401, 401, 401}, // nobody
		"made-up-id": {401, 401, 401, 401, 401},
	}
	attempt := 0
	for i, st := range states {
		n := i + 1
		a.round(n)
		a.measure(n, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: st.allow})
		p := a.pitch("alice", n, "Three stages")
		if st.status != pitches.RoundPitching {
			a.status(n, pitches.RoundJudging)
		}
		if st.status == pitches.RoundClosed {
			a.status(n, pitches.RoundClosed)
		}
		for login, codes := range want {
			before := a.countRuns()
			// Each attempt a measurement of its own: the same times again
			// onto the pitch would be refused as a repeat (409).
			attempt++
			r := a.api("POST", "/api/runs/import", login, importBody(p.ID, 300+float64(attempt)))
			if r.status != codes[i] {
				t.Errorf("round %s (imports allowed %v), %q imports: %d, want %d: %s", st.status, st.allow, login, r.status, codes[i], r.body)
			}
			after := a.countRuns()
			if r.status == http.StatusCreated && after != before+1 || r.status != http.StatusCreated && after != before {
				t.Errorf("round %s, %q: %d runs before, %d after (status %d)", st.status, login, before, after, r.status)
			}
			if st.status == pitches.RoundClosed && r.status == http.StatusConflict && !strings.Contains(r.body, "admins neither") {
				t.Errorf("closed round refusal does not say admins are refused too: %s", r.body)
			}
		}
	}
	// An import measuring no pitch: admins only, and not of a variant that
	// an open round's pitch names (pitches.CheckBlindRun): its result would
	// be visible to sharks who have not scored that pitch.
	doc := strings.Replace(importBody(0, 300), `"variant":"baseline"`, `"variant":"cutlass-ext"`, 1)
	a.api("POST", "/api/runs/import", "alice", doc).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	before := a.countRuns()
	a.api("POST", "/api/runs/import", "admin", importBody(0, 300)).wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch_id")
	if a.countRuns() != before {
		t.Error("a refused import stored a run")
	}
	a.api("POST", "/api/runs/import", "admin", doc).wantStatus(t, http.StatusCreated)
}

// Magnitudes and sizes of an import are bounded: a denormal time is refused
// naming the field (it used to store a speedup of 0 and become a pitch's
// result), as are too many samples; a speedup over 10x is stored suspect.
func TestImportBounds(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	before := a.countRuns()
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 1e-320)).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "shapes[0].variant_us")
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 2e9)).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "shapes[0].variant_us")
	samples := make([]float64, 1001)
	for i := range samples {
		samples[i] = 100 + float64(i%7)
	}
	big, _ := json.Marshal(map[string]any{"device": "H100", "problem": "nvfp4_group_gemm", "variant": "v", "baseline": "baseline", "pitch_id": p.ID,
		"shapes": []map[string]any{{"label": "s", "baseline_us": 100, "variant_us": 100, "baseline_samples_us": samples, "variant_samples_us": samples}}})
	a.api("POST", "/api/runs/import", "admin", big).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "shapes[0].baseline_samples_us")
	if n := a.countRuns(); n != before {
		t.Fatalf("refused imports stored %d runs", n-before)
	}
	// A fake 10x: stored, marked suspect, and no result.
	var run runner.Run
	a.api("POST", "/api/runs/import", "alice", importBody(p.ID, 30)).wantStatus(t, http.StatusCreated).decode(t, &run)
	if run.Status != runner.StatusSuspect || !strings.Contains(run.Reason, "over 10x") {
		t.Fatalf("a 12x import is %s (%q), want suspect", run.Status, run.Reason)
	}
	page := a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "No result yet", "suspect and not accepted")
}

// A bare-times import with a time of the wrong type, null or missing is
// refused naming the shape's field, in a client's words (not Go's type
// names, not "got 0"), and stores nothing.
func TestImportTimeErrorsNameTheShape(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	doc := func(second string) string {
		return fmt.Sprintf(`{"device":"H100","problem":"nvfp4_group_gemm","variant":"baseline","baseline":"baseline","pitch_id":%d,
			"shapes":[{"baseline_us":373,"variant_us":300},{"baseline_us":373,%s}]}`, p.ID, second)
	}
	for _, c := range []struct{ second, field, msg string }{
		{`"variant_us":"5"`, "shapes[1].variant_us", "shapes[1].variant_us must be a number, not string"},
		{`"variant_us":true`, "shapes[1].variant_us", "shapes[1].variant_us must be a number, not bool"},
		{`"variant_us":null`, "shapes[1].variant_us", "shapes[1].variant_us is required (null given)"},
		{`"label":"s"`, "shapes[1].variant_us", "shapes[1].variant_us is required"},
		{`"variant_us":300,"baseline_samples_us":[1,null]`, "shapes[1].baseline_samples_us[1]", "shapes[1].baseline_samples_us[1] must be a number (null given)"},
		{`"variant_us":300,"baseline_samples_us":[1,"2"]`, "shapes[1].baseline_samples_us[1]", "shapes[1].baseline_samples_us[1] must be a number, not string"},
	} {
		t.Run(c.second, func(t *testing.T) {
			r := a.api("POST", "/api/runs/import", "admin", doc(c.second))
			r.wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, c.field)
			var e errorBody
			r.decode(t, &e)
			if e.Error.Message != c.msg {
				t.Errorf("message %q, want %q", e.Error.Message, c.msg)
			}
		})
	}
	if n := a.countRuns(); n != 0 {
		t.Fatalf("refused imports stored %d runs", n)
	}
}

// The CPU cost of the largest import the limits allow (32 shapes, 4096
// samples in all, bootstrapped 2000 times) stays small: it used to be 37 s
// for a 1 MB document.
func TestImportCostBounded(t *testing.T) {
	req := &runner.ImportRequest{Device: "H100", Problem: "nvfp4_group_gemm", Variant: "v", Baseline: "baseline"}
	for i := 0; i < 32; i++ {
		b, v := make([]float64, 64), make([]float64, 64)
		for j := range b {
			b[j], v[j] = 100+float64((i*7+j)%13), 90+float64((i*5+j)%11)
		}
		req.Shapes = append(req.Shapes, runner.ImportShape{Label: fmt.Sprintf("shape %d", i), BaselineUs: 100, VariantUs: 90,
			BaselineSamplesUs: b, VariantSamplesUs: v})
	}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		t.Fatalf("the largest import is refused: %v", err)
	}
	start := time.Now()
	_, res, err := req.ImportResult(0)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("largest import (32 shapes x 2 x 64 samples): %v", took)
	if !res.Speedup.HasInterval() {
		t.Fatalf("no interval: %+v", res.Speedup)
	}
	if took > 5*time.Second {
		t.Fatalf("the largest import took %v", took)
	}
}

// The full `web bench --json` document is an import body: kept as the
// run's result, with its fingerprint on the run page. A CPU-mode document,
// one whose figures disagree, or the same document again is refused.
func TestImportFullBenchDocument(t *testing.T) {
	raw, err := os.ReadFile("../runner/testdata/h200-group-g2.json")
	if err != nil {
		t.Skipf("needs the runner's H200 fixture: %v", err)
	}
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	generic["suite"] = "benchmarks" // measured on a shapes file
	doc, _ := json.Marshal(generic)
	var d struct {
		Fingerprint struct {
			Key         string `json:"key"`
			DeviceModel string `json:"device_model"`
		} `json:"fingerprint"`
		Variant  struct{ Spec string } `json:"variant"`
		Baseline struct{ Spec string } `json:"baseline"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	// Set in the store: the document's baseline is a knob set of wgmma.
	if _, err := a.db.SetRoundMeasurement(context.Background(), a.users["admin"], 1,
		pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "benchmarks", DeviceClass: "H200", AllowImports: true}, d.Baseline.Spec); err != nil {
		t.Fatal(err)
	}
	p, err := a.db.FilePitch(context.Background(), a.users["alice"], pitches.PitchInput{RoundNumber: 1, Title: "Folded producer",
		Claim: pitches.Range{Lo: 0.9, Hi: 1.1}, Variant: d.Variant.Spec})
	if err != nil {
		t.Fatal(err)
	}
	var run runner.Run
	a.api("POST", fmt.Sprintf("/api/runs/import?pitch_id=%d", p.ID), "alice", doc).wantStatus(t, http.StatusCreated).decode(t, &run)
	if !run.Imported || run.Status != runner.StatusSucceeded || run.Problem != "nvfp4_group_gemm" || run.Suite != "benchmarks" ||
		run.Variant != d.Variant.Spec || run.PitchID != p.ID || run.DeviceName != d.Fingerprint.DeviceModel || !(run.Speedup.Value > 0) || len(run.Shapes) == 0 || !run.Shapes[0].Speedup.HasInterval() {
		t.Fatalf("imported document: %+v", run)
	}
	page := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", run.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, d.Fingerprint.Key, d.Fingerprint.DeviceModel, "imported")
	// It is the pitch's result: the round measures this problem, suite and device class.
	page = a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-measured", fmt.Sprintf("%.4fx", run.Speedup.Value))
	// A document that disagrees with what the envelope says is refused.
	env := fmt.Sprintf(`{"pitch_id":%d,"variant":"baseline","document":%s}`, p.ID, doc)
	a.api("POST", "/api/runs/import", "alice", env).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "variant")
	// The same document again, with a note: one measurement, one run.
	env = fmt.Sprintf(`{"pitch_id":%d,"note":"from the lab","document":%s}`, p.ID, doc)
	r := a.api("POST", "/api/runs/import", "alice", env)
	r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	wantContains(t, r.body, fmt.Sprintf("run %d", run.ID))
	// A speedup edited by hand no longer agrees with the medians.
	sp := generic["shapes"].([]any)[0].(map[string]any)["pairing"].(map[string]any)["speedup"].(map[string]any)
	sp["point"], sp["lo"], sp["hi"] = 25.0, 24.0, 26.0
	generic["summary"].(map[string]any)["geomean_speedup"] = 25.0
	generic["summary"].(map[string]any)["shape_speedups"] = []any{25.0}
	forged, _ := json.Marshal(generic)
	a.api("POST", fmt.Sprintf("/api/runs/import?pitch_id=%d", p.ID), "alice", forged).
		wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "document.shapes[0].pairing.speedup.point")
	// A CPU-mode document times the CPU reference: no kernel measurement.
	cpu, err := os.ReadFile("../runner/testdata/cpu-tests-aa.json")
	if err != nil {
		t.Fatal(err)
	}
	a.api("POST", fmt.Sprintf("/api/runs/import?pitch_id=%d", p.ID), "alice", cpu).
		wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "document")
	if n := a.countRuns(); n != 1 {
		t.Fatalf("%d runs stored, want 1", n)
	}
}

// Accepting a suspect run: admins only, with a reason; a run that is not
// suspect is refused naming why; nothing changes on refusal.
func TestAcceptSuspectRun(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	var sus, ok runner.Run
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 30)).wantStatus(t, http.StatusCreated).decode(t, &sus)
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 300)).wantStatus(t, http.StatusCreated).decode(t, &ok)
	if sus.Status != runner.StatusSuspect || ok.Status != runner.StatusSucceeded {
		t.Fatalf("statuses %s %s", sus.Status, ok.Status)
	}
	path := fmt.Sprintf("/api/runs/%d/accept", sus.ID)
	reason := map[string]string{"reason": "profiled with nsys: the kernel skips the zero scale blocks"}
	for _, login := range []string{"oracle", "alice", "vera"} {
		a.api("POST", path, login, reason).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	}
	a.api("POST", path, "", reason).wantStatus(t, http.StatusUnauthorized)
	a.api("POST", path, "admin", map[string]string{"reason": "  "}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "reason")
	a.api("POST", path, "admin", map[string]string{"reason": strings.Repeat("x", runner.MaxAcceptReason+1)}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "reason")
	a.api("POST", path, "admin", map[string]string{"reason": "a\u0007b\u001b[31m red"}).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "reason")
	if got, _ := a.db.Get(context.Background(), sus.ID); got.Accepted() {
		t.Fatal("a refused acceptance changed the run")
	}
	// Before acceptance only the plausible run counts; after it, both pool.
	page := a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	wantContains(t, page, "1.2433x")
	r := a.api("POST", fmt.Sprintf("/api/runs/%d/accept", ok.ID), "admin", reason)
	r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	wantContains(t, r.body, "not suspect")
	var acc runner.Run
	a.api("POST", path, "admin", reason).wantStatus(t, http.StatusOK).decode(t, &acc)
	if !acc.Accepted() || acc.AcceptedBy != a.users["admin"].ID || acc.AcceptReason != reason["reason"] {
		t.Fatalf("accepted %+v", acc)
	}
	a.api("POST", path, "admin", reason).wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	page = a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	wantContains(t, page, "over 2 runs", "data-pooled")
	runPage := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", sus.ID)).body
	wantContains(t, runPage, "data-run-accepted", "profiled with nsys", "Admin")
	wantNotContains(t, runPage, "data-accept-form")

	// The form on the run page: admins only.
	var sus2 runner.Run
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 25)).wantStatus(t, http.StatusCreated).decode(t, &sus2)
	form := fmt.Sprintf("/runs/%d/accept", sus2.ID)
	wantNotContains(t, a.browser().login("oracle").get(fmt.Sprintf("/runs/%d", sus2.ID)).body, "data-accept-form")
	if r := a.browser().login("oracle").post(form, map[string][]string{"reason": {"looks fine"}}); r.status != http.StatusForbidden {
		t.Fatalf("a shark's accept form: %d", r.status)
	}
	admin := a.browser().login("admin")
	wantContains(t, admin.get(fmt.Sprintf("/runs/%d", sus2.ID)).body, "data-accept-form", "data-run-suspect")
	if r := admin.post(form, map[string][]string{"reason": {""}}); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "written reason") {
		t.Fatalf("empty reason on the form: %d", r.status)
	}
	if r := admin.post(form, map[string][]string{"reason": {"checked"}}); r.status != http.StatusSeeOther {
		t.Fatalf("accept form: %d %s", r.status, r.body)
	}
	if got, _ := a.db.Get(context.Background(), sus2.ID); !got.Accepted() || got.AcceptReason != "checked" {
		t.Fatalf("form acceptance not stored: %+v", got)
	}

	// Once the round is closed its results stay as they are: a suspect run
	// imported before the close is no longer accepted, by the API or the
	// form, and its page offers no form.
	var late runner.Run
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 20)).wantStatus(t, http.StatusCreated).decode(t, &late)
	a.status(1, pitches.RoundJudging)
	a.status(1, pitches.RoundClosed)
	r = a.api("POST", fmt.Sprintf("/api/runs/%d/accept", late.ID), "admin", reason)
	r.wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	wantContains(t, r.body, "round 1 is closed")
	if fr := admin.post(fmt.Sprintf("/runs/%d/accept", late.ID), map[string][]string{"reason": {"checked"}}); fr.status != http.StatusConflict {
		t.Fatalf("accept form on a closed round: %d", fr.status)
	}
	wantNotContains(t, admin.get(fmt.Sprintf("/runs/%d", late.ID)).body, "data-accept-form")
	if got, _ := a.db.Get(context.Background(), late.ID); got.Accepted() {
		t.Fatal("a run of a closed round was accepted")
	}
}

// The result rule over HTTP: runs of another problem, suite or device, and
// imports where the round does not count them, are listed as "not this
// round's measurement" and never become the result; several matching runs
// pool.
func TestPitchResultFollowsMeasurement(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", DeviceClass: "h100", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	imp := func(device, problem string, variantUs float64) {
		doc := fmt.Sprintf(`{"device":%q,"problem":%q,"variant":"baseline","baseline":"baseline","pitch_id":%d,
			"shapes":[{"label":"s","baseline_us":100,"variant_us":%g,"correct":true}]}`, device, problem, p.ID, variantUs)
		a.api("POST", "/api/runs/import", "admin", doc).wantStatus(t, http.StatusCreated)
	}
	imp("NVIDIA H100 80GB HBM3", "nvfp4_group_gemm", 80)  // 1.25x: counts
	imp("B200", "nvfp4_group_gemm", 20)                   // 5x on another device
	imp("NVIDIA H100 80GB HBM3", "nvfp4_dual_gemm", 25)   // 4x on another problem
	imp("NVIDIA H100 80GB HBM3", "nvfp4_group_gemm", 125) // 0.8x: counts, pools with the first
	page := a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	want := fmt.Sprintf("%.4fx", 1.0) // sqrt(1.25 * 0.8)
	wantContains(t, page, want, "over 2 runs", "Not this round&#39;s measurement", "problem nvfp4_dual_gemm, the round measures nvfp4_group_gemm",
		"device &#34;B200&#34;, the round measures on &#34;h100&#34;")
	var res []roundResult
	a.api("GET", "/api/rounds/1/results", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &res)
	if len(res) != 1 || res[0].Result == nil || res[0].Result.N != 2 || res[0].Measured < 0.9999 || res[0].Measured > 1.0001 {
		t.Fatalf("results export %+v", res)
	}
	// The round stops counting imports: no result any more.
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", DeviceClass: "h100"})
	page = a.browser().login("admin").get(fmt.Sprintf("/pitches/%d", p.ID)).body
	wantContains(t, page, "No result yet", "imported, and the round does not count imports")
}

// The round's measurement: admins set it through the API and the admin
// page, checked against the kernel catalogue; others are refused; a closed
// round keeps it; the round create API takes it.
func TestRoundMeasurementAPI(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	body := map[string]any{"problem": "nvfp4_dual_gemm", "suite": "benchmarks", "baseline": "baseline?stages=2", "device_class": "H100", "allow_imports": true}
	var got struct {
		Baseline    string             `json:"baseline"`
		Measurement runner.Measurement `json:"measurement"`
	}
	a.api("PUT", "/api/rounds/1/measurement", "admin", body).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Measurement != (runner.Measurement{Problem: "nvfp4_dual_gemm", Suite: "benchmarks", Baseline: "baseline?stages=2", DeviceClass: "H100", AllowImports: true}) {
		t.Fatalf("measurement %+v", got.Measurement)
	}
	a.api("PUT", "/api/rounds/1/measurement", "oracle", body).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	for field, change := range map[string]map[string]any{
		"problem":  {"problem": "nvfp4_triple_gemm"},
		"suite":    {"suite": "everything"},
		"baseline": {"baseline": "baseline?stages=99"},
	} {
		bad := maps.Clone(body)
		maps.Copy(bad, change)
		a.api("PUT", "/api/rounds/1/measurement", "admin", bad).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, field)
	}
	if r, _ := a.db.Round(context.Background(), 1); r.Measurement.Problem != "nvfp4_dual_gemm" || r.Baseline != "baseline?stages=2" {
		t.Fatalf("a refused change changed the round: %+v", r)
	}
	// The pitch page and the admin page show it.
	a.pitch("alice", 1, "p")
	wantContains(t, a.browser().login("admin").get("/admin/rounds").body, `action="/admin/rounds/1/measurement"`, "nvfp4_dual_gemm, benchmarks")
	r := a.browser().login("admin").post("/admin/rounds/1/measurement", map[string][]string{"problem": {"nvfp4_group_gemm"}, "suite": {"tests"}, "baseline": {"baseline"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("admin form: %d %s", r.status, r.body)
	}
	if rd, _ := a.db.Round(context.Background(), 1); rd.Measurement.Problem != "nvfp4_group_gemm" || rd.Measurement.Suite != "tests" || rd.Measurement.AllowImports {
		t.Fatalf("admin form stored %+v", rd.Measurement)
	}
	// Created with its measurement through the API.
	round := map[string]any{"number": 2, "title": "r2", "criteria": rubricJSON(),
		"measurement": map[string]any{"problem": "nvfp4_group_gemm", "allow_imports": true}}
	a.api("POST", "/api/rounds", "admin", round).wantStatus(t, http.StatusCreated).decode(t, &got)
	if got.Measurement.Problem != "nvfp4_group_gemm" || got.Measurement.Suite != "benchmarks" || !got.Measurement.AllowImports {
		t.Fatalf("created with %+v", got.Measurement)
	}
	round["number"], round["measurement"] = 3, map[string]any{"problem": "nope"}
	a.api("POST", "/api/rounds", "admin", round).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "problem")
	if _, err := a.db.Round(context.Background(), 3); pitches.ErrorCode(err) != pitches.ENOTFOUND {
		t.Fatalf("a refused round was stored: %v", err)
	}
	a.status(1, pitches.RoundJudging)
	a.status(1, pitches.RoundClosed)
	a.api("PUT", "/api/rounds/1/measurement", "admin", body).wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
}

func rubricJSON() []map[string]any {
	out := []map[string]any{}
	for _, c := range rubric {
		out = append(out, map[string]any{"key": c.Key, "name": c.Name, "weight": c.Weight})
	}
	return out
}
