package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

func filePitch(db *DB, by *pitches.User, round int, title, variant string, repitchOf int64) (*pitches.Pitch, error) {
	return db.FilePitch(context.Background(), by, pitches.PitchInput{RoundNumber: round, Title: title,
		Claim: pitches.Range{Lo: 1.1, Hi: 1.3}, Variant: variant, RepitchOf: repitchOf})
}

func mustFileVariant(tb testing.TB, db *DB, by *pitches.User, round int, title, variant string) *pitches.Pitch {
	tb.Helper()
	p, err := filePitch(db, by, round, title, variant, 0)
	if err != nil {
		tb.Fatalf("file pitch %q (%s): %v", title, variant, err)
	}
	return p
}

// importResult stores an imported run of pitch pitchID with status st (a
// status with a result: succeeded, incorrect or suspect).
func importResult(tb testing.TB, db *DB, by *pitches.User, pitchID int64, variant string, st runner.Status) *runner.Run {
	tb.Helper()
	imp := &runner.ImportRequest{Device: "B200", Problem: "nvfp4_group_gemm", Suite: runner.SuiteBenchmarks, Variant: variant, Baseline: "baseline", PitchID: pitchID,
		Shapes: []runner.ImportShape{{BaselineUs: 373, VariantUs: 488}}}
	run, res, err := imp.ImportResult(by.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if st != runner.StatusSucceeded {
		run.Status, run.Reason = st, "for this test"
	}
	stored, err := db.Import(context.Background(), run, res)
	if err != nil {
		tb.Fatal(err)
	}
	return stored
}

// wantVariantTaken checks a refusal by the one-pitch-per-variant rule: 409
// on field "variant" naming the pitch that holds it, and nothing written.
func wantVariantTaken(tb testing.TB, db *DB, before string, err error, holder int64, round int) {
	tb.Helper()
	wantErr(tb, err, pitches.ECONFLICT, "variant")
	if msg := pitches.ErrorMessage(err); !strings.Contains(msg, fmt.Sprintf("pitch %d ", holder)) || !strings.Contains(msg, fmt.Sprintf("in round %d", round)) {
		tb.Fatalf("message %q does not name pitch %d of round %d", msg, holder, round)
	}
	if dump(tb, db) != before {
		tb.Fatal("a refused write changed the database")
	}
}

// A contestant has one active pitch per variant in a round: a second
// filing of the variant, or an edit to it, is refused (file both, withdraw
// the worse result, and the standings would rank a re-roll). Other
// contestants, other rounds, an empty variant and the pitch's own variant
// are not conflicts, and a pitch withdrawn before any result frees its
// variant.
func TestOneActivePitchPerVariant(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	const v = "baseline?stages=3"
	a := mustFileVariant(t, db, c.c[1], 1, "Pipeline Stages", v)

	before := dump(t, db)
	_, err := filePitch(db, c.c[1], 1, "Pipeline Stages, take two", v, 0)
	wantVariantTaken(t, db, before, err, a.ID, 1)
	if msg := pitches.ErrorMessage(err); msg != fmt.Sprintf("pitch %d already pitches this variant in round 1; edit or withdraw it instead", a.ID) {
		t.Errorf("message %q", msg)
	}

	// Another contestant may pitch the same variant; so may an admin or a
	// shark filing their own pitch.
	mustFileVariant(t, db, c.c[2], 1, "Stages too", v)
	mustFileVariant(t, db, c.admin, 1, "Admin's stages", v)
	// No variant yet takes nothing; a different variant is free.
	b := mustFileVariant(t, db, c.c[1], 1, "Something else", "")
	mustFileVariant(t, db, c.c[1], 1, "Something else again", "")
	mustFileVariant(t, db, c.c[1], 1, "Two stages", "baseline?stages=2")

	// Editing another pitch's variant to the taken one is refused like a
	// filing; an edit that keeps the pitch's own variant is not.
	before = dump(t, db)
	_, err = db.EditPitch(ctx, c.c[1], b.ID, pitches.PitchInput{Title: b.Title, Claim: b.Claim, Variant: v})
	wantVariantTaken(t, db, before, err, a.ID, 1)
	if _, err := db.EditPitch(ctx, c.c[1], a.ID, pitches.PitchInput{Title: "Pipeline Stages (3)", Claim: a.Claim, Variant: v}); err != nil {
		t.Fatalf("edit keeping the pitch's own variant: %v", err)
	}

	// Another round is another measurement: a re-pitch, or a fresh pitch,
	// of the variant in round 2 is allowed while round 1's stays active.
	mustRound(t, db, c.admin, 2, round1Rubric)
	if _, err := filePitch(db, c.c[1], 2, "Pipeline Stages again", v, a.ID); err != nil {
		t.Fatalf("re-pitch into round 2: %v", err)
	}

	// Withdrawn before any result (a failed run has none): the variant is
	// free again in round 1.
	failed := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: v, Device: "0", PitchID: a.ID})
	if err := db.MarkFailed(ctx, failed.ID, runner.Finish{Reason: "crashed"}); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: v, Device: "0", PitchID: a.ID}) // queued: no result yet
	if _, err := db.WithdrawPitch(ctx, c.c[1], a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := filePitch(db, c.c[1], 1, "Pipeline Stages, refiled", v, 0); err != nil {
		t.Fatalf("filing the variant of a pitch withdrawn before any result: %v", err)
	}
}

