package httpserver

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
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
//
// One request per CPU: a page is CPU work (SQLite here is Go code), so more
// at once only time-slices the CPUs, and Go's scheduler then lets a newly
// arrived request (even one about to be refused) wait behind every running
// handler's 10 ms slice. Measured with dev/loadbench's overload pass on 2
// cores (docs/BENCHMARKS.md section 12): 8 at once served round pages at a
// median of 30-44 ms and refused at 6-8 ms; 2 at once served them at 9-12
// ms, refused at 2-3 ms, with as much goodput. Waits that use no CPU here
// (a compile check's child process) give their slot back (withoutSlot).
const (
	defaultInFlightPerCPU = 1
	defaultQueueWait      = 5 * time.Millisecond
	defaultRequestTimeout = 10 * time.Second
	// shedRetryAfter is the Retry-After a refused request gets, in seconds:
	// the smallest value the header can say, since overload here is
	// measured in milliseconds of queued work.
	shedRetryAfter = "1"
)

// DefaultMaxInFlight is Config.MaxInFlight's default on this machine.
func DefaultMaxInFlight() int { return MaxInFlightFor(runtime.GOMAXPROCS(0)) }

// MaxInFlightFor is the default in-flight limit for cpus CPUs.
func MaxInFlightFor(cpus int) int { return defaultInFlightPerCPU * cpus }

// shedDefaults fills the overload settings of c; a negative value turns
// the setting off.
func (c *Config) shedDefaults() {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight()
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

// queuePerSlot sizes the queue: waiting costs no CPU, only a goroutine
// and a timer, so a burst of several times the slots can wait its few
// milliseconds rather than be refused (with one slot per CPU and as many
// waiting, 16 clients at once on 2 cores had over a quarter of their
// requests refused while the pages served answered within 17 ms at p99).
const queuePerSlot = 8

// shedder bounds the requests being served at once. slots holds one token
// per admitted request; queue bounds how many more may wait (at most
// wait) for a slot before they are refused, so a burst that lasts a few
// milliseconds is absorbed while sustained overload is refused at once.
//
// hold is a moving average of how long an admitted request keeps its slot.
// A request that finds every slot taken joins the queue only if the
// waiters ahead of it, served at that pace, leave it a slot within wait;
// otherwise it would only time out there, so it is refused at once. Under
// sustained overload of slow pages (4 ms each on 2 slots: two waiters
// fit in 5 ms) the excess is then refused in well under a millisecond
// instead of after the full wait, while a burst of fast pages (0.2 ms)
// still finds the whole queue open.
type shedder struct {
	slots chan struct{}
	queue chan struct{}
	wait  time.Duration
	hold  atomic.Int64 // nanoseconds; 0 until the first request finishes
}

func newShedder(limit int, wait time.Duration) *shedder {
	if limit <= 0 {
		return nil
	}
	sh := &shedder{slots: make(chan struct{}, limit), wait: max(wait, 0)}
	if sh.wait > 0 {
		sh.queue = make(chan struct{}, queuePerSlot*limit)
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
	if !sh.worthWaiting(len(sh.queue)) {
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

// worthWaiting reports whether a request with ahead waiters before it can
// expect a slot within the wait, at the pace admitted requests have been
// giving theirs back.
func (sh *shedder) worthWaiting(ahead int) bool {
	h := time.Duration(sh.hold.Load())
	if h <= 0 {
		return true // no request has finished yet: nothing to go by
	}
	return time.Duration(ahead+1)*h <= sh.wait*time.Duration(cap(sh.slots))
}

// served records that an admitted request held its slot for d: an
// exponentially weighted average over about the last eight.
func (sh *shedder) served(d time.Duration) {
	for {
		old := sh.hold.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/8
		}
		if sh.hold.CompareAndSwap(old, next) {
			return
		}
	}
}

// slot is an admitted request's hold on the shedder, kept in its
// context; held is false while withoutSlot has given it back, and since is
// when it was last taken (the hold the shedder's pace is measured by).
type slot struct {
	sh    *shedder
	held  bool
	since time.Time
}

type slotKey struct{}

// withoutSlot runs fn with the request's slot given back, and takes one
// again (waiting as long as it must: the request was admitted and its work
// has begun) before returning. For waits that use no CPU of this process
// and can last seconds, such as a kernel upload's compile check in a child
// process: holding a slot through them would refuse pages that the CPU is
// free to serve. Call it from the handler's goroutine. An error is fn's,
// joined with ctx's when ctx ended before a slot came back (the request
// then holds none, and must give up).
func withoutSlot(ctx context.Context, fn func() error) error {
	sl, _ := ctx.Value(slotKey{}).(*slot)
	if sl == nil || !sl.held {
		return fn()
	}
	sl.sh.release()
	sl.held = false
	err := fn()
	select {
	case sl.sh.slots <- struct{}{}:
		sl.held, sl.since = true, time.Now()
		return err
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
}

// overload wraps next with the in-flight limit (outside) and the request
// timeout (inside). Refusing first keeps a refusal cheap: under overload
// most requests are refused, and http.TimeoutHandler costs a goroutine, a
// timer and a buffered copy of the response per request. The slot is
// taken here but given back by the handler's own goroutine (inside the
// timeout), because TimeoutHandler answers at the deadline while that
// goroutine may still be working: released at the answer, a slow page
// would let more work in than the limit says.
func (s *server) overload(next http.Handler) http.Handler {
	sh := newShedder(s.cfg.MaxInFlight, s.cfg.QueueWait)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sh != nil {
			sl := &slot{sh: sh, held: true, since: time.Now()}
			defer func() {
				if sl.held {
					sh.served(time.Since(sl.since))
					sh.release()
				}
			}()
			r = r.WithContext(context.WithValue(r.Context(), slotKey{}, sl))
		}
		next.ServeHTTP(w, r)
	})
	var timed http.Handler = inner
	if d := s.cfg.RequestTimeout; d > 0 {
		// TimeoutHandler also sets the request context's deadline, so the
		// handler's queries stop at the same moment. It always runs inner
		// (in a goroutine of its own), so the slot is always given back.
		timed = http.TimeoutHandler(inner, d, "request timed out after "+d.String()+"\n")
	}
	// Every answer but a refusal carries the security headers, set here,
	// outside the timeout: TimeoutHandler writes its own 503 to the
	// connection's header map, not to the buffer a handler inside it fills
	// (on success that buffer is merged over these, so a handler may still
	// change one).
	timed, exempt := securityHeaders(timed), securityHeaders(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shedExempt(r) {
			exempt.ServeHTTP(w, r)
			return
		}
		if sh != nil && !sh.acquire(r) {
			s.refuseOverload(w, r)
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
	// The refusal comes before securityHeaders (overload): of its headers
	// only this one means anything for a short text or JSON answer.
	h.Set("X-Content-Type-Options", "nosniff")
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
