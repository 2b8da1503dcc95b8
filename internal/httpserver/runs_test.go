package httpserver

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// cpuRun is the run `web bench` can do anywhere: the CPU reference paired
// with itself on the test shapes.
var cpuRun = map[string]any{"problem": "nvfp4_group_gemm", "variant": "reference", "baseline": "reference", "device": "cpu", "suite": "tests"}

// A real run through the API: queued with POST /api/runs, followed over the
// server-sent event stream to "succeeded", its per-shape rows read back and
// exported.
func TestRunAPIEndToEndCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("the CPU bench takes about 20 s; skipped with -short")
	}
	bin := webBinary(t)
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}, Command: runner.BenchCommand(bin, 5*time.Minute)}, true)

	var created struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	r := a.api("POST", "/api/runs", "pragmatist", cpuRun).wantStatus(t, http.StatusCreated)
	r.decode(t, &created)
	if created.ID == 0 || created.Status != "queued" {
		t.Fatalf("created %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != fmt.Sprintf("/api/runs/%d", created.ID) {
		t.Errorf("Location %q", loc)
	}

	events, beats := a.followEvents(created.ID, "pragmatist", 4*time.Minute)
	if beats == 0 {
		t.Error("no heartbeat comments on a stream that lasted the whole run")
	}
	progress := 0
	for _, ev := range events {
		if ev.Type == "progress" {
			progress++
			if ev.Data.Progress == nil || ev.Data.Progress.Shapes == 0 {
				t.Errorf("progress event without progress: %+v", ev.Data)
			}
		}
	}
	if len(events) == 0 {
		t.Fatal("no events")
	}
	last := events[len(events)-1]
	if last.Type != "status" || last.Data.Status != runner.StatusSucceeded {
		got := a.api("GET", fmt.Sprintf("/api/runs/%d", created.ID), "pragmatist", nil)
		t.Fatalf("last event %+v; run: %s", last, got.body)
	}
	if progress == 0 {
		t.Error("no progress events on the stream")
	}

	var run runner.Run
	a.api("GET", fmt.Sprintf("/api/runs/%d", created.ID), "pragmatist", nil).wantStatus(t, http.StatusOK).decode(t, &run)
	if run.Status != runner.StatusSucceeded || !run.HasResult || !run.Correct || len(run.Shapes) == 0 || len(run.Result) == 0 {
		t.Fatalf("stored run %+v", run)
	}
	for _, s := range run.Shapes {
		if !s.Correct || !(s.VariantMedianUs > 0) || !(s.Speedup.Value > 0) {
			t.Errorf("shape %+v", s)
		}
	}
	// The stored rows are what the store holds, not just what the API said.
	stored, err := a.db.Get(context.Background(), created.ID)
	if err != nil || len(stored.Shapes) != len(run.Shapes) {
		t.Fatalf("store: %v, %d shapes", err, len(stored.Shapes))
	}

	// A finished run's stream is one status event.
	again, _ := a.followEvents(created.ID, "pragmatist", 10*time.Second)
	if len(again) != 1 || again[0].Data.Status != runner.StatusSucceeded {
		t.Errorf("stream of a finished run: %+v", again)
	}

	// Lists and exports.
	var list []runner.Run
	a.api("GET", "/api/runs?device=cpu&status=succeeded&problem=nvfp4_group_gemm&variant=reference", "vera", nil).wantStatus(t, http.StatusOK).decode(t, &list)
	if len(list) != 1 || list[0].ID != created.ID {
		t.Errorf("filtered list %+v", list)
	}
	a.api("GET", "/api/runs?status=running", "vera", nil).wantStatus(t, http.StatusOK).decode(t, &list)
	if len(list) != 0 {
		t.Errorf("running list %+v", list)
	}
	csvResp := a.api("GET", fmt.Sprintf("/api/runs/%d.csv", created.ID), "vera", nil).wantStatus(t, http.StatusOK)
	rows, err := csv.NewReader(strings.NewReader(csvResp.body)).ReadAll()
	if err != nil || len(rows) != len(run.Shapes)+1 || rows[0][0] != "run_id" {
		t.Errorf("CSV export: %v, %d rows:\n%s", err, len(rows), csvResp.body)
	}

	// The run page shows the table and no live panel.
	b := a.browser().login("vera")
	page := b.get(fmt.Sprintf("/runs/%d", created.ID)).wantStatus(t, http.StatusOK)
	wantContains(t, page.body, "succeeded", "data-shapes", run.Shapes[0].Label, "Speedup per shape", "<svg")
	var doc struct {
		Fingerprint struct {
			Key string `json:"key"`
		} `json:"fingerprint"`
		Variant struct {
			SourceHash string `json:"source_hash"`
		} `json:"variant"`
	}
	if err := json.Unmarshal(run.Result, &doc); err != nil {
		t.Fatal(err)
	}
	wantContains(t, page.body, "Device and kernels", doc.Fingerprint.Key, doc.Variant.SourceHash, "History of this variant")
	// A CPU run names no module (schema 3: modules are the GPU's).
	wantNotContains(t, page.body, "data-progress", `http-equiv="refresh"`, "Modules the variant ran")
	// A viewer may look but not launch.
	wantNotContains(t, b.get("/runs").body, `action="/runs" class="form run-form"`)
}

