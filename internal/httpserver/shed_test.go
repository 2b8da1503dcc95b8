package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// shedApp serves the real overload middleware over a real database, with
// /healthz the real health check and /api/block and /block handlers that
// hold their slot until release is closed (a page that takes forever).
func shedApp(t *testing.T, cfg Config) (srv *httptest.Server, entered chan struct{}, release chan struct{}) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	s := newServer(cfg, db)
	entered, release = make(chan struct{}, 16), make(chan struct{})
	block := func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "done")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.handleHealthz)
	mux.HandleFunc("/api/block", block)
	mux.HandleFunc("/block", block)
	srv = httptest.NewServer(s.overload(mux))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return srv, entered, release
}

// shedServer is a server with overload settings cfg over a new database.
func shedServer(t *testing.T, cfg Config) *server {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return newServer(cfg, db)
}

func TestOverloadRefusesExcessAtOnce(t *testing.T) {
	srv, entered, release := shedApp(t, Config{MaxInFlight: 1, RequestTimeout: -1})
	first := make(chan error, 1)
	go func() {
		res, err := http.Get(srv.URL + "/api/block")
		if err == nil {
			if res.StatusCode != http.StatusOK {
				err = errors.New("the admitted request got " + res.Status)
			}
			res.Body.Close()
		}
		first <- err
	}()
	<-entered // the only slot is taken

	// The excess is refused with 503 and Retry-After, fast: the best of a
	// few round trips (the machine is shared, one may be descheduled).
	best := time.Hour
	for range 5 {
		start := time.Now()
		res, err := http.Get(srv.URL + "/api/block")
		if err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
		var body errorBody
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("over the limit: got %s, Retry-After %q; want 503 with Retry-After", res.Status, res.Header.Get("Retry-After"))
		}
		if err != nil || body.Error.Code != "unavailable" || body.Error.Message == "" {
			t.Fatalf("API refusal body: %+v (%v); want code unavailable and a message", body, err)
		}
	}
	if best > 10*time.Millisecond {
		t.Errorf("refusing took %v at best; want within 10ms", best)
	}

	// A page gets a short text answer, not a rendered template.
	res, err := http.Get(srv.URL + "/block")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || !strings.Contains(string(b), "busy") {
		t.Errorf("page over the limit: %s %q %q", res.Status, res.Header.Get("Content-Type"), b)
	}

	// The health check is exempt: a busy server is alive.
	res, err = http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("/healthz while saturated: %s; want 200", res.Status)
	}

	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The slot is free again.
	go func() { <-entered }()
	res, err = http.Get(srv.URL + "/api/block")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("after the blocked request ended: %s; want 200", res.Status)
	}
}

func TestOverloadQueueAbsorbsShortBurst(t *testing.T) {
	srv, entered, release := shedApp(t, Config{MaxInFlight: 1, QueueWait: 2 * time.Second, RequestTimeout: -1})
	done := make(chan int, 2)
	get := func() {
		res, err := http.Get(srv.URL + "/api/block")
		if err != nil {
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}
	go get()
	<-entered
	go get() // waits in the queue for the slot
	time.Sleep(50 * time.Millisecond)
	close(release)
	<-entered
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a request that waited in the queue got %d; want 200", code)
		}
	}
}

func TestRequestTimeoutFires(t *testing.T) {
	srv, entered, _ := shedApp(t, Config{RequestTimeout: 100 * time.Millisecond})
	go func() { <-entered }()
	start := time.Now()
	res, err := http.Get(srv.URL + "/api/block")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "timed out") {
		t.Errorf("a request past its timeout: %s %q; want 503 saying it timed out", res.Status, b)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout fired after %v; want about 100ms", d)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if res.Header.Get(h) == "" {
			t.Errorf("the timeout's 503 has no %s header; every response carries the security headers", h)
		}
	}
}

func TestRequestTimeoutSetsContextDeadline(t *testing.T) {
	s := shedServer(t, Config{RequestTimeout: time.Minute})
	seen := make(chan bool, 2)
	h := s.overload(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := r.Context().Deadline()
		seen <- ok
	}))
	for path, want := range map[string]bool{"/rounds/1": true, "/api/runs/7/events": false} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(context.Background(), http.MethodGet, path, nil))
		if got := <-seen; got != want {
			t.Errorf("%s: deadline set = %v; want %v (event streams are exempt)", path, got, want)
		}
	}
}

func TestOverloadDefaults(t *testing.T) {
	var c Config
	c.defaults()
	if c.MaxInFlight != runtime.GOMAXPROCS(0) || c.RequestTimeout != 10*time.Second || c.QueueWait <= 0 {
		t.Errorf("defaults: MaxInFlight %d, RequestTimeout %v, QueueWait %v", c.MaxInFlight, c.RequestTimeout, c.QueueWait)
	}
	// The whole app, default limits: pages and the API still answer.
	a := newApp(t, Config{})
	a.api(http.MethodGet, "/healthz", "", nil).wantStatus(t, http.StatusOK)
	a.api(http.MethodGet, "/api/rounds", "alice", nil).wantStatus(t, http.StatusOK)
}

