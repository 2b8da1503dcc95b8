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

// readTx is a read-only transaction on the read pool (one snapshot for a
// page that reads several tables) whose queries use the pool's cached
// statements. A statement not cached yet runs unprepared here and is
// prepared for the cache when the transaction ends: preparing takes a
// connection of the bounded pool, and a caller holding one (this
// transaction's) must not wait for another, or as many concurrent
// transactions as the pool has connections would wait on each other.
// Measured: the standings API without the page cache spent 58% of its CPU
// in sqlite3Prepare before its transaction used the cache (perf, issue 13).
type readTx struct {
	tx     *sql.Tx
	p      *readPool
	missed []string
}

func (p *readPool) beginRead(ctx context.Context) (*readTx, error) {
	tx, err := p.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &readTx{tx: tx, p: p}, nil
}

// cached is query's cached statement bound to the transaction, or nil
// (noted for preparing at the end).
func (t *readTx) cached(ctx context.Context, query string) *sql.Stmt {
	t.p.mu.RLock()
	st := t.p.stmts[query]
	t.p.mu.RUnlock()
	if st == nil {
		t.missed = append(t.missed, query)
		return nil
	}
	return t.tx.StmtContext(ctx, st)
}

func (t *readTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	countQuery(ctx)
	if st := t.cached(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t *readTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	countQuery(ctx)
	if st := t.cached(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// ExecContext completes the queryer interface; the connection is
// query_only, so a write fails as it would on the pool.
func (t *readTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, query, args...)
}

// end rolls the transaction back (it wrote nothing), then prepares the
// statements it missed, so the next transaction finds them. A statement
// that fails to prepare stays uncached; its query's error was already
// seen by the caller.
func (t *readTx) end(ctx context.Context) {
	_ = t.tx.Rollback()
	for _, q := range t.missed {
		_, _ = t.p.stmt(context.WithoutCancel(ctx), q)
	}
	t.missed = nil
}
