//go:build linux

package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestSeedScales checks that a 3x database holds three times the demo's
// rows in every copied table, and that the copies keep their links (each
// copied scorecard points at a pitch of a copied round; the demo's ids
// run from 1).
func TestSeedScales(t *testing.T) {
	ctx := context.Background()
	counts := func(path string, demoCards int) map[string]int {
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		m := map[string]int{}
		for _, r := range cloneRules {
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+r.table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			m[r.table] = n
		}
		var orphans int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM scorecard_versions s JOIN pitches p ON p.id = s.pitch_id
			JOIN rounds r ON r.id = p.round_id WHERE (s.id > ?) <> (r.number > 10)`, demoCards).Scan(&orphans); err != nil {
			t.Fatal(err)
		}
		m["mislinked"] = orphans
		return m
	}
	one := filepath.Join(t.TempDir(), "1x.db")
	if _, _, err := seed(ctx, one, 1, "viewer"); err != nil {
		t.Fatal(err)
	}
	three := filepath.Join(t.TempDir(), "3x.db")
	if _, _, err := seed(ctx, three, 3, "viewer"); err != nil {
		t.Fatal(err)
	}
	c1 := counts(one, 1<<30)
	c3 := counts(three, c1["scorecard_versions"])
	for _, r := range cloneRules {
		if c1[r.table] == 0 && r.table != "personal_weights" && r.table != "kernel_versions" {
			t.Errorf("the demo has no %s: nothing to copy", r.table)
		}
		if c3[r.table] != 3*c1[r.table] {
			t.Errorf("%s: %d rows at 3x, want 3 x %d", r.table, c3[r.table], c1[r.table])
		}
	}
	if c3["mislinked"] != 0 {
		t.Errorf("%d copied scorecards point at another copy's pitches", c3["mislinked"])
	}
}
