package httpserver

import (
	"bytes"
	"net/http"
	"regexp"
	"strconv"
	"sync"
)

// Generationer is implemented by stores that count their writes
// (sqlite.DB.Generation): a value computed from reads made after
// Generation returned g stays current while it still returns g.
type Generationer interface {
	Generation() uint64
}

// cachedPaths are the pages read far more than written whose answer
// depends only on the stored data, the viewer and the address: standings,
// recaps, results and calibration are computed from scorecards, votes and
// runs, so a page computed once serves every later request of the same
// viewer until the next write (issue 13). Pages showing sessions or tokens
// (whose writes leave the generation alone) are not among them.
var cachedPaths = regexp.MustCompile(`^(/|/rounds|/rounds/[0-9]+|/pitches/[0-9]+|/calibration|/runs|/api/rounds/[0-9]+/standings)$`)

const (
	// maxCachedPage is the largest body kept; a larger page is computed
	// per request (pages are bounded, see runs and calibration).
	maxCachedPage = 4 << 20
	// maxCachedBytes bounds the whole cache; past it the cache starts over.
	maxCachedBytes = 64 << 20
)

// pageCache keeps whole answers (status 200, headers, body) keyed by
// viewer and address, for one store generation: the first request after a
// write finds an empty cache. Concurrent requests for the same key wait
// for the first one instead of computing the page again.
type pageCache struct {
	gen Generationer

	mu    sync.Mutex
	at    uint64 // generation the entries were computed at
	bytes int
	m     map[string]*cachedPage
}

type cachedPage struct {
	ready  chan struct{} // closed once the first request finished
	ok     bool          // a 200 without cookies: others may replay it
	header http.Header
	body   []byte
}

func newPageCache(svc any) *pageCache {
	g, ok := svc.(Generationer)
	if !ok {
		return nil
	}
	return &pageCache{gen: g, m: map[string]*cachedPage{}}
}

// lookup returns the entry for key at generation gen, and whether the
// caller is the one to compute it.
func (c *pageCache) lookup(gen uint64, key string) (*cachedPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.at || c.bytes > maxCachedBytes {
		c.at, c.bytes, c.m = gen, 0, map[string]*cachedPage{}
	}
	if p := c.m[key]; p != nil {
		return p, false
	}
	p := &cachedPage{ready: make(chan struct{})}
	c.m[key] = p
	return p, true
}

// done files a computed page, or forgets it when it may not be replayed.
func (c *pageCache) done(gen uint64, key string, p *cachedPage) {
	c.mu.Lock()
	if !p.ok && c.at == gen && c.m[key] == p {
		delete(c.m, key)
	}
	if p.ok && c.at == gen {
		c.bytes += len(p.body)
	}
	c.mu.Unlock()
	close(p.ready)
}

func pageKey(r *http.Request) string {
	u := userFrom(r.Context())
	var b []byte
	if u != nil {
		b = strconv.AppendInt(b, u.ID, 10)
		b = append(b, ' ')
		b = append(b, u.Role...)
	}
	b = append(b, ' ')
	b = append(b, r.URL.Path...)
	b = append(b, '?')
	b = append(b, r.URL.RawQuery...)
	return string(b)
}

// cachePages serves cachedPaths' GETs from the page cache. It runs after
// the middleware that finds the viewer, so the key names who is asking.
func (s *server) cachePages(next http.Handler) http.Handler {
	c := s.pages
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !cachedPaths.MatchString(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key := pageKey(r)
		gen := c.gen.Generation() // before any read: see Generationer
		p, first := c.lookup(gen, key)
		if !first {
			// Waiting for the first request's page uses no CPU, so it
			// lends out its slot (shed.go): a cold page that takes seconds
			// (calibration at 100x the demo, after a write) would
			// otherwise hold every slot with its waiters, and the server
			// would refuse the other pages meanwhile.
			err := withoutSlot(r.Context(), func() error {
				select {
				case <-p.ready:
					return nil
				case <-r.Context().Done():
					return r.Context().Err()
				}
			})
			if err != nil {
				return // the request timed out or went away while waiting
			}
			if !p.ok {
				next.ServeHTTP(w, r)
				return
			}
			p.replay(w)
			return
		}
		rec := &pageRecorder{header: http.Header{}, status: http.StatusOK}
		func() {
			defer func() {
				if rec.status == http.StatusOK && rec.header.Get("Set-Cookie") == "" && rec.body.Len() <= maxCachedPage {
					p.ok, p.header, p.body = true, rec.header, rec.body.Bytes()
				}
				c.done(gen, key, p)
			}()
			next.ServeHTTP(rec, r)
		}()
		h := w.Header()
		for k, v := range rec.header {
			h[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

func (p *cachedPage) replay(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range p.header {
		h[k] = v
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(p.body)
}

// pageRecorder holds a cached path's answer until it is complete.
type pageRecorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *pageRecorder) Header() http.Header { return r.header }

func (r *pageRecorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
}

func (r *pageRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.body.Write(b)
}
