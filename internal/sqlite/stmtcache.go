package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

type countKey struct{}

// CountQueries returns a context under which every query on the read pool
// adds one to the counter: how profiles and tests see how many queries a
// request makes (issue 13). Queries inside write transactions are not
// counted.
func CountQueries(ctx context.Context) (context.Context, *atomic.Int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, countKey{}, n), n
}

func countQuery(ctx context.Context) {
	if n, ok := ctx.Value(countKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// maxCachedStmts bounds the statement cache: queries built with a variable
// number of placeholders could otherwise fill it without end. Past the
// bound a query is prepared for its one use, as before.
const maxCachedStmts = 512

// readPool is the read pool with its prepared statements kept: SQLite
// spends most of a short query parsing and planning it (profiles of the
// round and pitch pages showed sqlite3Prepare at over half of their CPU
// time, issue 13), and a *sql.Stmt prepares once per connection and is
// reused after. Statements are keyed by their text; arguments still bind
// per call, so the cache changes no result.
type readPool struct {
	*sql.DB

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newReadPool(db *sql.DB) *readPool {
	return &readPool{DB: db, stmts: map[string]*sql.Stmt{}}
}

// stmt returns the cached statement for query, preparing it on first use;
// nil when the cache is full (the caller then runs the query unprepared).
// The lock is never held while preparing: preparing takes a connection,
// and a caller holding one (a query inside an open result set) must not
// wait for the lock behind it.
func (p *readPool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.RLock()
	st, full := p.stmts[query], len(p.stmts) >= maxCachedStmts
	p.mu.RUnlock()
	if st != nil || full {
		return st, nil
	}
	// The context bounds the preparation only; the statement outlives it.
	st, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if have := p.stmts[query]; have != nil {
		_ = st.Close() // prepared twice at once: keep the first
		return have, nil
	}
	if len(p.stmts) >= maxCachedStmts {
		_ = st.Close()
		return nil, nil
	}
	p.stmts[query] = st
	return st, nil
}

// QueryContext runs query through its cached statement.
func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	countQuery(ctx)
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.DB.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query through its cached statement. A query that
// fails to prepare runs unprepared, so that its error comes back through
// Row.Scan as usual.
func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	countQuery(ctx)
	st, err := p.stmt(ctx, query)
	if err != nil || st == nil {
		return p.DB.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// Close closes the cached statements, then the pool.
func (p *readPool) Close() error {
	p.mu.Lock()
	for q, st := range p.stmts {
		_ = st.Close()
		delete(p.stmts, q)
	}
	p.mu.Unlock()
	return p.DB.Close()
}
