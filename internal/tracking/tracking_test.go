package tracking_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

func shape(label string, us, sem float64) runner.Shape {
	return runner.Shape{Label: label, VariantMedianUs: us, VariantSEMUs: sem}
}

func TestEvaluate(t *testing.T) {
	base := &runner.Run{ID: 1, HasResult: true, Imported: true, Device: "B200", Problem: "p", Suite: "benchmarks",
		Shapes: []runner.Shape{shape("a", 100, 0.5), shape("b", 200, 1), shape("c", 300, 0)}}
	th := tracking.Threshold{ID: 4, Round: 2, BaselineRun: 1, Percent: 5}
	run := func(a, b, c float64) *runner.Run {
		return &runner.Run{ID: 9, HasResult: true, Imported: true, Device: "B200", Problem: "p", Suite: "benchmarks",
			Shapes: []runner.Shape{shape("a", a, a*0.005), shape("b", b, b*0.005), shape("c", c, 0)}}
	}
	// 4% slower everywhere: inside the 5% bound.
	if a, skip := tracking.Evaluate(th, base, run(104, 208, 312)); a != nil || skip != "" {
		t.Errorf("4%% slower: alert %+v, skip %q", a, skip)
	}
	// Shape a 20% slower (its interval well below 0.95), shape c (no
	// interval) 10% slower by value; b within the bound.
	a, _ := tracking.Evaluate(th, base, run(125, 201, 333.3))
	if a == nil || len(a.Shapes) != 2 || a.Shapes[0].Label != "a" || a.Shapes[1].Label != "c" {
		t.Fatalf("alert: %+v", a)
	}
	if r := a.Shapes[0].Ratio; r.Value != 100.0/125 || !r.HasInterval() || r.Hi >= 0.95 {
		t.Errorf("shape a ratio: %+v", r)
	}
	if !strings.Contains(a.Summary, "more than 5% slower than baseline run #1 on 2 of 3 shapes (round 2); worst: a at 0.800x") {
		t.Errorf("summary: %s", a.Summary)
	}
	// 6% slower but the interval reaches above 0.95: noise, no alert.
	noisy := run(106, 200, 300)
	noisy.Shapes[0].VariantSEMUs = 3
	if a, _ := tracking.Evaluate(th, base, noisy); a != nil {
		t.Errorf("a 6%% slowdown inside its interval raised %+v", a)
	}
	// Not comparable, the baseline itself, no result: nothing, with why.
	other := run(200, 400, 600)
	other.Device = "H100"
	if a, skip := tracking.Evaluate(th, base, other); a != nil || !strings.HasPrefix(skip, "not comparable: different device") {
		t.Errorf("another device: %+v %q", a, skip)
	}
	if a, skip := tracking.Evaluate(th, base, base); a != nil || skip == "" {
		t.Errorf("the baseline itself: %+v %q", a, skip)
	}
	if a, skip := tracking.Evaluate(th, base, &runner.Run{ID: 3, Problem: "p", Suite: "benchmarks"}); a != nil || skip != "no result" {
		t.Errorf("no result: %+v %q", a, skip)
	}
	suite := run(200, 400, 600)
	suite.Suite = "tests"
	if _, skip := tracking.Evaluate(th, base, suite); skip != "not comparable: different suite" {
		t.Errorf("another suite: %q", skip)
	}
}

func TestSourceHashAndBuild(t *testing.T) {
	doc := json.RawMessage(`{"schema_version": 2, "variant": {"spec": "baseline", "source_hash": "abc123"}}`)
	if h := tracking.SourceHash(&runner.Run{Result: doc, Variant: "baseline"}); h != "abc123" {
		t.Errorf("bench document: %q", h)
	}
	if h := tracking.SourceHash(&runner.Run{Variant: "kernel:f00d?stages=2"}); h != "f00d" {
		t.Errorf("submitted kernel: %q", h)
	}
	if h := tracking.SourceHash(&runner.Run{Variant: "baseline"}); h != "" {
		t.Errorf("an import of bare times: %q", h)
	}
	if tracking.AppBuild() == "" {
		t.Error("AppBuild is empty")
	}
}

