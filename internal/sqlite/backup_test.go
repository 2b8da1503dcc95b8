package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Backup runs while writers keep filing pitches and changing scorecards; the
// copy must pass integrity_check and hold a consistent prefix of the writes.
func TestBackupUnderWriteLoad(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	c := mustCast(t, db)
	mustRound(t, db, c.admin, 1, round1Rubric) // judging: scorecards
	target := mustPitch(t, db, c.c[1], 1, "Pipeline Stages", 1.5, 1.8)
	mustStatus(t, db, c.admin, 1, pitches.RoundJudging)
	mustRound(t, db, c.admin, 2, round1Rubric) // pitching: new pitches

	stop := make(chan struct{})
	var filed, scored atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 1; w <= 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if w%2 == 0 {
					_, err = db.FilePitch(ctx, c.c[w], pitches.PitchInput{RoundNumber: 2, Title: fmt.Sprintf("w%d-%d", w, i), Claim: pitches.Range{Lo: 1, Hi: 2}})
					if err == nil {
						filed.Add(1)
					}
				} else {
					shark := c.oracle
					if w == 3 {
						shark = c.pragmatist
					}
					_, err = db.SubmitScorecard(ctx, shark, target.ID, pitches.ScorecardInput{Scores: sc(r1Keys, float64(i%11), 5, 5, 5), Estimate: pitches.Range{Lo: 1, Hi: 2}})
					if err == nil {
						scored.Add(1)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	// Let the writers get going, then back up twice mid-stream.
	time.Sleep(50 * time.Millisecond)
	dir := t.TempDir()
	var dests []string
	for i := 0; i < 2; i++ {
		dest := filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))
		if err := db.Backup(ctx, dest); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("backup %d: %v", i, err)
		}
		dests = append(dests, dest)
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writer failed during backup: %v", err)
	}
	if filed.Load() == 0 || scored.Load() == 0 {
		t.Fatalf("writers made no progress (%d pitches, %d cards)", filed.Load(), scored.Load())
	}

	// The read pool must still refuse writes after a backup used one of its connections.
	for i := 0; i < 8; i++ {
		if _, err := db.r.ExecContext(ctx, `DELETE FROM users`); err == nil {
			t.Fatal("a read-pool connection accepts writes after Backup")
		}
	}

	prev := -1
	for _, dest := range dests {
		cp, err := Open(dest)
		if err != nil {
			t.Fatalf("open backup %s: %v", dest, err)
		}
		var ok string
		if err := cp.r.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity_check of %s: %q, %v", dest, ok, err)
		}
		if n := count(t, cp.r, `SELECT count(*) FROM users`); n != 8 {
			t.Errorf("backup has %d users, want 8", n)
		}
		if n := count(t, cp.r, `SELECT count(*) FROM rounds`); n != 2 {
			t.Errorf("backup has %d rounds, want 2", n)
		}
		pitchesN := count(t, cp.r, `SELECT count(*) FROM pitches`)
		if pitchesN < 1 || int64(pitchesN) > filed.Load()+1 || pitchesN < prev {
			t.Errorf("backup has %d pitches; filed %d (+1 fixture), previous backup %d", pitchesN, filed.Load(), prev)
		}
		prev = pitchesN
		// Every scorecard version in the copy has its four scores: no torn transaction.
		if n := count(t, cp.r, `SELECT count(*) FROM scorecard_versions sv WHERE (SELECT count(*) FROM scorecard_scores s WHERE s.version_id = sv.id) != 4`); n != 0 {
			t.Errorf("backup has %d scorecard versions without their scores", n)
		}
		cp.Close()
	}
	var live int
	if err := db.r.QueryRow(`SELECT count(*) FROM pitches`).Scan(&live); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if int64(live) != filed.Load()+1 {
		t.Errorf("live db has %d pitches, want %d", live, filed.Load()+1)
	}
}
