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
	b := l.refilled(key)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// has reports whether key has a token, without taking it: the login limits
// are checked before the password and charged only for a failure.
func (l *limiter) has(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refilled(key).tokens >= 1
}

// take uses up a token of key (it may go below one; has then says no).
func (l *limiter) take(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refilled(key)
	if b.tokens > 0 {
		b.tokens--
	}
}

// reset fills key's bucket again.
func (l *limiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.buckets, key)
}

// refilled returns key's bucket with the tokens regained since its last use.
// The caller holds l.mu.
func (l *limiter) refilled(key string) *bucket {
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
	return b
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
