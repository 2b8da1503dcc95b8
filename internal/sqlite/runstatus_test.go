package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Migration 102 rebuilds runs (a CHECK constraint cannot change in place):
// a database at version 101 keeps every run and every shape row, a run
// stored "succeeded" with an incorrect kernel becomes "incorrect", and the
// device name is read from the stored fingerprint.
func TestMigration102KeepsRunsAndShapes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawDBAt(t, path, 101)
	for _, q := range []string{
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at, result, geomean, correct)
			VALUES (1, 'nvfp4_group_gemm', 'benchmarks', 'baseline', '0', 'succeeded', '2026-01-01T00:00:00.000000000Z',
			'{"fingerprint":{"device_model":"NVIDIA H100 80GB HBM3"}}', 1.1, 1)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at, result, geomean, correct, requeue_of)
			VALUES (2, 'nvfp4_group_gemm', 'benchmarks', 'baseline', '0', 'succeeded', '2026-01-01T00:00:00.000000000Z', '{}', 0.9, 0, 1)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, created_at, result, geomean, correct, imported)
			VALUES (3, 'nvfp4_group_gemm', 'benchmarks', 'x', 'B200', 'succeeded', '2026-01-01T00:00:00.000000000Z', '{"note":"round 1 recap"}', 0.74, 0, 1)`,
		`INSERT INTO runs (id, problem, suite, variant, device, status, reason, created_at) VALUES (4, 'p', 'tests', 'v', 'cpu', 'failed', 'boom', '2026-01-01T00:00:00.000000000Z')`,
		`INSERT INTO run_shapes (run_id, idx, label, correct) VALUES (1, 0, 'a', 1), (1, 1, 'b', 1), (2, 0, 'a', 0), (3, 0, 'a', 0)`,
		`UPDATE run_shapes SET flags = 'correctness_not_reported' WHERE run_id = 3`,
		`INSERT INTO rounds (number, title, rules, status, created_at, updated_at) VALUES (1, 'old', '', 'closed', '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z')`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, want := range []struct {
		id         int64
		status     runner.Status
		deviceName string
		shapes     int
	}{{1, runner.StatusSucceeded, "NVIDIA H100 80GB HBM3", 2}, {2, runner.StatusIncorrect, "", 1}, {3, runner.StatusSucceeded, "B200", 1}, {4, runner.StatusFailed, "", 0}} {
		run, err := db.Get(ctx, want.id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != want.status || run.DeviceName != want.deviceName || len(run.Shapes) != want.shapes {
			t.Errorf("run %d after migration: status %s device %q shapes %d; want %s %q %d", want.id, run.Status, run.DeviceName, len(run.Shapes), want.status, want.deviceName, want.shapes)
		}
	}
	if run, _ := db.Get(ctx, 3); run.Note != "round 1 recap" {
		t.Errorf("run 3: note %q after migration 104", run.Note)
	}
	if run, _ := db.Get(ctx, 2); run.RequeueOf != 1 || !strings.Contains(run.Reason, "incorrect") {
		t.Errorf("run 2: requeue_of %d, reason %q", run.RequeueOf, run.Reason)
	}
	// The rebuilt tables keep their foreign keys: deleting a run still
	// removes its shapes.
	if _, err := db.w.ExecContext(ctx, `DELETE FROM runs WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db.w, `SELECT count(*) FROM run_shapes WHERE run_id = 1`); n != 0 {
		t.Fatalf("%d shapes of a deleted run remain", n)
	}
	var fk string
	if err := db.w.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'run_shapes'`).Scan(&fk); err != nil || !strings.Contains(fk, "REFERENCES \"runs\"") && !strings.Contains(fk, "REFERENCES runs") {
		t.Fatalf("run_shapes schema after rename: %v %s", err, fk)
	}
	if n := count(t, db.w, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('runs_queue', 'runs_history', 'runs_pitch', 'runs_status', 'run_shapes_label')`); n != 5 {
		t.Fatalf("%d of 5 indexes after the rebuild", n)
	}
	// Rounds made before 103 keep the measurement they had implicitly.
	if r, err := db.Round(ctx, 1); err != nil || r.Measurement != (pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "benchmarks", AllowImports: true}) {
		t.Fatalf("a round from before 103: %+v %v", r, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO rounds (number, title, rules, status, created_at, updated_at) VALUES (9, 't', '', 'pitching', '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	if r, err := db.Round(ctx, 9); err != nil || r.Measurement.Problem != "" || r.Measurement.Suite != "benchmarks" || r.Measurement.AllowImports {
		t.Fatalf("a new round's default measurement: %+v %v", r, err)
	}
}

// Incorrect and suspect runs keep their result; acceptance is for a suspect
// run only, once, with who and when.
func TestRunMeasuredStatusesAndAccept(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	runOf := func(status runner.Status, reason string) *runner.Run {
		t.Helper()
		run := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline", Device: "0"})
		if err := db.MarkRunning(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		res := testResult(2)
		res.DeviceName = "NVIDIA H100 80GB HBM3"
		if err := db.MarkMeasured(ctx, run.ID, status, res, runner.Finish{Reason: reason}); err != nil {
			t.Fatalf("mark %s: %v", status, err)
		}
		got, err := db.Get(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != status || got.Reason != reason || !got.HasResult || len(got.Shapes) != 2 || got.DeviceName != "NVIDIA H100 80GB HBM3" {
			t.Fatalf("stored %s run: %+v", status, got)
		}
		return got
	}
	inc := runOf(runner.StatusIncorrect, "incorrect: shape 1 (a): variant check timed_sample: 4096 of 4096 elements differ")
	sus := runOf(runner.StatusSuspect, "suspect: shape 1: median 20.1 us is below the speed-of-light floor 24.6 us")
	ok := runOf(runner.StatusSucceeded, "")

	if err := db.MarkMeasured(ctx, ok.ID, runner.StatusFailed, testResult(1), runner.Finish{}); err == nil {
		t.Fatal("a failed status with a result was stored")
	}
	_, err := db.Accept(ctx, inc.ID, c.admin.ID, "looked at it")
	wantErr(t, err, pitches.ECONFLICT, "")
	_, err = db.Accept(ctx, ok.ID, c.admin.ID, "looked at it")
	wantErr(t, err, pitches.ECONFLICT, "")
	_, err = db.Accept(ctx, 999, c.admin.ID, "looked at it")
	wantErr(t, err, pitches.ENOTFOUND, "")
	got, err := db.Accept(ctx, sus.ID, c.admin.ID, "profiled: the kernel really skips the zero blocks")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Accepted() || got.AcceptedBy != c.admin.ID || got.AcceptedAt.IsZero() || got.AcceptReason != "profiled: the kernel really skips the zero blocks" {
		t.Fatalf("accepted run %+v", got)
	}
	_, err = db.Accept(ctx, sus.ID, c.admin.ID, "again")
	wantErr(t, err, pitches.ECONFLICT, "")
	if again, _ := db.Get(ctx, sus.ID); again.AcceptReason != got.AcceptReason {
		t.Fatalf("a second acceptance changed the first: %q", again.AcceptReason)
	}
	// The status filter lists the new statuses.
	list, err := db.List(ctx, runner.Filter{Status: runner.StatusSuspect})
	if err != nil || len(list) != 1 || list[0].ID != sus.ID || !list[0].Accepted() {
		t.Fatalf("suspect runs: %+v %v", list, err)
	}
}

// A round's measurement is stored with the round, set by admins until the
// round closes, and left as it is by an edit that does not give one.
func TestRoundMeasurement(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	m := &pitches.RoundMeasurement{Problem: "nvfp4_dual_gemm", DeviceClass: "H100", AllowImports: true}
	r, err := db.CreateRound(ctx, c.admin, pitches.RoundInput{Number: 1, Title: "r1", Criteria: round1Rubric, Measurement: m})
	if err != nil {
		t.Fatal(err)
	}
	want := pitches.RoundMeasurement{Problem: "nvfp4_dual_gemm", Suite: "benchmarks", DeviceClass: "H100", AllowImports: true}
	if r.Measurement != want {
		t.Fatalf("created %+v, want %+v", r.Measurement, want)
	}
	if r, err = db.UpdateRound(ctx, c.admin, 1, pitches.RoundInput{Title: "r1 again", Criteria: round1Rubric}); err != nil || r.Measurement != want {
		t.Fatalf("an edit without a measurement changed it: %+v %v", r, err)
	}
	_, err = db.SetRoundMeasurement(ctx, c.oracle, 1, pitches.RoundMeasurement{Problem: "nvfp4_group_gemm"}, "baseline")
	wantErr(t, err, pitches.EFORBIDDEN, "")
	_, err = db.SetRoundMeasurement(ctx, c.admin, 1, pitches.RoundMeasurement{Problem: "x", DeviceClass: "a\nb"}, "baseline")
	wantErr(t, err, pitches.EINVALID, "device_class")
	r, err = db.SetRoundMeasurement(ctx, c.admin, 1, pitches.RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "tests"}, "baseline?stages=2")
	if err != nil || r.Measurement.Problem != "nvfp4_group_gemm" || r.Measurement.Suite != "tests" || r.Measurement.AllowImports || r.Baseline != "baseline?stages=2" {
		t.Fatalf("set measurement: %+v %v", r, err)
	}
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustStatus(t, db, c.admin, 1, pitches.RoundClosed)
	_, err = db.SetRoundMeasurement(ctx, c.admin, 1, pitches.RoundMeasurement{Problem: "nvfp4_dual_gemm"}, "baseline")
	wantErr(t, err, pitches.ECONFLICT, "")
	if r, _ := db.Round(ctx, 1); r.Measurement.Problem != "nvfp4_group_gemm" {
		t.Fatalf("a closed round's measurement changed: %+v", r.Measurement)
	}
}
