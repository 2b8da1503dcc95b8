package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// newTrackedApp is newRunsApp with the tracker between the runner and the
// store, as `web serve` builds it: fast retries for the tests.
func newTrackedApp(t *testing.T) (*app, *notify.Notifier) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { _ = db.Close() })
	n := notify.New(notify.Config{Store: db, Backoff: 5 * time.Millisecond, Attempts: 3})
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	tr := tracking.New(tracking.Config{Store: db, Runs: db, Pitches: db, Notifier: n, Build: "test-build"})
	r, err := runner.New(runner.Config{Store: tr.WrapStore(db), Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("new runner: %v", err)
	}
	return serveApp(t, Config{Runner: r, Tracker: tr, Heartbeat: 200 * time.Millisecond}, db), n
}

// hookReceiver checks each body's signature with its secret, fails the
// first `fail` deliveries with 500, and keeps the events it accepted.
type hookReceiver struct {
	srv     *httptest.Server
	fail    int32
	calls   atomic.Int32
	mu      sync.Mutex
	events  []notify.Event
	badSigs int
}

func newHookReceiver(t *testing.T, secret string, fail int32) *hookReceiver {
	h := &hookReceiver{fail: fail}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := h.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if !notify.Verify(secret, body, r.Header.Get("X-Pitchtank-Signature")) {
			h.badSigs++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if n <= h.fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		var ev notify.Event
		if err := json.Unmarshal(body, &ev); err != nil || ev.Type != r.Header.Get("X-Pitchtank-Event") {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		h.events = append(h.events, ev)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) count(typ string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// Webhooks and regression thresholds end to end through the API: bad
// configurations refused naming the field; an import slower than the
// round's pinned baseline run raises an alert (run page, run JSON, the
// regressions endpoints, withheld from a shark who may not see the
// result) and webhook events signed with the hook's secret, retried after
// a receiver's failure, every attempt in the delivery log; a round's
// status change is an event too.
func TestWebhooksAndRegressions(t *testing.T) {
	a, n := newTrackedApp(t)
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Three stages")
	const secret = "a-long-webhook-secret"
	good := newHookReceiver(t, secret, 0)
	flaky := newHookReceiver(t, secret, 1)

	// Bad configurations: nothing stored.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"url": "ftp://x/y", "secret": secret, "events": []string{"run.finished"}}, "url"},
		{map[string]any{"url": "http://u:p@x/y", "secret": secret, "events": []string{"run.finished"}}, "url"},
		{map[string]any{"url": good.srv.URL, "secret": "short", "events": []string{"run.finished"}}, "secret"},
		{map[string]any{"url": good.srv.URL, "secret": secret, "events": []string{}}, "events"},
		{map[string]any{"url": good.srv.URL, "secret": secret, "events": []string{"run.finished", "run.exploded"}}, "events[1]"},
	} {
		a.api("POST", "/api/webhooks", "admin", c.body).wantError(t, http.StatusUnprocessableEntity, "invalid", c.field)
	}
	a.api("POST", "/api/webhooks", "oracle", map[string]any{"url": good.srv.URL, "secret": secret, "events": []string{"run.finished"}}).
		wantError(t, http.StatusForbidden, "forbidden", "")
	var hooks []notify.Hook
	a.api("GET", "/api/webhooks", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &hooks)
	if len(hooks) != 0 {
		t.Fatalf("refused hooks were stored: %+v", hooks)
	}
	all := []string{"run.finished", "run.failed", "regression.found", "round.status"}
	res := a.api("POST", "/api/webhooks", "admin", map[string]any{"url": good.srv.URL, "secret": secret, "events": all}).wantStatus(t, http.StatusCreated)
	wantNotContains(t, res.body, secret)
	var hook notify.Hook
	res.decode(t, &hook)
	var flakyHook notify.Hook
	a.api("POST", "/api/webhooks", "admin", map[string]any{"url": flaky.srv.URL, "secret": secret, "events": []string{"regression.found"}}).
		wantStatus(t, http.StatusCreated).decode(t, &flakyHook)

	// The baseline run, then a threshold on round 1.
	imp := func(us float64) runner.Run {
		t.Helper()
		var run runner.Run
		samples := func(x float64) []float64 { return []float64{x * 0.99, x, x * 1.01, x * 0.995, x * 1.005} }
		a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline",
			"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400,
				"variant_us": us, "baseline_samples_us": samples(400), "variant_samples_us": samples(us)}}}).wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	base := imp(300)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"baseline_run": base.ID, "percent": 5}, "round"},
		{map[string]any{"round": 1, "variant": "baseline", "baseline_run": base.ID, "percent": 5}, "variant"},
		{map[string]any{"variant": "baseline", "baseline_run": base.ID, "percent": 5}, "problem"},
		{map[string]any{"round": 1, "baseline_run": base.ID, "percent": 0}, "percent"},
		{map[string]any{"round": 1, "baseline_run": base.ID, "percent": 100}, "percent"},
		{map[string]any{"round": 1, "baseline_run": 999, "percent": 5}, "baseline_run"},
		{map[string]any{"round": 7, "baseline_run": base.ID, "percent": 5}, "round"},
		{map[string]any{"problem": "nvfp4_dual_gemm", "variant": "baseline", "baseline_run": base.ID, "percent": 5}, "baseline_run"},
	} {
		a.api("POST", "/api/thresholds", "admin", c.body).wantError(t, http.StatusUnprocessableEntity, "invalid", c.field)
	}
	a.api("POST", "/api/thresholds", "admin", map[string]any{"round": 1, "baseline_run": base.ID, "percent": "5"}).
		wantError(t, http.StatusBadRequest, "bad_request", "percent")
	a.api("POST", "/api/thresholds", "oracle", map[string]any{"round": 1, "baseline_run": base.ID, "percent": 5}).
		wantError(t, http.StatusForbidden, "forbidden", "")
	var th tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", map[string]any{"round": 1, "baseline_run": base.ID, "percent": 5}).
		wantStatus(t, http.StatusCreated).decode(t, &th)

	fine := imp(305) // 1.6% slower: inside 5%
	slow := imp(360) // 17% slower: an alert
	var slowJSON struct {
		Regressions []tracking.Alert     `json:"regressions"`
		Provenance  *tracking.Provenance `json:"provenance"`
	}
	a.api("GET", fmt.Sprintf("/api/runs/%d", slow.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &slowJSON)
	if len(slowJSON.Regressions) != 1 || slowJSON.Regressions[0].BaselineRun != base.ID || slowJSON.Regressions[0].ThresholdID != th.ID {
		t.Fatalf("regressions of run %d: %+v", slow.ID, slowJSON.Regressions)
	}
	if slowJSON.Provenance == nil || slowJSON.Provenance.AppBuild != "test-build" {
		t.Errorf("provenance of run %d: %+v", slow.ID, slowJSON.Provenance)
	}
	var fineJSON struct {
		Regressions []tracking.Alert `json:"regressions"`
	}
	a.api("GET", fmt.Sprintf("/api/runs/%d", fine.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &fineJSON)
	if len(fineJSON.Regressions) != 0 {
		t.Errorf("a run inside the bound raised %+v", fineJSON.Regressions)
	}
	page := a.browser().login("admin").get(fmt.Sprintf("/runs/%d", slow.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "data-regressions", "more than 5% slower than baseline run", "test-build")
	// The shark who has not scored the pitch sees no alert anywhere.
	sharkPage := a.browser().login("oracle").get(fmt.Sprintf("/runs/%d", slow.ID)).wantStatus(t, http.StatusOK).body
	wantNotContains(t, sharkPage, "data-regressions", "slower than baseline run")
	var hiddenRegs struct {
		ResultHidden bool             `json:"result_hidden"`
		Regressions  []tracking.Alert `json:"regressions"`
	}
	a.api("GET", fmt.Sprintf("/api/runs/%d/regressions", slow.ID), "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &hiddenRegs)
	if !hiddenRegs.ResultHidden || len(hiddenRegs.Regressions) != 0 {
		t.Errorf("the shark's view of the run's regressions: %+v", hiddenRegs)
	}
	var recent struct {
		Regressions []tracking.Alert `json:"regressions"`
	}
	a.api("GET", "/api/regressions", "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &recent)
	if len(recent.Regressions) != 0 {
		t.Errorf("the shark sees alerts on a hidden run: %+v", recent.Regressions)
	}
	a.api("GET", "/api/regressions", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &recent)
	if len(recent.Regressions) != 1 || recent.Regressions[0].RunID != slow.ID {
		t.Errorf("the admin's alerts: %+v", recent.Regressions)
	}

	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "judging"}).wantStatus(t, http.StatusOK)
	var ping notify.Delivery
	a.api("POST", fmt.Sprintf("/api/webhooks/%d/ping", hook.ID), "admin", `{"event": "run.finished"}`).wantError(t, http.StatusBadRequest, "bad_request", "event")
	a.api("POST", fmt.Sprintf("/api/webhooks/%d/ping", hook.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &ping)
	if !ping.Delivered || ping.Event != "ping" {
		t.Errorf("ping: %+v", ping)
	}
	// The answer is the stored attempt, with its id in the delivery log
	// (other events may still be arriving: the ping is found by its event).
	var pinged deliveryPage
	a.api("GET", fmt.Sprintf("/api/webhooks/%d/deliveries?limit=500", hook.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &pinged)
	var logged []int64
	for _, d := range pinged.Deliveries {
		if d.EventID == ping.EventID {
			logged = append(logged, d.ID)
		}
	}
	if ping.ID == 0 || len(logged) != 1 || logged[0] != ping.ID {
		t.Errorf("ping answered id %d; the log has it as %v", ping.ID, logged)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := [4]int{good.count("run.finished"), good.count("regression.found"), good.count("round.status"), good.count("ping")}; got != [4]int{3, 1, 1, 1} {
		t.Errorf("events at the receiver (finished, regression, round, ping): %v", got)
	}
	if good.badSigs != 0 {
		t.Errorf("%d deliveries with a bad signature", good.badSigs)
	}
	// The flaky receiver: the regression arrived on the second attempt.
	if flaky.count("regression.found") != 1 || flaky.calls.Load() != 2 || flaky.count("run.finished") != 0 {
		t.Errorf("flaky receiver: %d regressions in %d calls, %d run events", flaky.count("regression.found"), flaky.calls.Load(), flaky.count("run.finished"))
	}
	var log deliveryPage
	a.api("GET", fmt.Sprintf("/api/webhooks/%d/deliveries", flakyHook.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &log)
	if len(log.Deliveries) != 2 || !log.Deliveries[0].Delivered || log.Deliveries[0].Attempt != 2 || log.Deliveries[1].Delivered ||
		log.Deliveries[1].StatusCode != 500 || log.Deliveries[1].Final {
		t.Errorf("flaky hook's delivery log: %+v", log.Deliveries)
	}
	a.api("GET", fmt.Sprintf("/api/webhooks/%d/deliveries?limit=2", hook.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &log)
	if len(log.Deliveries) != 2 || log.NextBefore == 0 {
		t.Errorf("paged delivery log: %+v", log)
	}
	a.api("GET", fmt.Sprintf("/api/webhooks/%d/deliveries", hook.ID), "oracle", nil).wantError(t, http.StatusForbidden, "forbidden", "")
	a.api("GET", "/api/webhooks/999/deliveries", "admin", nil).wantError(t, http.StatusNotFound, "not_found", "")

	// Update keeps the secret when none is given; delete; the audit log
	// has both, without the secret.
	var upd notify.Hook
	a.api("PUT", fmt.Sprintf("/api/webhooks/%d", hook.ID), "admin", map[string]any{"url": good.srv.URL, "events": []string{"run.failed"}, "active": false}).
		wantStatus(t, http.StatusOK).decode(t, &upd)
	if upd.Active || len(upd.Events) != 1 {
		t.Errorf("updated hook: %+v", upd)
	}
	a.api("DELETE", fmt.Sprintf("/api/webhooks/%d", flakyHook.ID), "admin", nil).wantStatus(t, http.StatusNoContent)
	a.api("DELETE", fmt.Sprintf("/api/webhooks/%d", flakyHook.ID), "admin", nil).wantError(t, http.StatusNotFound, "not_found", "")
	audit := a.api("GET", "/api/audit?action=webhook.", "admin", nil).wantStatus(t, http.StatusOK)
	wantContains(t, audit.body, "webhook.create", "webhook.update", "webhook.delete")
	wantNotContains(t, audit.body, secret)
	wantContains(t, a.api("GET", "/api/audit?action=threshold.", "admin", nil).body, "threshold.create")

	// The admin pages.
	wh := a.browser().login("admin").get("/admin/webhooks").wantStatus(t, http.StatusOK).body
	wantContains(t, wh, good.srv.URL, "data-deliveries", "regression.found")
	wantNotContains(t, wh, secret)
	form := a.browser().login("admin").post("/admin/webhooks", map[string][]string{"url": {"nonsense"}, "secret": {secret}, "events": {"run.failed"}})
	if form.status != http.StatusUnprocessableEntity || !strings.Contains(form.body, "absolute http") {
		t.Errorf("bad form: %d", form.status)
	}
	rg := a.browser().login("admin").get("/admin/regressions").wantStatus(t, http.StatusOK).body
	wantContains(t, rg, "round 1", "data-alerts", fmt.Sprintf("run #%d", slow.ID))
	bad := a.browser().login("admin").post("/admin/regressions", map[string][]string{"round": {"1"}, "baseline_run": {"x"}, "percent": {"5"}})
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "baseline_run must be a number") {
		t.Errorf("bad threshold form: %d", bad.status)
	}
	a.browser().login("oracle").get("/admin/webhooks").wantStatus(t, http.StatusForbidden)
	a.api("DELETE", fmt.Sprintf("/api/thresholds/%d", th.ID), "admin", nil).wantStatus(t, http.StatusNoContent)
	a.api("DELETE", fmt.Sprintf("/api/thresholds/%d", th.ID), "admin", nil).wantError(t, http.StatusNotFound, "not_found", "")
}
