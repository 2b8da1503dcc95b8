package httpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// The real `web` binary, built once for the tests that run real children.
var (
	webOnce     sync.Once
	webBin      string
	webBuildErr string
)

// webBinary builds cmd/web (or takes HTTPSERVER_TEST_WEB, a prebuilt one)
// and skips the test when that fails, saying why.
func webBinary(t *testing.T) string {
	t.Helper()
	webOnce.Do(func() {
		if bin := os.Getenv("HTTPSERVER_TEST_WEB"); bin != "" {
			webBin = bin
			return
		}
		dir, err := os.MkdirTemp("", "httpserver-test-web-")
		if err != nil {
			webBuildErr = err.Error()
			return
		}
		bin := filepath.Join(dir, "web")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/pitchtank/pitchtank/cmd/web").CombinedOutput()
		if err != nil {
			webBuildErr = fmt.Sprintf("cmd/web does not build: %v\n%s", err, out)
			return
		}
		webBin = bin
	})
	if webBin == "" {
		// A web that does not build is a failure, never a skip: a broken
		// `web bench` must not pass as "not built here".
		t.Fatal("needs the web binary: " + webBuildErr)
	}
	return webBin
}

// newRunsApp is newApp with a runner over the same database. start says
// whether its workers run (tests of bad input leave them stopped, so that
// nothing queued could ever start).
func newRunsApp(t *testing.T, rcfg runner.Config, start bool) (*app, *runner.Runner) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pitchtank.db"))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	db.BcryptCost = bcrypt.MinCost
	t.Cleanup(func() { _ = db.Close() })
	rcfg.Store, rcfg.Catalog = db, runner.KernelsCatalog{}
	if rcfg.TempDir == "" {
		rcfg.TempDir = t.TempDir()
	}
	r, err := runner.New(rcfg)
	if err != nil {
		t.Fatalf("new runner: %v", err)
	}
	if start {
		if err := r.Start(context.Background()); err != nil {
			t.Fatalf("start runner: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = r.Close(ctx)
		})
	}
	a := serveApp(t, Config{Runner: r, Heartbeat: 200 * time.Millisecond}, db)
	return a, r
}

// serveApp starts the handler over db with the usual cast of users.
func serveApp(t *testing.T, cfg Config, db *sqlite.DB) *app {
	t.Helper()
	h, err := New(cfg, db)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	srv := newTestServer(t, h)
	a := &app{t: t, srv: srv, db: db, users: map[string]*pitches.User{}, tokens: map[string]string{}}
	for _, u := range []struct {
		login string
		role  pitches.Role
	}{
		{"admin", pitches.RoleAdmin}, {"oracle", pitches.RoleShark}, {"pragmatist", pitches.RoleShark},
		{"alice", pitches.RoleContestant}, {"bob", pitches.RoleContestant}, {"vera", pitches.RoleViewer},
	} {
		a.user(u.login, u.role)
	}
	return a
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Type string
	Data runner.Event
}

// followEvents reads /api/runs/{id}/events until the stream ends, and
// returns the events and the number of heartbeat comments seen.
func (a *app) followEvents(id int64, login string, limit time.Duration) ([]sseEvent, int) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/runs/%d/events", a.srv.URL, id), nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.tokens[login])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("events: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		a.t.Fatalf("events: status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []sseEvent
	beats := 0
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var typ string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			beats++
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var ev runner.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				a.t.Fatalf("event data %q: %v", line, err)
			}
			out = append(out, sseEvent{Type: typ, Data: ev})
		}
	}
	if err := sc.Err(); err != nil {
		a.t.Fatalf("events stream broke (limit %v): %v; got %d events", limit, err, len(out))
	}
	return out, beats
}

// runCount counts stored runs.
func (a *app) runCount() int {
	a.t.Helper()
	runs, err := a.db.List(context.Background(), runner.Filter{Limit: 1000})
	if err != nil {
		a.t.Fatalf("list runs: %v", err)
	}
	return len(runs)
}

func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
