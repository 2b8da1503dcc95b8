package sqlite

import (
	"context"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// The one-pitch-per-variant rule ignores knob order: the same kernel with
// its knobs written in another order is the same variant, so a second pitch
// of it (filed, edited to it, or after the first was measured and
// withdrawn) would be a re-roll and is refused. It holds for free labels
// and submitted kernels too.
func TestOnePitchPerVariantIgnoresKnobOrder(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)

	for _, tc := range []struct{ first, again string }{
		{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3"},
		{"wgmma?tile_n=auto&stages=2", "wgmma?stages=2&tile_n=auto"},
		{"cute_dsl?b=2&a=1", "cute_dsl?a=1&b=2"}, // a free label
	} {
		a := mustFileVariant(t, db, c.c[1], 1, "First "+tc.first, tc.first)
		before := dump(t, db)
		_, err := filePitch(db, c.c[1], 1, "Again "+tc.again, tc.again, 0)
		wantVariantTaken(t, db, before, err, a.ID, 1)

		b := mustFileVariant(t, db, c.c[1], 1, "Other of "+tc.first, "")
		before = dump(t, db)
		_, err = db.EditPitch(ctx, c.c[1], b.ID, pitches.PitchInput{Title: b.Title, Claim: b.Claim, Variant: tc.again})
		wantVariantTaken(t, db, before, err, a.ID, 1)
	}

	// Measured under one spelling, withdrawn: another spelling stays taken.
	const v = "baseline?stages=2&tile_n=64"
	m := mustFileVariant(t, db, c.c[1], 1, "Measured", v)
	importResult(t, db, c.admin, m.ID, v, runner.StatusSucceeded)
	if _, err := db.WithdrawPitch(ctx, c.c[1], m.ID); err != nil {
		t.Fatal(err)
	}
	before := dump(t, db)
	_, err := filePitch(db, c.c[1], 1, "Measured, re-rolled", "baseline?tile_n=64&stages=2", 0)
	wantVariantTaken(t, db, before, err, m.ID, 1)

	// A submitted kernel's knobs, in another order, on a second pitch.
	k := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)
	up := testUpload("// v1\n")
	up.Knobs = "stages=2&tile_m=64"
	if _, err := db.UploadKernel(ctx, c.c[1], k.ID, up); err != nil {
		t.Fatal(err)
	}
	before = dump(t, db)
	_, err = filePitch(db, c.c[1], 1, "Clear kernel, reordered", pitches.KernelVariant(up.Hash, "tile_m=64&stages=2"), 0)
	wantVariantTaken(t, db, before, err, k.ID, 1)
	k2 := mustPitch(t, db, c.c[1], 1, "Clear kernel, take two", 1.1, 1.3)
	up.Knobs = "tile_m=64&stages=2"
	before = dump(t, db)
	_, err = db.UploadKernel(ctx, c.c[1], k2.ID, up)
	wantVariantTaken(t, db, before, err, k.ID, 1)
}