// hookLog is a webhook receiver that checks signatures and keeps events.
type hookLog struct {
	mu     sync.Mutex
	events []notify.Event
	raw    []string
}

func (h *hookLog) handler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !notify.Verify(secret, body, r.Header.Get(notify.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev notify.Event
		_ = json.Unmarshal(body, &ev)
		h.mu.Lock()
		h.events, h.raw = append(h.events, ev), append(h.raw, string(body))
		h.mu.Unlock()
	})
}

func (h *hookLog) types() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		out = append(out, e.Type)
	}
	return out
}

// The whole path on a real database: a threshold on a round; an import
// through the wrapped store is a finished run; a regressed one raises a
// stored alert, provenance is recorded, and the webhook receives
// run.finished and regression.found, signed; a failed run sends run.failed.
func TestFinishedRunsRaiseAlertsAndEvents(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { db.Close() })
	admin, err := db.CreateUser(ctx, "admin", "Admin", pitches.RoleAdmin, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRound(ctx, admin, pitches.RoundInput{Number: 1, Title: "R1", Criteria: []pitches.Criterion{{Key: "speedup", Name: "S", Weight: 100}}}); err != nil {
		t.Fatal(err)
	}
	p, err := db.FilePitch(ctx, admin, pitches.PitchInput{RoundNumber: 1, Title: "T", Claim: pitches.Range{Lo: 1, Hi: 2}, Variant: "baseline"})
	if err != nil {
		t.Fatal(err)
	}
	var recv hookLog
	srv := httptest.NewServer(recv.handler("hook-secret-0123456789"))
	t.Cleanup(srv.Close)
	if _, err := db.SaveWebhook(ctx, notify.Hook{URL: srv.URL, Secret: "hook-secret-0123456789", Active: true,
		Events: []string{notify.EventRunFinished, notify.EventRegression, notify.EventRunFailed}}, admin.ID); err != nil {
		t.Fatal(err)
	}
	n := notify.New(notify.Config{Store: db, Backoff: time.Millisecond})
	tr := tracking.New(tracking.Config{Store: db, Runs: db, Pitches: db, Notifier: n, Build: "rev-test"})
	store := tr.WrapStore(db)

	imp := func(pitchID int64, us float64) *runner.Run {
		t.Helper()
		req := &runner.ImportRequest{Device: "B200", Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline", Baseline: "baseline",
			PitchID: pitchID, Shapes: []runner.ImportShape{{Label: "g=8 N=4096 K=7168", BaselineUs: 400, VariantUs: us,
				BaselineSamplesUs: []float64{396, 400, 404, 398, 402}, VariantSamplesUs: []float64{us * 0.99, us, us * 1.01, us * 0.995, us * 1.005}}}}
		if err := req.Validate(runner.KernelsCatalog{}); err != nil {
			t.Fatal(err)
		}
		run, res, err := req.ImportResult(admin.ID)
		if err != nil {
			t.Fatal(err)
		}
		out, err := store.Import(ctx, run, res)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := imp(0, 300)
	if _, err := db.AddThreshold(ctx, tracking.Threshold{Round: 1, BaselineRun: base.ID, Percent: 10}); err != nil {
		t.Fatal(err)
	}
	fine := imp(p.ID, 310) // 3% slower: fine
	slow := imp(p.ID, 400) // 25% slower: an alert
	other := imp(0, 400)   // slower but of no pitch: the round's threshold does not cover it
	if as, _ := db.Alerts(ctx, tracking.AlertFilter{RunID: fine.ID}); len(as) != 0 {
		t.Errorf("alerts on run %d: %+v", fine.ID, as)
	}
	if as, _ := db.Alerts(ctx, tracking.AlertFilter{RunID: other.ID}); len(as) != 0 {
		t.Errorf("alerts on run %d (no pitch): %+v", other.ID, as)
	}
	as, err := db.Alerts(ctx, tracking.AlertFilter{RunID: slow.ID})
	if err != nil || len(as) != 1 || as[0].BaselineRun != base.ID || as[0].Scope != "round 1" || len(as[0].Shapes) != 1 {
		t.Fatalf("alerts on run %d: %+v %v", slow.ID, as, err)
	}
	// A variant's threshold covers runs of no pitch too.
	vth, err := db.AddThreshold(ctx, tracking.Threshold{Problem: "nvfp4_group_gemm", Variant: "baseline", BaselineRun: base.ID, Percent: 20})
	if err != nil {
		t.Fatal(err)
	}
	slower := imp(0, 420) // 29% slower than the baseline run
	vas, err := db.Alerts(ctx, tracking.AlertFilter{RunID: slower.ID})
	if err != nil || len(vas) != 1 || vas[0].ThresholdID != vth.ID || vas[0].Scope != "variant baseline of nvfp4_group_gemm" {
		t.Errorf("variant threshold's alerts on run %d: %+v %v", slower.ID, vas, err)
	}
	prov, err := db.Provenances(ctx, []int64{slow.ID})
	if err != nil || prov[slow.ID].AppBuild != "rev-test" {
		t.Errorf("provenance: %+v %v", prov, err)
	}

	// A failed run: queued, then failed through the wrapped store.
	q, err := store.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MarkFailed(ctx, q.ID, runner.Finish{Reason: "crashed"}); err != nil {
		t.Fatal(err)
	}
	// A run left running by a server that died fails at the next start.
	q2, err := store.Enqueue(ctx, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MarkRunning(ctx, q2.ID); err != nil {
		t.Fatal(err)
	}
	if ids, err := store.MarkInterrupted(ctx); err != nil || len(ids) != 1 || ids[0] != q2.ID {
		t.Fatalf("interrupted: %v %v", ids, err)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The system's end of a run measured here is in the audit log; an
	// import is the importer's change (recorded by the web layer).
	fails, err := db.AuditLog(ctx, pitches.AuditFilter{Action: "run.fail"})
	if err != nil || len(fails) != 2 || fails[1].ActorID != 0 || string(fails[1].Before) != `{"status":"queued"}` ||
		!strings.Contains(string(fails[1].After), `"reason":"crashed"`) || string(fails[0].Before) != `{"status":"running"}` ||
		!strings.Contains(string(fails[0].After), `"reason":"interrupted"`) {
		t.Errorf("run.fail entries: %+v %v", fails, err)
	}
	if fin, _ := db.AuditLog(ctx, pitches.AuditFilter{Action: "run.finish"}); len(fin) != 0 {
		t.Errorf("imports were audited as the system's: %+v", fin)
	}
	got := strings.Join(recv.types(), " ")
	if strings.Count(got, notify.EventRunFinished) != 5 || strings.Count(got, notify.EventRegression) != 2 || strings.Count(got, notify.EventRunFailed) != 2 {
		t.Errorf("events received: %s", got)
	}
	for _, raw := range recv.raw {
		if strings.Contains(raw, `"type":"regression.found"`) && !strings.Contains(raw, `"summary":"run #`) {
			t.Errorf("regression event: %s", raw)
		}
		if strings.Contains(raw, `"type":"run.failed"`) && !strings.Contains(raw, `"reason":"crashed"`) && !strings.Contains(raw, `"reason":"interrupted"`) {
			t.Errorf("failure event: %s", raw)
		}
	}
}

// A 5% bound is 5% more time: 5.2% more fires, 4.8% does not (a bound on
// the speed ratio, 1 - 5%, let 5.2% through). When the run's own baseline
// kernel slowed as much, the alert still fires on the time, and says so.
func TestEvaluateBoundIsTimeAndNotesThePairedSpeedup(t *testing.T) {
	base := &runner.Run{ID: 1, HasResult: true, Imported: true, Device: "B200", Problem: "p", Suite: "benchmarks",
		Shapes: []runner.Shape{{Label: "s", VariantMedianUs: 50, Speedup: runner.Interval{Value: 2}}}}
	th := tracking.Threshold{ID: 4, Problem: "p", Variant: "v", BaselineRun: 1, Percent: 5}
	run := func(us, speedup float64) *runner.Run {
		return &runner.Run{ID: 9, HasResult: true, Imported: true, Device: "B200", Problem: "p", Suite: "benchmarks",
			Shapes: []runner.Shape{{Label: "s", VariantMedianUs: us, Speedup: runner.Interval{Value: speedup}}}}
	}
	if a, _ := tracking.Evaluate(th, base, run(52.4, 1.9)); a != nil {
		t.Errorf("4.8%% more time raised %s", a.Summary)
	}
	a, _ := tracking.Evaluate(th, base, run(52.6, 1.9))
	if a == nil || strings.Contains(a.Summary, "check the machine") {
		t.Fatalf("5.2%% more time, the speedup down too: %+v", a)
	}
	a, _ = tracking.Evaluate(th, base, run(60, 2.0)) // the baseline kernel slowed as much
	if a == nil || a.Shapes[0].Paired != 1 || !strings.Contains(a.Summary, "the baseline kernel slowed as much, so check the machine") {
		t.Fatalf("a slower machine: %+v", a)
	}
}

// A threshold's baseline run must count as a result and, for a round's
// threshold, be the round's measurement in a round that is not closed.
func TestCheckBaselineRun(t *testing.T) {
	ok := &runner.Run{ID: 1, Problem: "p", Suite: "benchmarks", Baseline: "baseline", Status: runner.StatusSucceeded, HasResult: true}
	round := &pitches.Round{Number: 3, Status: pitches.RoundJudging, Baseline: "baseline",
		Measurement: pitches.RoundMeasurement{Problem: "p", Suite: "benchmarks"}}
	th := tracking.Threshold{Problem: "p", Variant: "v", BaselineRun: 1, Percent: 5}
	if err := tracking.CheckBaselineRun(th, ok, nil); err != nil {
		t.Fatalf("a succeeded run: %v", err)
	}
	if err := tracking.CheckBaselineRun(tracking.Threshold{Round: 3, BaselineRun: 1, Percent: 5}, ok, round); err != nil {
		t.Fatalf("a run of the round's measurement: %v", err)
	}
	for name, c := range map[string]struct {
		run   runner.Run
		th    tracking.Threshold
		round *pitches.Round
		field string
		want  string
	}{
		"incorrect": {runner.Run{ID: 2, Problem: "p", Status: runner.StatusIncorrect, HasResult: true}, th, nil, "baseline_run", "does not count as a result (incorrect)"},
		"suspect":   {runner.Run{ID: 2, Problem: "p", Status: runner.StatusSuspect, HasResult: true}, th, nil, "baseline_run", "suspect and not accepted"},
		"problem":   {runner.Run{ID: 2, Problem: "q", Status: runner.StatusSucceeded, HasResult: true}, th, nil, "baseline_run", "measures q, not p"},
		"suite": {runner.Run{ID: 2, Problem: "p", Suite: "tests", Baseline: "baseline", Status: runner.StatusSucceeded, HasResult: true},
			tracking.Threshold{Round: 3, BaselineRun: 2, Percent: 5}, round, "baseline_run", "is not round 3's measurement: suite tests"},
		"closed": {*ok, tracking.Threshold{Round: 3, BaselineRun: 1, Percent: 5},
			&pitches.Round{Number: 3, Status: pitches.RoundClosed, Measurement: round.Measurement}, "round", "round 3 is closed"},
	} {
		err := tracking.CheckBaselineRun(c.th, &c.run, c.round)
		if pitches.ErrorField(err) != c.field || !strings.Contains(pitches.ErrorMessage(err), c.want) {
			t.Errorf("%s: %v (field %q), want %q on %s", name, err, pitches.ErrorField(err), c.want, c.field)
		}
	}
}