// While a run hangs, and after it fails, the server answers /healthz and
// its pages; the failure reason reaches the API.
func TestHealthzWhileRunHangsAndAfterItFails(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("needs sleep(1) as the hanging child")
	}
	hang := func(run *runner.Run, resultPath string) (*exec.Cmd, error) {
		if run.Seed == 1 {
			return exec.Command("sh", "-c", "echo 'fatal: out of host memory' >&2; exit 42"), nil
		}
		return exec.Command("sleep", "60"), nil
	}
	a, rn := newRunsApp(t, runner.Config{Devices: []string{"cpu"}, Command: hang, TimeLimit: 3 * time.Second, KillGrace: time.Second}, true)
	req := map[string]any{"problem": "nvfp4_group_gemm", "variant": "reference", "device": "cpu", "suite": "tests"}
	var hung runner.Run
	a.api("POST", "/api/runs", "admin", req).wantStatus(t, http.StatusCreated).decode(t, &hung)
	req["seed"] = 1
	var crash runner.Run
	a.api("POST", "/api/runs", "admin", req).wantStatus(t, http.StatusCreated).decode(t, &crash)

	// Poll until the first run is running, then check the server answers fast.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := rn.Get(context.Background(), hung.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == runner.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run never started: %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		start := time.Now()
		a.api("GET", "/healthz", "", nil).wantStatus(t, http.StatusOK)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("healthz took %v while a run hangs", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.browser().login("vera").get(fmt.Sprintf("/runs/%d", hung.ID)).wantStatus(t, http.StatusOK)

	events, _ := a.followEvents(crash.ID, "admin", 30*time.Second)
	if last := events[len(events)-1]; last.Data.Status != runner.StatusFailed || !strings.Contains(last.Data.Reason, "exit status 42") {
		t.Fatalf("crashed run's last event %+v", last)
	}
	var got runner.Run
	a.api("GET", fmt.Sprintf("/api/runs/%d", hung.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Status != runner.StatusFailed || !strings.Contains(got.Reason, "timed out") {
		t.Fatalf("hung run: %+v", got)
	}
	a.api("GET", "/healthz", "", nil).wantStatus(t, http.StatusOK)

	// A failed run can be re-queued, from the API and from the run page.
	var again runner.Run
	a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", crash.ID), "pragmatist", nil).wantStatus(t, http.StatusCreated).decode(t, &again)
	if again.RequeueOf != crash.ID || again.ID == crash.ID {
		t.Errorf("requeued %+v", again)
	}
	b := a.browser().login("admin")
	page := b.get(fmt.Sprintf("/runs/%d", hung.ID)).wantStatus(t, http.StatusOK)
	wantContains(t, page.body, "Re-queue", "timed out")
	r := b.post(fmt.Sprintf("/runs/%d/requeue", hung.ID), url.Values{})
	if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "ok=requeued") {
		t.Fatalf("requeue form: %d %v", r.status, r.header)
	}
	a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", hung.ID), "vera", nil).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
}

// Bad input is refused with a clear 4xx JSON error naming the field, and
// nothing is queued or stored.
func TestRunBadInput(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"0", "cpu"}}, false)
	a.round(1)
	p := a.pitch("alice", 1, "Three stages")
	a.status(1, pitches.RoundJudging)
	a.status(1, pitches.RoundClosed)

	base := func(over map[string]any) map[string]any {
		m := map[string]any{"problem": "nvfp4_group_gemm", "variant": "baseline", "baseline": "baseline", "device": "0", "suite": "tests"}
		for k, v := range over {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	before := a.runCount()
	for _, c := range []struct {
		name   string
		login  string
		body   any
		status int
		code   string
		field  string
	}{
		{"unknown problem", "admin", base(map[string]any{"problem": "fp8_gemm"}), 422, pitches.EINVALID, "problem"},
		{"unknown variant", "admin", base(map[string]any{"variant": "warp_specialized"}), 422, pitches.EINVALID, "variant"},
		{"knob out of range", "admin", base(map[string]any{"knobs": map[string]any{"stages": 9}}), 422, pitches.EINVALID, "knobs"},
		{"unknown knob", "admin", base(map[string]any{"knobs": map[string]any{"unroll": 4}}), 422, pitches.EINVALID, "knobs"},
		{"knob of wrong type", "admin", base(map[string]any{"knobs": map[string]any{"stages": []int{1}}}), 422, pitches.EINVALID, "knobs.stages"},
		{"device that does not exist", "admin", base(map[string]any{"device": "7"}), 422, pitches.EINVALID, "device"},
		{"gpu variant on the cpu", "admin", base(map[string]any{"device": "cpu"}), 422, pitches.EINVALID, "variant"},
		{"pitch that does not exist", "admin", base(map[string]any{"pitch": 999}), 422, pitches.EINVALID, "pitch_id"},
		{"viewer on a closed round's pitch", "vera", base(map[string]any{"pitch": p.ID, "variant": nil}), 403, pitches.EFORBIDDEN, ""},
		{"viewer without a pitch", "vera", base(nil), 403, pitches.EFORBIDDEN, ""},
		{"another contestant's pitch", "bob", base(map[string]any{"pitch": p.ID}), 403, pitches.EFORBIDDEN, ""},
		{"unknown field", "admin", `{"problem":"nvfp4_group_gemm","variant":"baseline","device":"0","gpu":"0"}`, 400, pitches.EBADREQUEST, "gpu"},
		{"malformed JSON", "admin", `{"problem":`, 400, pitches.EBADREQUEST, ""},
		{"no token", "", base(nil), 401, pitches.EUNAUTHORIZED, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.api("POST", "/api/runs", c.login, c.body).wantError(t, c.status, c.code, c.field)
		})
	}

	// Malformed import documents.
	good := `{"device":"B200","problem":"nvfp4_group_gemm","variant":"pipeline_stages","baseline":"baseline","shapes":[{"baseline_us":373,"variant_us":488}]}`
	for _, c := range []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"not JSON", `B200: 373 -> 488`, 422, pitches.EINVALID, "document"},
		{"unknown field", strings.Replace(good, `"device"`, `"gpu":"x","device"`, 1), 422, pitches.EINVALID, "gpu"},
		{"no shapes", strings.Replace(good, `[{"baseline_us":373,"variant_us":488}]`, `[]`, 1), 422, pitches.EINVALID, "shapes"},
		{"zero time", strings.Replace(good, `"variant_us":488`, `"variant_us":0`, 1), 422, pitches.EINVALID, "shapes[0].variant_us"},
		{"unknown problem", strings.Replace(good, `nvfp4_group_gemm`, `fp8`, 1), 422, pitches.EINVALID, "problem"},
		{"pitch that does not exist", strings.Replace(good, `"device"`, `"pitch_id":999,"device"`, 1), 422, pitches.EINVALID, "pitch_id"},
		{"trailing data", good + `{}`, 422, pitches.EINVALID, "document"},
	} {
		t.Run("import "+c.name, func(t *testing.T) {
			a.api("POST", "/api/runs/import", "admin", c.body).wantError(t, c.status, c.code, c.field)
		})
	}
	a.api("POST", "/api/runs/import", "vera", good).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")

	if after := a.runCount(); after != before {
		t.Fatalf("refused requests stored runs: %d before, %d after", before, after)
	}

	// The same refusals through the runs form: the page says why, nothing is queued.
	b := a.browser().login("admin")
	r := b.post("/runs", url.Values{"problem": {"nvfp4_group_gemm"}, "variant": {"baseline"}, "knobs": {"stages=9"}, "device": {"0"}, "suite": {"tests"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("form with a bad knob: %d", r.status)
	}
	wantContains(t, r.body, "stages", `id="err-knobs"`)
	r = b.post("/runs", url.Values{"problem": {"nvfp4_group_gemm"}, "variant": {"baseline"}, "device": {"9"}, "suite": {"tests"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("form with a bad device: %d", r.status)
	}
	wantContains(t, r.body, `id="err-device"`)
	if r := a.browser().login("vera").post(fmt.Sprintf("/pitches/%d/runs", p.ID), url.Values{"device": {"0"}}); r.status != http.StatusForbidden {
		t.Fatalf("viewer's run on a closed round's pitch: %d", r.status)
	}
	if after := a.runCount(); after != before {
		t.Fatalf("refused forms stored runs: %d before, %d after", before, after)
	}

	// Round 1 is closed: its pitches' results stay as they are, so nobody
	// starts a run of them, the admin neither.
	a.api("POST", "/api/runs", "admin", map[string]any{"problem": "nvfp4_group_gemm", "pitch": p.ID, "device": "0"}).
		wantError(t, http.StatusConflict, pitches.ECONFLICT, "pitch")
	if after := a.runCount(); after != before {
		t.Fatalf("a run of a closed round's pitch was stored: %d before, %d after", before, after)
	}

	// A good one, on an open round's pitch, is queued (the runner is
	// stopped, so it stays queued), with the pitch's variant and the round's
	// baseline filled in.
	a.round(2)
	p = a.pitch("alice", 2, "Three stages, again")
	var run runner.Run
	a.api("POST", "/api/runs", "alice", map[string]any{"problem": "nvfp4_group_gemm", "pitch": p.ID, "device": "0",
		"knobs": map[string]any{"stages": 3}}).wantStatus(t, http.StatusCreated).decode(t, &run)
	if run.Variant != "baseline?stages=3" || run.PitchID != p.ID || run.Status != runner.StatusQueued || run.RequestedBy != a.users["alice"].ID {
		t.Fatalf("queued %+v", run)
	}
	// Only the requester or an admin cancels. Cancelling takes no body: a
	// field is refused, naming it, and the run stays queued.
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", run.ID), "bob", nil).wantError(t, http.StatusForbidden, pitches.EFORBIDDEN, "")
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", run.ID), "alice", `{"reason": "x"}`).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "reason")
	a.api("POST", fmt.Sprintf("/api/runs/%d/requeue", run.ID), "alice", `{"device": "0"}`).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "device")
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", run.ID), "alice", `{}`).wantStatus(t, http.StatusOK)
	a.api("POST", fmt.Sprintf("/api/runs/%d/cancel", run.ID), "alice", nil).wantError(t, http.StatusConflict, pitches.ECONFLICT, "")
	a.api("GET", "/api/runs/999", "alice", nil).wantError(t, http.StatusNotFound, pitches.ENOTFOUND, "")
	a.api("GET", "/api/runs?status=done", "alice", nil).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "status")
}
