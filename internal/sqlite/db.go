package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/pitchtank/pitchtank/internal/pitches"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is the SQLite store. It implements pitches.Service.
type DB struct {
	path string
	w    *sql.DB   // one connection: the only writer
	r    *readPool // read pool, with its prepared statements kept (stmtcache.go)
	gen  atomic.Uint64

	// Now is the clock; tests may replace it to order filings.
	Now func() time.Time
	// BcryptCost is the cost of new password hashes; tests lower it.
	BcryptCost int
}

var _ pitches.Service = (*DB)(nil)

// dsn builds the modernc DSN. The pragma order matters: busy_timeout first,
// so that the switch to WAL already waits for locks (see doc.go).
func dsn(path string, extra ...string) string {
	q := []string{
		"_pragma=busy_timeout(10000)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(ON)",
	}
	q = append(q, extra...)
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + strings.Join(q, "&")
}

// Open opens (creating if needed) the database at path and applies pending
// migrations.
func Open(path string) (*DB, error) {
	if path == "" || path == ":memory:" {
		// Two pools on ":memory:" would be two different databases.
		return nil, fmt.Errorf("sqlite: open: need a file path, got %q", path)
	}
	w, err := sql.Open("sqlite", dsn(path, "_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	db := &DB{path: path, w: w, Now: func() time.Time { return time.Now().UTC() }, BcryptCost: bcrypt.DefaultCost}
	// The writer goes first: it creates the file and switches it to WAL
	// before any reader connects.
	if err := w.Ping(); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open writer %s: %w", path, err)
	}
	if err := db.migrate(context.Background()); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, "_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open readers %s: %w", path, err)
	}
	n := max(4, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.Ping(); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("sqlite: open readers %s: %w", path, err)
	}
	db.r = newReadPool(r)
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	var errs []error
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: read migrations: %w", err)
	}
	var ms []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("sqlite: migration %s: name must look like NNN_name.sql", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("sqlite: migrations %s and %s share version %d", other, name, v)
		}
		seen[v] = name
		b, err := migrationFS.ReadFile("migrations/" + name)
		if err != nil {
			return nil, fmt.Errorf("sqlite: read migration %s: %w", name, err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrate applies, in version order, every embedded migration not yet in
// schema_migrations, each in its own transaction with its record, so a
// failing migration leaves the database at the previous version.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := db.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			if step := migrationGoSteps[m.version]; step != nil {
				if err := step(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, fmtTime(db.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("sqlite: apply migration %s: %w", m.name, err)
		}
	}
	return nil
}

// migrationGoSteps are the parts of migrations that SQL cannot compute,
// run after the migration's SQL in its transaction: version -> step.
var migrationGoSteps = map[int]func(context.Context, *sql.Tx) error{
	155: variantKeyBackfill,
}

// variantKeyBackfill fills migration 155's variant_key for the runs stored
// before it (pitches.VariantKey of each run's variant).
func variantKeyBackfill(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id      int64
		variant string
	}
	rows, err := queryAll(ctx, tx, "read the runs' variants", func(rs *sql.Rows) (row, error) {
		var r row
		return r, rs.Scan(&r.id, &r.variant)
	}, `SELECT id, variant FROM runs WHERE variant != ''`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET variant_key = ? WHERE id = ?`, pitches.VariantKey(r.variant), r.id); err != nil {
			return fmt.Errorf("sqlite: fill the variant key of run %d: %w", r.id, err)
		}
	}
	return nil
}

// write runs fn in one transaction on the writer. An error from fn rolls
// everything back: this is what makes refused requests change nothing.
// A committed write bumps the generation (Generation), after the commit,
// so that a reader that read the generation before reading the data never
// files data older than the generation it read.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := db.commit(ctx, fn); err != nil {
		return err
	}
	db.gen.Add(1)
	return nil
}

// writeAuth is write for what no page shows: sessions, tokens and password
// hashes. It leaves the generation alone, so that logging in or using a
// token does not empty the caches keyed on it.
func (db *DB) writeAuth(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.commit(ctx, fn)
}

// Generation counts the writes this DB committed that pages may show
// (every write but writeAuth's). A value computed from reads made after
// Generation returned g is current for as long as Generation still
// returns g. Writes by other processes on the same file (web user add,
// web token create) are not counted: they touch users and tokens only.
func (db *DB) Generation() uint64 { return db.gen.Load() }

func (db *DB) commit(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// queryer is what both *sql.DB and *sql.Tx offer, so lookups work inside a
// write transaction and on the read pool alike.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// timeLayout is fixed width so that stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: parse time %q: %w", s, err)
	}
	return t, nil
}

func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// isUnique reports a UNIQUE constraint violation. modernc reports it in the
// message; checking the text keeps us off the driver's internal error types.
func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
