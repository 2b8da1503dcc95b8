package httpserver

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Overload protection (issue 13). Without a bound, a server offered more
// requests than it can finish accepts them all, every one of them slows
// down, clients time out and retry, and goodput collapses: measured here,
// 300 rps offered to a round page that serves 250 gave 91 rps at a median
// of 7 s. Refusing the excess at once with a 503 and Retry-After keeps the
// admitted requests at their normal latency, and tells well-behaved clients
// (and proxies) when to come back.

// Defaults for Config.MaxInFlight, Config.QueueWait and Config.RequestTimeout.
const (
	defaultInFlightPerCPU = 4
	defaultQueueWait      = 5 * time.Millisecond
	defaultRequestTimeout = 10 * time.Second
	// shedRetryAfter is the Retry-After a refused request gets, in seconds:
	// the smallest value the header can say, since overload here is
	// measured in milliseconds of queued work.
	shedRetryAfter = "1"
)

// shedDefaults fills the overload settings of c; a negative value turns
// the setting off.
func (c *Config) shedDefaults() {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = defaultInFlightPerCPU * runtime.GOMAXPROCS(0)
	}
	if c.QueueWait == 0 {
		c.QueueWait = defaultQueueWait
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
}

// shedExempt says which requests bypass the in-flight limit and the
// timeout: the health check (a load balancer must see a busy server as
// alive, not dead), static files and the favicon (served from memory, and
// refusing them breaks pages that were admitted), and server-sent event
// streams, which stay open for minutes by design and would otherwise hold
// a slot each and be cut by the timeout.
func shedExempt(r *http.Request) bool {
	p := r.URL.Path
	return p == "/healthz" || p == "/favicon.ico" || strings.HasPrefix(p, "/static/") || strings.HasSuffix(p, "/events")
}

// shedder bounds the requests being served at once. slots holds one token
// per admitted request; queue bounds how many more may wait (at most
// wait) for a slot before they are refused, so a burst that lasts a few
// milliseconds is absorbed while sustained overload is refused at once.
type shedder struct {
	slots chan struct{}
	queue chan struct{}
	wait  time.Duration
}

func newShedder(limit int, wait time.Duration) *shedder {
	if limit <= 0 {
		return nil
	}
	sh := &shedder{slots: make(chan struct{}, limit), wait: max(wait, 0)}
	if sh.wait > 0 {
		sh.queue = make(chan struct{}, limit)
	}
	return sh
}

// acquire takes a slot, waiting briefly where the queue has room; false
// means the request is to be refused.
func (sh *shedder) acquire(r *http.Request) bool {
	select {
	case sh.slots <- struct{}{}:
		return true
	default:
	}
	if sh.queue == nil {
		return false
	}
	select {
	case sh.queue <- struct{}{}:
	default:
		return false // the queue is full too
	}
	defer func() { <-sh.queue }()
	t := time.NewTimer(sh.wait)
	defer t.Stop()
	select {
	case sh.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-r.Context().Done():
		return false
	}
}

func (sh *shedder) release() { <-sh.slots }

// overload wraps next with the request timeout (outside) and the in-flight
// limit (inside). The order matters: http.TimeoutHandler answers at the
// deadline while the handler's goroutine may still be finishing, so the
// slot must be held by that goroutine, not by the timeout's wrapper, or a
// slow page would let more work in than the limit says.
func (s *server) overload(next http.Handler) http.Handler {
	limited := next
	if sh := newShedder(s.cfg.MaxInFlight, s.cfg.QueueWait); sh != nil {
		limited = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !sh.acquire(r) {
				s.refuseOverload(w, r)
				return
			}
			defer sh.release()
			next.ServeHTTP(w, r)
		})
	}
	timed := limited
	if d := s.cfg.RequestTimeout; d > 0 {
		// TimeoutHandler also sets the request context's deadline, so the
		// handler's queries stop at the same moment.
		timed = http.TimeoutHandler(limited, d, "request timed out after "+d.String()+"\n")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shedExempt(r) {
			next.ServeHTTP(w, r)
			return
		}
		timed.ServeHTTP(w, r)
	})
}

// refuseOverload answers a request refused for overload: cheaply (no
// template, no database), so refusing costs far less than serving.
func (s *server) refuseOverload(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Retry-After", shedRetryAfter)
	h.Set("Cache-Control", "no-store")
	msg := "The server is busy; try again in " + shedRetryAfter + " second."
	if isAPI(r) {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: errorDetail{Code: "unavailable", Message: msg}})
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(msg)+1))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(msg + "\n"))
}
