package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// testUpload is an upload as the checker hands it over; the store trusts
// the hash (runner.SubmissionChecker computes it) and checks the limits.
func testUpload(source string) pitches.KernelUpload {
	manifest := `{"name":"clear","problem":"nvfp4_group_gemm","kind":"cuda","source":"clear.cu","min_arch":80,"entry":"clear_gemm",` +
		`"launch":{"mode":"sequential","block":[16,16,1],"tile_m":16,"tile_n":16,"shared_bytes":0}}`
	sum := sha256.Sum256([]byte(manifest + "\x00" + source))
	return pitches.KernelUpload{
		Hash:     hex.EncodeToString(sum[:]),
		Manifest: pitches.KernelManifest{Name: "clear", Problem: "nvfp4_group_gemm", Kind: "cuda", Source: "clear.cu", MinArch: 80, Entry: "clear_gemm"},
		Files:    map[string][]byte{"manifest.json": []byte(manifest), "clear.cu": []byte(source)},
		Report:   pitches.CompileReport{Status: "compiled", Report: []byte(`{"archs":[{"arch":"sm_80"}]}`)},
	}
}

// Every upload is a new version; the same bytes are stored once; the
// pitch's variant names the newest; a version keeps its compile report.
func TestKernelVersions(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)

	v1, v2 := testUpload("// v1\n"), testUpload("// v2\n")
	v1.Note = "first try"
	if got, err := db.UploadKernel(ctx, c.c[1], p.ID, v1); err != nil || got.Version != 1 || got.Hash != v1.Hash || got.Note != "first try" {
		t.Fatalf("upload v1: %+v, %v", got, err)
	}
	v2.Knobs = "unroll=2"
	if got, err := db.UploadKernel(ctx, c.admin, p.ID, v2); err != nil || got.Version != 2 || got.Uploader != "Admin" {
		t.Fatalf("upload v2 by an admin: %+v, %v", got, err)
	}
	back, err := db.UploadKernel(ctx, c.c[1], p.ID, v1) // back to the first: a new version, not a new source
	if err != nil || back.Version != 3 {
		t.Fatalf("re-upload v1: %+v, %v", back, err)
	}
	if n := count(t, db.r, `SELECT count(*) FROM kernel_sources`); n != 2 {
		t.Errorf("%d sources stored, want 2 (content-addressed)", n)
	}
	vs, err := db.KernelVersions(ctx, p.ID)
	if err != nil || len(vs) != 3 {
		t.Fatalf("versions: %d, %v", len(vs), err)
	}
	for i, want := range []string{v1.Hash, v2.Hash, v1.Hash} {
		if vs[i].Version != i+1 || vs[i].Hash != want || vs[i].Name != "clear" || vs[i].Kind != "cuda" || vs[i].Report.Status != "compiled" {
			t.Errorf("version %d = %+v", i+1, vs[i])
		}
	}
	if string(vs[0].Report.Report) != `{"archs":[{"arch":"sm_80"}]}` {
		t.Errorf("report not kept: %s", vs[0].Report.Report)
	}
	p2, _ := db.Pitch(ctx, p.ID)
	if p2.Variant != "kernel:"+v1.Hash {
		t.Errorf("pitch variant %q, want kernel:%s", p2.Variant, v1.Hash)
	}
	of, err := db.KernelVersionsOf(ctx, v2.Hash)
	if err != nil || len(of) != 1 || of[0].Version != 2 {
		t.Errorf("versions of v2: %+v, %v", of, err)
	}
	k, err := db.StoredKernel(ctx, v2.Hash)
	if err != nil || string(k.File("clear.cu").Data) != "// v2\n" || k.Manifest.Entry != "clear_gemm" || k.Author != "Admin" {
		t.Fatalf("stored kernel: %+v, %v", k, err)
	}
	// Stored sources are immutable, even to SQL.
	if _, err := db.w.Exec(`UPDATE kernel_files SET data = 'x' WHERE hash = ?`, v1.Hash); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("update of a stored file: %v, want refused", err)
	}
	if _, err := db.w.Exec(`DELETE FROM kernel_sources WHERE hash = ?`, v1.Hash); err == nil {
		t.Errorf("delete of a stored source succeeded")
	}
}

