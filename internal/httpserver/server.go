// Package httpserver is pitchtank's HTTP adapter: a chi router serving the
// server-rendered pages (templ) and the JSON API over a pitches.Service.
//
// Handlers decode, call the service and render; the service enforces roles,
// validation and visibility, and its *pitches.Error codes become HTTP statuses
// in one place (errors.go).
package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
	"github.com/pitchtank/pitchtank/web"
)

// Config tunes the server. The zero value is usable: every field has a default.
type Config struct {
	// SecureCookies marks the session cookie Secure even on plain-HTTP
	// requests (set it behind a TLS-terminating proxy). Requests that arrive
	// over TLS always get Secure cookies.
	SecureCookies bool
	// SessionTTL is how long a browser session lasts (default 14 days).
	SessionTTL time.Duration
	// MaxBodyBytes caps every request body (default 1 MiB); more is a 413.
	MaxBodyBytes int64
	// LoginBurst and LoginRefill shape the login rate limit, applied per
	// client IP and per login name (default 10 attempts, one more every 30s).
	LoginBurst  int
	LoginRefill time.Duration
	// PublicClosedRounds lets anonymous visitors read closed rounds (their
	// standings, pitches and results: nothing is hidden once a round is
	// closed). Open rounds always need a login.
	PublicClosedRounds bool
	// DemoLogins says the demo tournament's public logins work here, so
	// the landing page may say so (cmd/web sets it).
	DemoLogins bool
	// TrustedOrigins are extra origins (scheme://host[:port]) allowed to make
	// state-changing cross-origin requests; normally none.
	TrustedOrigins []string
	// Runner measures kernel variants and stores runs (cmd/web serve builds
	// it). Nil: the run pages and endpoints answer that this server runs no
	// measurements, and pitch pages show no results (leave it nil: a nil
	// *runner.Runner in it would not compare equal to nil).
	Runner Runs
	// Heartbeat is how often a server-sent event stream sends a comment
	// line while nothing happens (default 15s), so proxies keep it open.
	Heartbeat time.Duration
	// Streams, when set, ends every server-sent event stream once done:
	// cmd/web cancels it at shutdown so that http.Server.Shutdown need not
	// wait for open run pages.
	Streams context.Context
	Logger  *slog.Logger
	// Kernels checks kernel uploads (manifest, architectures, the compile
	// report of `web kernel check` as a child). Nil: the form and the
	// architectures are checked, and nothing is compiled.
	Kernels *runner.SubmissionChecker
	Now     func() time.Time
	// MaxInFlight bounds the requests served at once (default 1 per CPU);
	// beyond it, after QueueWait (default 5ms) for a slot, a request gets
	// a 503 with Retry-After at once. RequestTimeout (default 10s) ends a
	// request that takes longer with a 503. Negative turns either off;
	// /healthz, static files and event streams are exempt (shed.go).
	MaxInFlight    int
	QueueWait      time.Duration
	RequestTimeout time.Duration
	// Tracker follows finished runs (regressions, provenance) and sends
	// events to webhooks (cmd/web builds it over the runner's store). Nil:
	// nothing is sent; thresholds and webhooks can still be configured.
	Tracker *tracking.Tracker
	// NoPageCache turns off the page cache (pagecache.go), which otherwise
	// keeps the round, pitch, runs, calibration and home pages and the
	// standings API per viewer until the store's next write, where the
	// service counts its writes (Generationer).
	NoPageCache bool
}

