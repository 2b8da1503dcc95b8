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