// A refused upload stores nothing: not the source, not a version, not the
// pitch's variant.
func TestKernelUploadRefused(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)
	mustRound(t, db, c.admin, 2, round1Rubric)
	judged := mustPitch(t, db, c.c[1], 2, "Judged", 1.1, 1.3)
	mustStatus(t, db, c.admin, 2, pitches.RoundJudging)

	big := testUpload(strings.Repeat("x", pitches.MaxKernelBytes))
	path := testUpload("// ok\n")
	path.Files["../evil.cu"] = []byte("x")
	badHash := testUpload("// ok\n")
	badHash.Hash = "not-a-hash"
	badKnobs := testUpload("// ok\n")
	badKnobs.Knobs = "unroll=2&bad knob"
	cases := []struct {
		name        string
		by          *pitches.User
		pitch       int64
		in          pitches.KernelUpload
		code, field string
	}{
		{"anonymous", nil, p.ID, testUpload("// a\n"), pitches.EUNAUTHORIZED, ""},
		{"other contestant", c.c[2], p.ID, testUpload("// a\n"), pitches.EFORBIDDEN, ""},
		{"shark", c.oracle, p.ID, testUpload("// a\n"), pitches.EFORBIDDEN, ""},
		{"viewer", c.viewer, p.ID, testUpload("// a\n"), pitches.EFORBIDDEN, ""},
		{"round judging", c.c[1], judged.ID, testUpload("// a\n"), pitches.ECONFLICT, ""},
		{"no such pitch", c.c[1], 999, testUpload("// a\n"), pitches.ENOTFOUND, ""},
		{"oversized", c.c[1], p.ID, big, pitches.EINVALID, "files"},
		{"path", c.c[1], p.ID, path, pitches.EINVALID, "files.../evil.cu"},
		{"bad hash", c.c[1], p.ID, badHash, pitches.EINTERNAL, ""},
		{"bad knobs", c.c[1], p.ID, badKnobs, pitches.EINVALID, "variant"},
	}
	before := dump(t, db)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.UploadKernel(ctx, tc.by, tc.pitch, tc.in)
			if pitches.ErrorCode(err) != tc.code || (tc.field != "" && pitches.ErrorField(err) != tc.field) {
				t.Fatalf("err = %v, want %s on %q", err, tc.code, tc.field)
			}
			if after := dump(t, db); after != before {
				t.Errorf("a refused upload changed the database")
			}
		})
	}
	// Withdrawn: refused too.
	if _, err := db.WithdrawPitch(ctx, c.c[1], p.ID); err != nil {
		t.Fatal(err)
	}
	before = dump(t, db)
	_, err := db.UploadKernel(ctx, c.c[1], p.ID, testUpload("// w\n"))
	wantErr(t, err, pitches.ECONFLICT, "")
	if dump(t, db) != before {
		t.Errorf("an upload to a withdrawn pitch changed the database")
	}
}

// Once a run measured the pitch, its kernel is locked like its variant.
func TestKernelLockedAfterMeasurement(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)
	up := testUpload("// v1\n")
	if _, err := db.UploadKernel(ctx, c.c[1], p.ID, up); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`INSERT INTO runs (problem, suite, variant, baseline, device, seed, pitch_id, status, created_at, result)
		VALUES ('nvfp4_group_gemm', 'benchmarks', ?, 'baseline', '0', 0, ?, 'succeeded', '2026-01-01T00:00:00.000000000Z', '{}')`, "kernel:"+up.Hash, p.ID); err != nil {
		t.Fatal(err)
	}
	before := dump(t, db)
	_, err := db.UploadKernel(ctx, c.c[1], p.ID, testUpload("// v2\n"))
	wantErr(t, err, pitches.ECONFLICT, "files")
	if !strings.Contains(pitches.ErrorMessage(err), "locked") || dump(t, db) != before {
		t.Errorf("upload after a measurement: %v (database changed: %v)", err, dump(t, db) != before)
	}
}

// Who sees a submission's source, per role and round state (the rule is
// pitches.CanSeeKernelSource; this checks the store applies it with the
// right uses and author).
func TestKernelSourceVisibility(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric)
	p := mustPitch(t, db, c.c[1], 1, "Clear kernel", 1.1, 1.3)
	up := testUpload("// v1\n")
	if _, err := db.UploadKernel(ctx, c.c[1], p.ID, up); err != nil {
		t.Fatal(err)
	}
	viewers := []struct {
		name string
		u    *pitches.User
	}{{"anonymous", nil}, {"admin", c.admin}, {"shark", c.oracle}, {"author", c.c[1]}, {"other contestant", c.c[2]}, {"viewer", c.viewer}}
	want := map[pitches.RoundStatus][6]string{
		pitches.RoundPitching: {pitches.EUNAUTHORIZED, "", "", "", pitches.EFORBIDDEN, pitches.EFORBIDDEN},
		pitches.RoundJudging:  {pitches.EUNAUTHORIZED, "", "", "", pitches.EFORBIDDEN, pitches.EFORBIDDEN},
		pitches.RoundClosed:   {"", "", "", "", "", ""},
	}
	for _, st := range []pitches.RoundStatus{pitches.RoundPitching, pitches.RoundJudging, pitches.RoundClosed} {
		if st != pitches.RoundPitching {
			mustStatus(t, db, c.admin, 1, st)
		}
		for i, v := range viewers {
			k, uses, err := db.KernelSource(ctx, v.u, up.Hash)
			if got := pitches.ErrorCode(err); got != want[st][i] {
				t.Errorf("%s, round %s: err %v, want %q", v.name, st, err, want[st][i])
			}
			if err == nil && (k.File("clear.cu") == nil || len(uses) != 1 || uses[0].PitchID != p.ID) {
				t.Errorf("%s, round %s: source %+v uses %+v", v.name, st, k, uses)
			}
			if err != nil && (k != nil || !strings.Contains(pitches.ErrorMessage(err), "once round 1 closes")) {
				t.Errorf("%s, round %s: hidden source returned or message %q", v.name, st, pitches.ErrorMessage(err))
			}
		}
	}
	if _, _, err := db.KernelSource(ctx, c.admin, strings.Repeat("0", 64)); pitches.ErrorCode(err) != pitches.ENOTFOUND {
		t.Errorf("unknown hash: %v", err)
	}
}