func (c *Config) defaults() {
	if c.SessionTTL <= 0 {
		c.SessionTTL = 14 * 24 * time.Hour
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.LoginBurst <= 0 {
		c.LoginBurst = 10
	}
	if c.LoginRefill <= 0 {
		c.LoginRefill = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Streams == nil {
		c.Streams = context.Background()
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.shedDefaults()
}

// Runs is what the web layer asks of the runner (*runner.Runner is one):
// queue, repeat, import, accept and cancel runs, read them, and follow one's
// progress. The web layer owns the interface, so its tests and any other
// runner need only these methods.
type Runs interface {
	Submit(ctx context.Context, req runner.Request) (*runner.Run, error)
	Requeue(ctx context.Context, id, by int64) (*runner.Run, error)
	Import(ctx context.Context, req *runner.ImportRequest, by int64) (*runner.Run, error)
	Accept(ctx context.Context, id int64, by *pitches.User, reason string) (*runner.Run, error)
	Cancel(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (*runner.Run, error)
	List(ctx context.Context, f runner.Filter) ([]runner.Run, error)
	Devices() []string
	Subscribe(id int64) (<-chan runner.Event, func())
}

// Pinger is implemented by services that can check their database; /healthz
// uses it when present.
type Pinger interface {
	Ping(ctx context.Context) error
}

type server struct {
	cfg       Config
	svc       pitches.Service
	log       *slog.Logger
	ipLimit   *limiter
	nameLimit *limiter
	md        *markdown
	runs      Runs       // nil when the server measures nothing
	pages     *pageCache // nil: no page cache
}

// New returns the whole app as one handler: pages, API, static files, with
// security headers, a body cap and cross-origin protection around all of it,
// and the overload limit and request timeout around those.
func New(cfg Config, svc pitches.Service) (http.Handler, error) {
	s := newServer(cfg, svc)
	r := s.routes()

	// Cross-origin protection wraps the whole router, so no state-changing
	// browser request from another site reaches any handler (pages or API).
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.TrustedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("httpserver: trusted origin %q: %w", o, err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(s.handleCrossOrigin))
	// The overload limit goes outside everything else: under overload most
	// requests are refused, and a refusal should cost no routing, no
	// cross-origin check and no headers beyond its own (shed.go).
	return s.overload(cop.Handler(r)), nil
}

func newServer(cfg Config, svc pitches.Service) *server {
	cfg.defaults()
	var pages *pageCache
	if !cfg.NoPageCache {
		pages = newPageCache(svc)
	}
	return &server{
		pages:     pages,
		cfg:       cfg,
		svc:       audit.Wrap(svc, cfg.Logger, cfg.Tracker, userFrom), // records state changes where the store keeps an audit log
		log:       cfg.Logger,
		ipLimit:   newLimiter(cfg.LoginBurst, cfg.LoginRefill, cfg.Now),
		nameLimit: newLimiter((cfg.LoginBurst+1)/2, cfg.LoginRefill, cfg.Now), // per (login, address): see auth.go
		md:        newMarkdown(),
		runs:      cfg.Runner,
	}
}

// routes is every route of the app; the walk test (blind_test.go) visits
// each of them, so a route added here is checked for leaks.
func (s *server) routes() *chi.Mux {
	r := chi.NewRouter()
	// GetHead answers HEAD with the GET handler (headers, no body), as
	// HTTP says every GET resource should; chi alone would say 405.
	r.Use(s.recoverer, s.limitBody, middleware.GetHead) // security headers: overload (shed.go), around the whole router
	r.Get("/healthz", s.handleHealthz)
	r.Get("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		// Browsers ask for /favicon.ico on pages they opened without the
		// layout's <link rel="icon"> (a JSON error, an export).
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})
	r.Handle("/static/*", http.StripPrefix("/static/", staticHandler(web.Static())))
	r.Route("/api", s.registerAPIRoutes)
	r.Group(s.registerPageRoutes)
	return r
}

// handleHealthz checks the database: with Ping where the service has it,
// else with the cheapest read the Service offers.
func (s *server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var err error
	if p, ok := s.svc.(Pinger); ok {
		err = p.Ping(ctx)
	} else if _, err = s.svc.CurrentRound(ctx); pitches.ErrorCode(err) == pitches.ENOTFOUND {
		err = nil // an empty database is healthy
	}
	if err != nil {
		s.log.Error("healthz: check database", slog.Any("err", err))
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleCrossOrigin answers requests refused by CrossOriginProtection.
func (s *server) handleCrossOrigin(w http.ResponseWriter, r *http.Request) {
	err := pitches.Errorf(pitches.EFORBIDDEN, "", "cross-origin request refused")
	if isAPI(r) {
		s.apiError(w, r, err)
		return
	}
	s.renderError(w, r, err)
}
