package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Paths with spaces, '?' and '#' must name the file they say, not be read
// as URI syntax.
func TestOpenOddPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir #1?x=y")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pitch tank%20.db")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("open %q: %v", path, err)
	}
	defer db.Close()
	if _, err := db.CreateUser(context.Background(), "someone", "Someone", "viewer", "long-enough"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %q: %v", path, err)
	}
	backup := filepath.Join(dir, "copy of it.db")
	if err := db.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(backup); err != nil {
		t.Fatalf("backup not at %q: %v", backup, err)
	}
}
