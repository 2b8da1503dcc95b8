package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Outgoing webhooks and their delivery log (migration 151): the
// notify.Store, and what the admin pages need.
var _ notify.Store = (*DB)(nil)

const hookCols = `id, url, secret, events, active, created_at`

func scanHook(r interface{ Scan(...any) error }) (*notify.Hook, error) {
	var h notify.Hook
	var events, at string
	if err := r.Scan(&h.ID, &h.URL, &h.Secret, &events, &h.Active, &at); err != nil {
		return nil, err
	}
	t, err := parseTime(at)
	if err != nil {
		return nil, err
	}
	h.CreatedAt = t
	if events != "" {
		h.Events = strings.Split(events, ",")
	}
	return &h, nil
}

// Webhooks lists every hook, oldest first, with its secret.
func (db *DB) Webhooks(ctx context.Context) ([]notify.Hook, error) {
	return queryAll(ctx, db.r, "list webhooks", values(scanHook), `SELECT `+hookCols+` FROM webhooks ORDER BY id`)
}

// Webhook returns hook id.
func (db *DB) Webhook(ctx context.Context, id int64) (*notify.Hook, error) {
	h, err := scanHook(db.r.QueryRowContext(ctx, `SELECT `+hookCols+` FROM webhooks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "webhook %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get webhook %d: %w", id, err)
	}
	return h, nil
}

// SaveWebhook stores h: a new hook when h.ID is 0 (by is its creator),
// else replaces hook h.ID's URL, secret, events and active flag. The hook
// was checked by the caller.
func (db *DB) SaveWebhook(ctx context.Context, h notify.Hook, by int64) (*notify.Hook, error) {
	id := h.ID
	err := db.write(ctx, func(tx *sql.Tx) error {
		if id == 0 {
			res, err := tx.ExecContext(ctx, `INSERT INTO webhooks (url, secret, events, active, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
				h.URL, h.Secret, strings.Join(h.Events, ","), h.Active, runNullID(by), fmtTime(db.Now()))
			if err != nil {
				return fmt.Errorf("sqlite: insert webhook: %w", err)
			}
			id, err = res.LastInsertId()
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE webhooks SET url = ?, secret = ?, events = ?, active = ? WHERE id = ?`,
			h.URL, h.Secret, strings.Join(h.Events, ","), h.Active, id)
		if err != nil {
			return fmt.Errorf("sqlite: update webhook %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return pitches.Errorf(pitches.ENOTFOUND, "", "webhook %d not found", id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.Webhook(ctx, id)
}

// DeleteWebhook removes hook id and its delivery log.
func (db *DB) DeleteWebhook(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("sqlite: delete webhook %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return pitches.Errorf(pitches.ENOTFOUND, "", "webhook %d not found", id)
		}
		return nil
	})
}

// RecordDelivery appends one delivery attempt to the log and returns its
// id. An attempt for a hook deleted meanwhile is dropped (id 0).
func (db *DB) RecordDelivery(ctx context.Context, d notify.Delivery) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(webhook_id, event_id, event, attempt, status_code, error, delivered, final, at, duration_ms)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?)`,
			d.HookID, d.EventID, d.Event, max(d.Attempt, 1), d.StatusCode, d.Error, d.Delivered, d.Final, fmtTime(d.At), d.DurationMs, d.HookID)
		if err != nil {
			return fmt.Errorf("sqlite: record delivery to webhook %d: %w", d.HookID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil // dropped: no id, and nothing wrong
		}
		if id, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("sqlite: id of the delivery to webhook %d: %w", d.HookID, err)
		}
		return nil
	})
	return id, err
}

// Deliveries lists hook id's delivery attempts, newest first, before
// (when > 0) the given delivery id, at most limit (default 50, at most 500).
func (db *DB) Deliveries(ctx context.Context, hookID, before int64, limit int) ([]notify.Delivery, error) {
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT id, webhook_id, event_id, event, attempt, status_code, error, delivered, final, at, duration_ms
		FROM webhook_deliveries WHERE webhook_id = ?`
	args := []any{hookID}
	if before > 0 {
		q += ` AND id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, min(limit, 500))
	return queryAll(ctx, db.r, "list deliveries", func(r *sql.Rows) (notify.Delivery, error) {
		var d notify.Delivery
		var at string
		if err := r.Scan(&d.ID, &d.HookID, &d.EventID, &d.Event, &d.Attempt, &d.StatusCode, &d.Error, &d.Delivered, &d.Final, &at, &d.DurationMs); err != nil {
			return d, err
		}
		t, err := parseTime(at)
		d.At = t
		return d, err
	}, q, args...)
}
