package httpserver

import (
	"sync"
	"time"
)

// limiter is an in-memory token bucket per key (an IP address or a login).
// Each key starts with burst tokens and regains one every refill; a request
// takes one. State is lost on restart, which is fine for slowing down
// password guessing on a single-process app.
type limiter struct {
	mu      sync.Mutex
	burst   float64
	refill  time.Duration
	now     func() time.Time
	buckets map[string]*bucket
	sweeps  int
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(burst int, refill time.Duration, now func() time.Time) *limiter {
	if burst < 1 {
		burst = 1
	}
	if refill <= 0 {
		refill = time.Second
	}
	return &limiter{burst: float64(burst), refill: refill, now: now, buckets: map[string]*bucket{}}
}

// allow takes a token for key and reports whether there was one.
func (l *limiter) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens += float64(now.Sub(b.last)) / float64(l.refill)
	if b.tokens > l.burst {
		b.tokens = l.burst
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// sweep drops full buckets now and then so the map does not grow with every
// address that ever tried once.
func (l *limiter) sweep(now time.Time) {
	l.sweeps++
	if l.sweeps < 1024 {
		return
	}
	l.sweeps = 0
	full := l.refill * time.Duration(l.burst)
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
}
