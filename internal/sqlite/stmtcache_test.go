package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// The read pool's statement cache answers like unprepared queries, keeps
// at most maxCachedStmts texts (more still run), and holds up when many
// goroutines prepare new texts at once (run it with -race).
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	n := maxCachedStmts + 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got int
			q := fmt.Sprintf(`SELECT %d + ?`, i)
			for range 2 { // the second time from the cache, if it was kept
				if err := db.r.QueryRowContext(ctx, q, 1).Scan(&got); err != nil {
					errs <- err
					return
				}
				if got != i+1 {
					errs <- fmt.Errorf("%s with 1 gave %d", q, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db.r.mu.RLock()
	kept := len(db.r.stmts)
	db.r.mu.RUnlock()
	if kept > maxCachedStmts || kept < maxCachedStmts-10 {
		t.Errorf("%d statements kept after %d texts; the bound is %d", kept, n+1, maxCachedStmts)
	}
}

// A read transaction answers like unprepared queries, fills the cache when
// it ends (not while it holds its connection), and uses the cache after.
// More transactions at once than the pool has connections, each meeting a
// new text, must not wait on each other for a connection to prepare with.
func TestReadTxStatementCache(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	cachedLen := func() int {
		db.r.mu.RLock()
		defer db.r.mu.RUnlock()
		return len(db.r.stmts)
	}
	before := cachedLen()
	tx, err := db.r.beginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got int
	if err := tx.QueryRowContext(ctx, `SELECT 40 + ?`, 2).Scan(&got); err != nil || got != 42 {
		t.Fatalf("in the transaction: %d, %v; want 42", got, err)
	}
	if n := cachedLen(); n != before {
		t.Errorf("the cache grew to %d inside the transaction; want %d until it ends", n, before)
	}
	tx.end(ctx)
	if n := cachedLen(); n != before+1 {
		t.Errorf("after the transaction the cache holds %d; want %d", n, before+1)
	}
	tx, err = db.r.beginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT 40 + ?`, 3)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if err := rows.Scan(&got); err != nil || got != 43 {
			t.Errorf("from the cached statement: %d, %v; want 43", got, err)
		}
	}
	rows.Close()
	if len(tx.missed) != 0 {
		t.Errorf("a cached text was missed: %q", tx.missed)
	}
	tx.end(ctx)

	conns := db.r.Stats().MaxOpenConnections
	var wg sync.WaitGroup
	errs := make(chan error, 4*conns)
	start := make(chan struct{})
	for i := range 4 * conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := db.r.beginRead(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer tx.end(ctx)
			<-start
			q := fmt.Sprintf(`SELECT %d + ?`, 1000+i)
			var v int
			if err := tx.QueryRowContext(ctx, q, 1).Scan(&v); err != nil {
				errs <- err
			}
		}()
	}
	// Only as many transactions as connections can begin; the rest wait
	// for one, which the first ones give back when they end.
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
