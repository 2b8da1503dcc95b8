package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenConfiguresPoolsAndMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := []struct{ pragma, want string }{
		{"journal_mode", "wal"}, {"foreign_keys", "1"}, {"busy_timeout", "10000"}, {"synchronous", "1"},
	}
	for _, c := range checks {
		for poolName, pool := range map[string]queryer{"writer": db.w, "reader": db.r} {
			var got string
			if err := pool.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
				t.Fatalf("%s PRAGMA %s: %v", poolName, c.pragma, err)
			}
			if got != c.want {
				t.Errorf("%s PRAGMA %s = %s, want %s", poolName, c.pragma, got, c.want)
			}
		}
	}
	if got := db.w.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer max open conns = %d, want 1", got)
	}
	if got := db.r.Stats().MaxOpenConnections; got < 4 {
		t.Errorf("reader max open conns = %d, want >= 4", got)
	}
	// The read pool must not write.
	if _, err := db.r.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (999, 'x', 'y')`); err == nil {
		t.Error("read pool accepted a write")
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db.r, `SELECT count(*) FROM schema_migrations`); n != len(ms) {
		t.Errorf("schema_migrations has %d rows, want %d", n, len(ms))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening applies nothing twice.
	db, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if n := count(t, db.r, `SELECT count(*) FROM schema_migrations`); n != len(ms) {
		t.Errorf("after reopen schema_migrations has %d rows, want %d", n, len(ms))
	}
}

func TestOpenRefusesMemory(t *testing.T) {
	if _, err := Open(":memory:"); err == nil {
		t.Fatal("Open(:memory:) succeeded; two pools would see two databases")
	}
}

func TestBackupRefusesExistingFile(t *testing.T) {
	db := MustOpenDB(t)
	dest := filepath.Join(t.TempDir(), "exists.db")
	if err := os.WriteFile(dest, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := db.Backup(context.Background(), dest)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("want refusal, got %v", err)
	}
	b, _ := os.ReadFile(dest)
	if string(b) != "keep me" {
		t.Fatal("backup overwrote an existing file")
	}
}
