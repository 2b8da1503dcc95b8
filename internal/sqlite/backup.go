package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Backup writes a consistent copy of the live database to destPath with
// VACUUM INTO, run on a read connection: in WAL mode it reads one snapshot
// while writers carry on, and the copy is compact and self-contained (no
// -wal file). It refuses to overwrite an existing file.
func (db *DB) Backup(ctx context.Context, destPath string) error {
	if destPath == "" {
		return fmt.Errorf("sqlite: backup: empty destination path")
	}
	if _, err := os.Stat(destPath); err == nil {
		return fmt.Errorf("sqlite: backup: %s already exists; refusing to overwrite it", destPath)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sqlite: backup: check %s: %w", destPath, err)
	}
	// The read pool is query_only, which also forbids VACUUM INTO, so the
	// copy runs on a connection of its own, opened for this backup and
	// closed after it: it only reads the live file, and no pooled
	// connection ever has its read-only guard lifted.
	bdb, err := sql.Open("sqlite", dsn(db.path))
	if err != nil {
		return fmt.Errorf("sqlite: backup: open connection: %w", err)
	}
	defer bdb.Close()
	bdb.SetMaxOpenConns(1)
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: backup: open connection: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, destPath); err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", destPath, err)
	}
	return nil
}
