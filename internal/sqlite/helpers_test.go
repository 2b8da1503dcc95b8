package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// MustOpenDB opens a fresh database file in a temp dir, with a cheap bcrypt
// cost and a clock that ticks 1ms per call so filing order is deterministic.
func MustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(filepath.Join(tb.TempDir(), "pitchtank.db"))
	if err != nil {
		tb.Fatalf("open db: %v", err)
	}
	db.BcryptCost = bcrypt.MinCost
	var mu sync.Mutex
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t0 = t0.Add(time.Millisecond)
		return t0
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close db: %v", err)
		}
	})
	return db
}

// cast is the fixture's people.
type cast struct {
	admin, oracle, pragmatist, viewer *pitches.User
	c                                 [5]*pitches.User // contestants 1..4 (index 0 unused)
}

func mustUser(tb testing.TB, db *DB, login, name string, role pitches.Role) *pitches.User {
	tb.Helper()
	u, err := db.CreateUser(context.Background(), login, name, role, "password-"+login)
	if err != nil {
		tb.Fatalf("create user %s: %v", login, err)
	}
	return u
}

func mustCast(tb testing.TB, db *DB) cast {
	tb.Helper()
	var c cast
	c.admin = mustUser(tb, db, "admin", "Admin", pitches.RoleAdmin)
	c.oracle = mustUser(tb, db, "oracle", "The Performance Oracle", pitches.RoleShark)
	c.pragmatist = mustUser(tb, db, "pragmatist", "The Pragmatic Engineer", pitches.RoleShark)
	c.viewer = mustUser(tb, db, "viewer", "Viewer", pitches.RoleViewer)
	for i := 1; i <= 4; i++ {
		c.c[i] = mustUser(tb, db, fmt.Sprintf("contestant%d", i), fmt.Sprintf("Contestant %d", i), pitches.RoleContestant)
	}
	return c
}

var round1Rubric = []pitches.Criterion{
	{Key: "speedup", Name: "Expected speedup", Weight: 40},
	{Key: "feasibility", Name: "Implementation feasibility", Weight: 25},
	{Key: "risk", Name: "Risk (10 = low)", Weight: 20},
	{Key: "pitch_quality", Name: "Pitch quality", Weight: 15},
}

func mustRound(tb testing.TB, db *DB, by *pitches.User, n int, cs []pitches.Criterion) *pitches.Round {
	tb.Helper()
	r, err := db.CreateRound(context.Background(), by, pitches.RoundInput{Number: n, Title: fmt.Sprintf("Round %d", n), Criteria: cs})
	if err != nil {
		tb.Fatalf("create round %d: %v", n, err)
	}
	return r
}

func mustPitch(tb testing.TB, db *DB, by *pitches.User, round int, title string, lo, hi float64) *pitches.Pitch {
	tb.Helper()
	p, err := db.FilePitch(context.Background(), by, pitches.PitchInput{RoundNumber: round, Title: title, Claim: pitches.Range{Lo: lo, Hi: hi}})
	if err != nil {
		tb.Fatalf("file pitch %q: %v", title, err)
	}
	return p
}

func mustStatus(tb testing.TB, db *DB, by *pitches.User, round int, s pitches.RoundStatus) {
	tb.Helper()
	if _, err := db.SetRoundStatus(context.Background(), by, round, s); err != nil {
		tb.Fatalf("round %d -> %s: %v", round, s, err)
	}
}

func mustScore(tb testing.TB, db *DB, by *pitches.User, pitchID int64, scores map[string]float64) *pitches.Scorecard {
	tb.Helper()
	c, err := db.SubmitScorecard(context.Background(), by, pitchID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 1, Hi: 1.2}})
	if err != nil {
		tb.Fatalf("score pitch %d by %s: %v", pitchID, by.Login, err)
	}
	return c
}

func mustVote(tb testing.TB, db *DB, by *pitches.User, round int, pitchID int64) *pitches.Vote {
	tb.Helper()
	v, err := db.CastVote(context.Background(), by, round, pitches.VoteInput{PitchID: pitchID, Justification: "because"})
	if err != nil {
		tb.Fatalf("vote by %s: %v", by.Login, err)
	}
	return v
}

// wantErr checks an error's code and field.
func wantErr(tb testing.TB, err error, code, field string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("want error %s (field %q), got nil", code, field)
	}
	if got := pitches.ErrorCode(err); got != code {
		tb.Fatalf("want code %s, got %s (%v)", code, got, err)
	}
	if field != "*" && pitches.ErrorField(err) != field {
		tb.Fatalf("want field %q, got %q (%v)", field, pitches.ErrorField(err), err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// dump renders every row of every table, so two dumps are equal exactly when
// nothing was written in between.
func dump(tb testing.TB, db *DB) string {
	tb.Helper()
	ctx := context.Background()
	rows, err := db.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		tb.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "== %s\n", t)
		rs, err := db.r.QueryContext(ctx, `SELECT * FROM "`+t+`" ORDER BY rowid`)
		if err != nil {
			// WITHOUT ROWID tables would need another order; we have none.
			tb.Fatalf("dump %s: %v", t, err)
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		rs.Close()
	}
	return b.String()
}

func count(tb testing.TB, q interface {
	QueryRow(string, ...any) *sql.Row
}, query string) int {
	tb.Helper()
	var n int
	if err := q.QueryRow(query).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// rawDBAt creates a database file at path with the migrations up to and
// including version applied (as an older server left it) and returns a
// raw connection to it, for migration tests to fill before Open migrates
// the rest.
func rawDBAt(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version > version {
			break
		}
		if _, err := raw.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("apply %s: %v", m.name, err)
		}
		if step := migrationGoSteps[m.version]; step != nil {
			t.Fatalf("migration %s has a Go step: apply it through Open", m.name)
		}
		if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000000000Z')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}