// Withdrawing a measured pitch does not free its variant in that round:
// a new pitch of it, or an edit or a kernel upload to it, would be a
// second try at a result already seen. Any run with a result counts
// (succeeded, incorrect, suspect), as for the lock on claims and variants.
// A re-pitch into a later round stays allowed.
func TestWithdrawnMeasuredPitchKeepsItsVariant(t *testing.T) {
	ctx := context.Background()
	for _, st := range []runner.Status{runner.StatusSucceeded, runner.StatusIncorrect, runner.StatusSuspect} {
		t.Run(string(st), func(t *testing.T) {
			db := MustOpenDB(t)
			c := mustCast(t, db)
			mustRound(t, db, c.admin, 1, round1Rubric)
			const v = "baseline?stages=3"
			a := mustFileVariant(t, db, c.c[1], 1, "Pipeline Stages", v)
			run := importResult(t, db, c.admin, a.ID, v, st)
			if _, err := db.WithdrawPitch(ctx, c.c[1], a.ID); err != nil {
				t.Fatal(err)
			}

			before := dump(t, db)
			_, err := filePitch(db, c.c[1], 1, "Pipeline Stages, take two", v, 0)
			wantVariantTaken(t, db, before, err, a.ID, 1)
			if msg := pitches.ErrorMessage(err); !strings.Contains(msg, fmt.Sprintf("run #%d", run.ID)) || !strings.Contains(msg, "withdrawn") {
				t.Errorf("message %q does not say the pitch was withdrawn after run #%d", msg, run.ID)
			}

			b := mustFileVariant(t, db, c.c[1], 1, "Something else", "")
			before = dump(t, db)
			_, err = db.EditPitch(ctx, c.c[1], b.ID, pitches.PitchInput{Title: b.Title, Claim: b.Claim, Variant: v})
			wantVariantTaken(t, db, before, err, a.ID, 1)

			// Others are not bound by c1's withdrawn pitch.
			mustFileVariant(t, db, c.c[2], 1, "Stages too", v)

			mustRound(t, db, c.admin, 2, round1Rubric)
			if _, err := filePitch(db, c.c[1], 2, "Pipeline Stages again", v, a.ID); err != nil {
				t.Fatalf("re-pitch into round 2: %v", err)
			}
		})
	}
}

// A kernel upload sets the pitch's variant (kernel:<hash>), so it is held
// to the same rule: the same submission, with the same knobs, on a second
// pitch of the contestant's in the round is refused.
func TestKernelUploadOnePitchPerVariant(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	a := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)
	b := mustPitch(t, db, c.c[1], 1, "Clear kernel, take two", 1.1, 1.3)
	up := testUpload("// v1\n")
	if _, err := db.UploadKernel(ctx, c.c[1], a.ID, up); err != nil {
		t.Fatal(err)
	}
	before := dump(t, db)
	_, err := db.UploadKernel(ctx, c.c[1], b.ID, up)
	wantVariantTaken(t, db, before, err, a.ID, 1)
	// With other knobs it is another variant.
	up.Knobs = "stages=2"
	if _, err := db.UploadKernel(ctx, c.c[1], b.ID, up); err != nil {
		t.Fatalf("the same kernel with other knobs: %v", err)
	}

	// Measured, then withdrawn: its kernel:<hash> stays taken.
	p, err := db.Pitch(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	importResult(t, db, c.admin, a.ID, p.Variant, runner.StatusSucceeded)
	if _, err := db.WithdrawPitch(ctx, c.c[1], a.ID); err != nil {
		t.Fatal(err)
	}
	d := mustPitch(t, db, c.c[1], 1, "Clear kernel, take three", 1.1, 1.3)
	up.Knobs = ""
	before = dump(t, db)
	_, err = db.UploadKernel(ctx, c.c[1], d.ID, up)
	wantVariantTaken(t, db, before, err, a.ID, 1)
}

// The check runs in the transaction that writes the pitch: of concurrent
// filings of one variant by one contestant, exactly one is stored.
func TestConcurrentFilingsOfOneVariant(t *testing.T) {
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = filePitch(db, c.c[1], 1, fmt.Sprintf("Try %d", i), "baseline?stages=3", 0)
		}()
	}
	wg.Wait()
	stored := 0
	for _, err := range errs {
		switch pitches.ErrorCode(err) {
		case "":
			stored++
		case pitches.ECONFLICT:
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if stored != 1 || count(t, db.r, `SELECT count(*) FROM pitches WHERE variant = 'baseline?stages=3'`) != 1 {
		t.Fatalf("%d filings stored, want 1", stored)
	}
}
