package httpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// countingStore counts Standings calls; Generation comes with *sqlite.DB.
type countingStore struct {
	*sqlite.DB
	standings atomic.Int64
}

func (c *countingStore) Standings(ctx context.Context, viewer *pitches.User, round int) (*pitches.Standings, error) {
	c.standings.Add(1)
	return c.DB.Standings(ctx, viewer, round)
}

// TestPageCache: a cached page is computed once per viewer until the next
// write, a write shows at once, and no viewer is served another's page.
func TestPageCache(t *testing.T) {
	a := newApp(t, Config{})
	ctx := context.Background()
	a.round(1)
	p := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(ctx, a.users["oracle"], p.ID, allScores(7)); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{DB: a.db}
	h, err := New(Config{}, store)
	if err != nil {
		t.Fatal(err)
	}
	get := func(login, path string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+a.tokens[login])
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	const path = "/api/rounds/1/standings"
	st, first := get("admin", path)
	if st != http.StatusOK {
		t.Fatalf("standings: %d %s", st, first)
	}
	if _, again := get("admin", path); again != first {
		t.Fatalf("the second answer differs from the first with no write between:\n%s\n%s", first, again)
	}
	if n := store.standings.Load(); n != 1 {
		t.Fatalf("two requests with no write between computed the standings %d times, want 1", n)
	}

	// Pragmatist has not scored the pitch: its row is hidden from them,
	// not from the admin whose page is cached.
	_, prag := get("pragmatist", path)
	if !strings.Contains(prag, `"hidden": true`) || strings.Contains(first, `"hidden": true`) {
		t.Fatalf("hidden rows: admin's page %s, pragmatist's %s", first, prag)
	}
	if n := store.standings.Load(); n != 2 {
		t.Fatalf("a second viewer's standings computed %d times in all, want 2", n)
	}

	// A write empties the cache: the pragmatist's scorecard shows at once.
	if _, err := a.db.SubmitScorecard(ctx, a.users["pragmatist"], p.ID, allScores(5)); err != nil {
		t.Fatal(err)
	}
	if _, after := get("pragmatist", path); strings.Contains(after, `"hidden": true`) || after == prag {
		t.Fatalf("after scoring, the pragmatist still gets the cached page: %s", after)
	}
	if _, after := get("admin", path); after == first {
		t.Fatalf("after a new scorecard the admin still gets the page from before it")
	}
	// A refusal is not cached: the next request asks the store again.
	n := store.standings.Load()
	get("vera", "/api/rounds/9/standings")
	get("vera", "/api/rounds/9/standings")
	if got := store.standings.Load() - n; got != 2 {
		t.Fatalf("two requests for a missing round asked the store %d times, want 2", got)
	}
}

// blockingStore's first Standings call waits until release is closed.
type blockingStore struct {
	*sqlite.DB
	calls   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) Standings(ctx context.Context, viewer *pitches.User, round int) (*pitches.Standings, error) {
	if b.calls.Add(1) == 1 {
		close(b.entered)
		<-b.release
	}
	return b.DB.Standings(ctx, viewer, round)
}

// A request waiting for another's page to be computed lends out its slot:
// with two slots, one computing a slow page and one waiting for it, a
// third page is served, not refused.
func TestPageCacheWaiterLendsItsSlot(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	store := &blockingStore{DB: a.db, entered: make(chan struct{}), release: make(chan struct{})}
	h, err := New(Config{MaxInFlight: 2, QueueWait: -1, RequestTimeout: -1}, store)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+a.tokens["admin"])
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	const path = "/api/rounds/1/standings"
	codes := make(chan int, 2)
	go func() { codes <- get(path) }()
	<-store.entered // the first request computes, holding a slot
	go func() { codes <- get(path) }()
	time.Sleep(100 * time.Millisecond) // the second one now waits for the first's page
	if code := get("/api/rounds/1"); code != http.StatusOK {
		t.Errorf("another page while one request computes and one waits for it: %d; want 200 (the waiter's slot lent out)", code)
	}
	close(store.release)
	for range 2 {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("the computing or the waiting request: %d; want 200", code)
		}
	}
	if n := store.calls.Load(); n != 1 {
		t.Errorf("the standings were computed %d times; want 1 (the waiter replays the first's page)", n)
	}
}
