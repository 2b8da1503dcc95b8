package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// AppendAudit stores one audit entry (migration 150) at the store's clock
// when e.At is zero.
func (db *DB) AppendAudit(ctx context.Context, e pitches.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.Now()
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, actor_id, actor, action, target, before, after)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, fmtTime(e.At), runNullID(e.ActorID), e.Actor, e.Action, e.Target,
			nullJSON(e.Before), nullJSON(e.After))
		if err != nil {
			return fmt.Errorf("sqlite: append audit entry %s: %w", e.Action, err)
		}
		return nil
	})
}

// AuditLog returns audit entries matching f, newest first.
func (db *DB) AuditLog(ctx context.Context, f pitches.AuditFilter) ([]pitches.AuditEntry, error) {
	var where []string
	var args []any
	if f.Action != "" {
		if strings.HasSuffix(f.Action, ".") {
			where, args = append(where, "substr(action, 1, ?) = ?"), append(args, len(f.Action), f.Action)
		} else {
			where, args = append(where, "action = ?"), append(args, f.Action)
		}
	}
	if f.ActorID != 0 {
		where, args = append(where, "actor_id = ?"), append(args, f.ActorID)
	}
	if f.Target != "" {
		where, args = append(where, "target = ?"), append(args, f.Target)
	}
	if f.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT id, at, actor_id, actor, action, target, before, after FROM audit_log`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, min(limit, 500))
	return queryAll(ctx, db.r, "audit log", func(r *sql.Rows) (pitches.AuditEntry, error) {
		var e pitches.AuditEntry
		var at string
		var actor sql.NullInt64
		var before, after sql.NullString
		if err := r.Scan(&e.ID, &at, &actor, &e.Actor, &e.Action, &e.Target, &before, &after); err != nil {
			return e, err
		}
		t, err := parseTime(at)
		if err != nil {
			return e, err
		}
		e.At, e.ActorID = t, actor.Int64
		if before.Valid {
			e.Before = []byte(before.String)
		}
		if after.Valid {
			e.After = []byte(after.String)
		}
		return e, nil
	}, q, args...)
}

// nullJSON stores an empty document as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return string(b)
}
