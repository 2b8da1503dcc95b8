package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// queryAll runs query on q and scans every row with scan, closing the rows
// before it returns (callers often query again, and a write transaction is
// one connection). Errors name the operation: "sqlite: <what>: ...".
func queryAll[T any](ctx context.Context, q queryer, what string, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return out, nil
}

// values adapts a scanner that returns a pointer (scanPitch, scanRound,
// scanUser) to queryAll.
func values[T any](scan func(interface{ Scan(...any) error }) (*T, error)) func(*sql.Rows) (T, error) {
	return func(r *sql.Rows) (T, error) {
		p, err := scan(r)
		if err != nil {
			var zero T
			return zero, err
		}
		return *p, nil
	}
}

// scanID reads a single int64 column.
func scanID(r *sql.Rows) (int64, error) {
	var id int64
	err := r.Scan(&id)
	return id, err
}

// joinParam is how an integer parameter is compared in a query that joins
// tables. Written as a bare ?, SQLite marks the cached statement as
// depending on the bound value and prepares it again whenever the value
// changes: measured on the demo database, a pitch joined to its round and
// contestant took 18.7-24.3 us for changing ids against 12.9-17.5 us for a
// repeated one, and perf put 7.6% of the round page's CPU (3x overload) in
// sqlite3Reprepare. Through CAST the value is opaque to the planner (the
// column's index is still used): 12.8-13.8 us for changing ids. Queries
// without a join showed no such cost.
const joinParam = `CAST(? AS INTEGER)`