// A request answered by the timeout keeps its slot until its handler has
// returned, and a handler that panics gives its slot back: the limit counts
// work being done, not answers not yet sent.
func TestOverloadSlotHeldUntilHandlerEnds(t *testing.T) {
	s := shedServer(t, Config{MaxInFlight: 1, QueueWait: -1, RequestTimeout: 50 * time.Millisecond})
	release := make(chan struct{})
	ended := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/stubborn", func(w http.ResponseWriter, r *http.Request) {
		<-release // ignores its context: still working after the timeout answered
		ended <- struct{}{}
	})
	mux.HandleFunc("/panics", func(w http.ResponseWriter, r *http.Request) { panic("page bug") })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	h := s.overload(mux)
	get := func(path string) int {
		rec := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }() // the server's recoverer does this in the app
			h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, path, nil))
		}()
		return rec.Code
	}
	if code := get("/stubborn"); code != http.StatusServiceUnavailable {
		t.Fatalf("a request past its timeout: %d; want 503", code)
	}
	if code := get("/ok"); code != http.StatusServiceUnavailable {
		t.Errorf("while the timed-out handler still works: %d; want 503 (its slot is still held)", code)
	}
	close(release)
	<-ended
	deadline := time.Now().Add(2 * time.Second)
	for get("/ok") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the slot was not given back after the timed-out handler returned")
		}
		time.Sleep(time.Millisecond)
	}
	get("/panics")
	if code := get("/ok"); code != http.StatusOK {
		t.Errorf("after a handler panicked: %d; want 200 (its slot given back)", code)
	}
}

// A handler waiting on something that uses no CPU here (a compile check in
// a child process) gives its slot back for the wait and holds one again
// after it.
func TestWithoutSlotLendsTheSlot(t *testing.T) {
	s := shedServer(t, Config{MaxInFlight: 1, QueueWait: -1, RequestTimeout: -1})
	waiting, wake, back, finish := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		err := withoutSlot(r.Context(), func() error {
			close(waiting)
			<-wake
			return nil
		})
		if err != nil {
			t.Errorf("withoutSlot: %v", err)
		}
		close(back)
		<-finish
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	h := s.overload(mux)
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, path, nil))
		return rec.Code
	}
	done := make(chan int)
	go func() { done <- get("/upload") }()
	<-waiting
	if code := get("/ok"); code != http.StatusOK {
		t.Errorf("during the upload's wait: %d; want 200 (its slot lent out)", code)
	}
	close(wake)
	<-back
	if code := get("/ok"); code != http.StatusServiceUnavailable {
		t.Errorf("after the wait, while the upload works again: %d; want 503 (the slot taken back)", code)
	}
	close(finish)
	<-done
	if code := get("/ok"); code != http.StatusOK {
		t.Errorf("after the upload ended: %d; want 200", code)
	}
}

// A request that finds every slot taken waits only where the waiters ahead
// of it, at the pace requests have been giving their slots back, leave it
// one within the wait; otherwise it is refused at once, not after the wait.
func TestShedderRefusesWhenTheWaitWouldTimeOut(t *testing.T) {
	sh := newShedder(2, 5*time.Millisecond)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if !sh.worthWaiting(15) {
		t.Error("before any request finished, a waiter was turned away")
	}
	for range 20 {
		sh.served(4 * time.Millisecond) // slow pages: 2 slots free up every 2 ms
	}
	if h := time.Duration(sh.hold.Load()); h < 3900*time.Microsecond || h > 4100*time.Microsecond {
		t.Fatalf("average hold %v, want about 4 ms", h)
	}
	// 2 slots x 5 ms of wait = 10 ms of slot time: 2 waiters fit, a third does not.
	for ahead, want := range []bool{true, true, false, false} {
		if got := sh.worthWaiting(ahead); got != want {
			t.Errorf("%d ahead: worth waiting %v, want %v", ahead, got, want)
		}
	}
	// Both slots taken, two waiters queued: the next request is refused
	// without waiting out the 5 ms.
	if !sh.acquire(req) || !sh.acquire(req) {
		t.Fatal("free slots refused")
	}
	sh.queue <- struct{}{}
	sh.queue <- struct{}{}
	t0 := time.Now()
	if sh.acquire(req) {
		t.Fatal("a request beyond the expected wait was admitted")
	}
	if d := time.Since(t0); d >= 5*time.Millisecond {
		t.Errorf("refused after %v, want at once", d)
	}
	<-sh.queue
	<-sh.queue
	// Fast pages (0.2 ms): the whole queue is worth waiting in, and a
	// waiter gets the slot a finishing request gives back.
	for range 40 {
		sh.served(200 * time.Microsecond)
	}
	if !sh.worthWaiting(cap(sh.queue) - 1) {
		t.Errorf("fast pages: the last queue place is not worth waiting in (hold %v)", time.Duration(sh.hold.Load()))
	}
	go func() {
		time.Sleep(time.Millisecond)
		sh.release()
	}()
	if !sh.acquire(req) {
		t.Error("a waiter did not get the slot given back within the wait")
	}
}
