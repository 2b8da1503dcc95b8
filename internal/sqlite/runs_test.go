package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

func mustEnqueue(tb testing.TB, db *DB, req runner.Request) *runner.Run {
	tb.Helper()
	run, err := db.Enqueue(context.Background(), req)
	if err != nil {
		tb.Fatalf("enqueue %+v: %v", req, err)
	}
	return run
}

func testResult(shapes int) *runner.Result {
	r := &runner.Result{
		Doc:     json.RawMessage(`{"note":"stand-in document"}`),
		Speedup: runner.Interval{Value: 1.25, Lo: 1.2, Hi: 1.3},
		Correct: true,
		Flags:   []string{"throttled", "has,comma"},
	}
	for i := 0; i < shapes; i++ {
		r.Shapes = append(r.Shapes, runner.Shape{
			Index: i, Label: "g=8 N=4096 K=7168", BaselineMedianUs: 373, VariantMedianUs: 298.4,
			VariantSamples: 40, FloorUs: 75.2, FractionOfFloor: 75.2 / 298.4,
			Speedup: runner.Interval{Value: 1.25, Lo: 1.2, Hi: 1.3}, Correct: true, MaxAbsErr: 1e-3,
			Flags: []string{"below_floor"},
		})
	}
	return r
}

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)

	run := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline?stages=3",
		Baseline: "baseline", Device: "0", PitchID: p.ID, RequestedBy: c.oracle.ID})
	if run.Status != runner.StatusQueued || run.PitchID != p.ID || run.RequestedBy != c.oracle.ID || run.CreatedAt.IsZero() {
		t.Fatalf("enqueued run = %+v", run)
	}
	other := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "baseline", Device: "cpu"})

	// Each device's worker sees only its own queue.
	got, err := db.ClaimNext(ctx, "0")
	if err != nil || got == nil || got.ID != run.ID {
		t.Fatalf("claim on device 0 = %+v, %v; want run %d", got, err, run.ID)
	}
	if got, _ := db.ClaimNext(ctx, "1"); got != nil {
		t.Fatalf("claim on device 1 = %+v, want none", got)
	}
	if err := db.MarkRunning(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, db.MarkRunning(ctx, run.ID), pitches.ECONFLICT, "")
	if got, _ := db.ClaimNext(ctx, "0"); got != nil {
		t.Fatalf("a running run was claimed again: %+v", got)
	}

	if err := db.MarkSucceeded(ctx, run.ID, testResult(4), runner.Finish{Log: "hello\n", Stderr: "compiling\n"}); err != nil {
		t.Fatal(err)
	}
	got, err = db.Get(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusSucceeded || !got.HasResult || got.Speedup.Value != 1.25 || got.Speedup.Lo != 1.2 ||
		!got.Correct || len(got.Shapes) != 4 || got.Log != "hello\n" || got.Stderr != "compiling\n" ||
		got.StartedAt.IsZero() || got.FinishedAt.IsZero() || string(got.Result) != `{"note":"stand-in document"}` {
		t.Fatalf("succeeded run = %+v", got)
	}
	if len(got.Flags) != 2 || got.Flags[1] != "has;comma" {
		t.Fatalf("flags = %q", got.Flags)
	}
	s := got.Shapes[3]
	if s.Index != 3 || s.BaselineMedianUs != 373 || s.Speedup.Hi != 1.3 || !s.Correct || s.Flags[0] != "below_floor" {
		t.Fatalf("shape = %+v", s)
	}
	// A finished run does not move again.
	wantErr(t, db.MarkFailed(ctx, run.ID, runner.Finish{Reason: "late"}), pitches.ECONFLICT, "")
	wantErr(t, db.MarkSucceeded(ctx, other.ID, testResult(1), runner.Finish{}), pitches.ECONFLICT, "")
	if n := count(t, db.w, fmt.Sprintf(`SELECT count(*) FROM run_shapes WHERE run_id = %d`, other.ID)); n != 0 {
		t.Fatalf("refused result left %d shapes", n)
	}
	_, err = db.Get(ctx, 999)
	wantErr(t, err, pitches.ENOTFOUND, "")
	wantErr(t, db.MarkCancelled(ctx, 999, runner.Finish{}), pitches.ENOTFOUND, "")

	// History queries.
	list, err := db.List(ctx, runner.Filter{Problem: "nvfp4_group_gemm", Variant: "baseline?stages=3", Device: "0", WithShapes: true})
	if err != nil || len(list) != 1 || list[0].ID != run.ID || len(list[0].Shapes) != 4 || list[0].Result != nil {
		t.Fatalf("history = %+v, %v", list, err)
	}
	list, err = db.List(ctx, runner.Filter{PitchID: p.ID})
	if err != nil || len(list) != 1 || list[0].Shapes != nil {
		t.Fatalf("by pitch = %+v, %v", list, err)
	}
	list, err = db.List(ctx, runner.Filter{})
	if err != nil || len(list) != 2 || list[0].ID != other.ID {
		t.Fatalf("all runs, newest first = %+v, %v", list, err)
	}
	list, _ = db.List(ctx, runner.Filter{Status: runner.StatusQueued})
	if len(list) != 1 || list[0].ID != other.ID {
		t.Fatalf("queued = %+v", list)
	}
	list, _ = db.List(ctx, runner.Filter{BeforeID: other.ID, Limit: 1})
	if len(list) != 1 || list[0].ID != run.ID {
		t.Fatalf("page = %+v", list)
	}
}

func TestRunSucceededIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	run := mustEnqueue(t, db, runner.Request{Problem: "p", Suite: "tests", Variant: "v", Device: "cpu"})
	if err := db.MarkRunning(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	res := testResult(2)
	res.Shapes[1].Index = 0 // duplicate primary key: the second insert fails
	if err := db.MarkSucceeded(ctx, run.ID, res, runner.Finish{}); err == nil {
		t.Fatal("want an error for duplicate shape rows")
	}
	got, err := db.Get(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runner.StatusRunning || got.HasResult || len(got.Shapes) != 0 {
		t.Fatalf("after a failed store the run is %+v; want it untouched", got)
	}
	if err := db.MarkSucceeded(ctx, run.ID, testResult(2), runner.Finish{}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
}

func TestRunInterruptedAndRequeue(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	a := mustEnqueue(t, db, runner.Request{Problem: "p", Suite: "benchmarks", Variant: "v?stages=2", Baseline: "b", Device: "1", Seed: 7, RequestedBy: c.oracle.ID})
	b := mustEnqueue(t, db, runner.Request{Problem: "p", Suite: "benchmarks", Variant: "v", Device: "1"})
	if err := db.MarkRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err := db.Requeue(ctx, a.ID, 0)
	wantErr(t, err, pitches.ECONFLICT, "")

	ids, err := db.MarkInterrupted(ctx)
	if err != nil || len(ids) != 1 || ids[0] != a.ID {
		t.Fatalf("interrupted = %v, %v", ids, err)
	}
	got, _ := db.Get(ctx, a.ID)
	if got.Status != runner.StatusFailed || got.Reason != runner.ReasonInterrupted || got.FinishedAt.IsZero() {
		t.Fatalf("interrupted run = %+v", got)
	}
	if got, _ := db.Get(ctx, b.ID); got.Status != runner.StatusQueued {
		t.Fatalf("a queued run was touched: %+v", got)
	}

	again, err := db.Requeue(ctx, a.ID, c.pragmatist.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != runner.StatusQueued || again.RequeueOf != a.ID || again.Variant != "v?stages=2" || again.Baseline != "b" ||
		again.Seed != 7 || again.Device != "1" || again.RequestedBy != c.pragmatist.ID {
		t.Fatalf("requeued = %+v", again)
	}
	_, err = db.Requeue(ctx, 12345, 0)
	wantErr(t, err, pitches.ENOTFOUND, "")
	_, err = db.Requeue(ctx, a.ID, 999)
	wantErr(t, err, pitches.EINVALID, "requested_by")
}

func TestRunImportAndRefs(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	_, err := db.Enqueue(ctx, runner.Request{Problem: "p", Suite: "tests", Variant: "v", Device: "cpu", PitchID: 42})
	wantErr(t, err, pitches.EINVALID, "pitch_id")
	_, err = db.Enqueue(ctx, runner.Request{Problem: "p", Suite: "tests", Variant: "v", Device: "cpu", RequestedBy: 42})
	wantErr(t, err, pitches.EINVALID, "requested_by")
	imp := &runner.Run{Problem: "p", Suite: "benchmarks", Variant: "pipeline_stages", Baseline: "baseline", Device: "B200", PitchID: 42}
	_, err = db.Import(ctx, imp, testResult(4))
	wantErr(t, err, pitches.EINVALID, "pitch_id")
	if n := count(t, db.w, `SELECT count(*) FROM runs`); n != 0 {
		t.Fatalf("refused requests stored %d runs", n)
	}

	imp.PitchID = 0
	got, err := db.Import(ctx, imp, testResult(4))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Imported || got.Status != runner.StatusSucceeded || got.Device != "B200" || len(got.Shapes) != 4 {
		t.Fatalf("imported = %+v", got)
	}
	// An imported run is never claimed by a worker nor re-run.
	if c, _ := db.ClaimNext(ctx, "B200"); c != nil {
		t.Fatalf("claimed an imported run: %+v", c)
	}
	_, err = db.Requeue(ctx, got.ID, 0)
	wantErr(t, err, pitches.ECONFLICT, "")
	yes := true
	list, _ := db.List(ctx, runner.Filter{Imported: &yes})
	if len(list) != 1 {
		t.Fatalf("imported list = %+v", list)
	}
}
