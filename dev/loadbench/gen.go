package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// target is one page the generator asks for, with the headers that log it in.
type target struct {
	name   string
	path   string
	header http.Header
	req    *builtRequest // the request bytes built by withRequest (nil: built per call)
}

// builtRequest is a target's request for one host.
type builtRequest struct {
	host string
	b    []byte
}

// sample is one finished request: how long it took (from when it was due,
// in the open loop) and its status (0: the request failed without one).
type sample struct {
	lat    time.Duration
	status int
	lag    time.Duration // open loop: from when it was due to when it was written
}

// result is what one closed- or open-loop pass measured.
type result struct {
	elapsed time.Duration
	samples []sample
	offered float64 // open loop: requests per second scheduled; 0 for closed loop
	late    int     // open loop: requests that could not start (too many outstanding)
}

func (r *result) count(ok func(int) bool) int {
	n := 0
	for _, s := range r.samples {
		if ok(s.status) {
			n++
		}
	}
	return n
}

func isOK(st int) bool      { return st >= 200 && st < 300 }
func isRefused(st int) bool { return st == http.StatusServiceUnavailable }

// goodput is successful responses per second.
func (r *result) goodput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.count(isOK)) / r.elapsed.Seconds()
}

// percentiles returns the latencies at the given quantiles (0..1) of the
// samples whose status passes keep; zero when there are none.
func (r *result) percentiles(keep func(int) bool, qs ...float64) []time.Duration {
	var lats []time.Duration
	for _, s := range r.samples {
		if keep(s.status) {
			lats = append(lats, s.lat)
		}
	}
	return quantiles(lats, qs...)
}

// lagPercentiles is percentiles of the open loop's own lag, over every
// request it wrote: how late the generator sent, which every latency
// measured from the due time includes.
func (r *result) lagPercentiles(qs ...float64) []time.Duration {
	var lags []time.Duration
	for _, s := range r.samples {
		if s.status != 0 {
			lags = append(lags, s.lag)
		}
	}
	return quantiles(lags, qs...)
}

// quantiles returns xs's values at the quantiles qs (nearest rank; zero
// when xs is empty). It sorts xs.
func quantiles(xs []time.Duration, qs ...float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if len(xs) == 0 {
		return out
	}
	slices.Sort(xs)
	for i, q := range qs {
		k := int(q*float64(len(xs))+0.5) - 1
		k = min(max(k, 0), len(xs)-1)
		out[i] = xs[k]
	}
	return out
}

// client sends the generator's GETs over keep-alive HTTP/1.1 connections
// it keeps itself, at most conns of them open at once (a request waits for
// one, as net/http's MaxConnsPerHost makes it). Why not net/http's
// Transport: it hands every request between three goroutines (the caller,
// the connection's writer and its reader), and on these two cores the
// generator's CPU is taken from the server it measures. Measured with perf
// on the overload pass (standings, 3x capacity offered): the Transport-based
// generator took a fifth of both cores' samples.
type client struct {
	timeout time.Duration
	slots   chan struct{}
	mu      sync.Mutex
	idle    []*conn
}

type conn struct {
	nc net.Conn
	br *bufio.Reader
}

func newClient(conns int, timeout time.Duration) *client {
	return &client{timeout: timeout, slots: make(chan struct{}, conns)}
}

// closeIdle closes the connections no request is using.
func (c *client) closeIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, k := range idle {
		k.nc.Close()
	}
}

// do sends one GET, reads the whole body and returns its status (0 on a
// transport error, a timeout or ctx's end).
func do(ctx context.Context, c *client, base string, t target) int {
	st, _ := send(ctx, c, base, t)
	return st
}

// send is do, and also says when the request was handed to the kernel
// (zero if it never was): the open loop's measure of its own lag.
func send(ctx context.Context, c *client, base string, t target) (status int, wrote time.Time) {
	host, ok := strings.CutPrefix(base, "http://")
	if !ok {
		return 0, wrote
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, wrote
	}
	defer func() { <-c.slots }()
	k, err := c.conn(host)
	if err != nil {
		return 0, wrote
	}
	st, reuse, wrote := k.get(ctx, host, t, c.timeout)
	if !reuse {
		k.nc.Close()
		return st, wrote
	}
	c.mu.Lock()
	c.idle = append(c.idle, k)
	c.mu.Unlock()
	return st, wrote
}

// conn is an idle connection, or a new one to host.
func (c *client) conn(host string) (*conn, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		k := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return k, nil
	}
	c.mu.Unlock()
	nc, err := net.DialTimeout("tcp", host, c.timeout)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReader(nc)}, nil
}

// get sends one request on k and reads its answer; reuse says whether k
// can carry another. The generator shares the server's two cores, so it
// keeps its own cost per request low: the request bytes are built once
// per target and host (request), and the answer is read by readAnswer,
// which keeps nothing but the status (net/http's ReadResponse builds a
// header map and a body reader for each).
func (k *conn) get(ctx context.Context, host string, t target, timeout time.Duration) (status int, reuse bool, wrote time.Time) {
	// The connection's deadline is the only way a request is cut short: the
	// request timeout, or the pass's end where ctx has one. (A per-request
	// context.AfterFunc for interrupts cost a registration on every request
	// of the hot path; an interrupt now ends in-flight requests at their
	// deadline, at most the request timeout later.)
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = k.nc.SetDeadline(deadline)
	wrote = time.Now()
	if _, err := k.nc.Write(t.request(host)); err != nil {
		return 0, false, wrote
	}
	st, keep, err := readAnswer(k.br)
	if err != nil {
		return 0, false, wrote
	}
	return st, keep && ctx.Err() == nil, wrote
}

// request is t's GET for host: the bytes withRequest built, or built now.
func (t target) request(host string) []byte {
	if t.req != nil && t.req.host == host {
		return t.req.b
	}
	var b strings.Builder
	b.WriteString("GET " + t.path + " HTTP/1.1\r\nHost: " + host + "\r\n")
	for name, vs := range t.header {
		for _, v := range vs {
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// withRequest is t with its request for the server at base built once, for
// a pass's many requests (read-only from then on, so shared safely).
func (t target) withRequest(base string) target {
	host := strings.TrimPrefix(base, "http://")
	t.req = &builtRequest{host: host, b: t.request(host)}
	return t
}

// readAnswer reads one HTTP/1.1 response from br and discards its body
// (Content-Length or chunked); keep says whether the connection stays open.
func readAnswer(br *bufio.Reader) (status int, keep bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !strings.HasPrefix(line, "HTTP/1.") || line[8] != ' ' {
		return 0, false, fmt.Errorf("loadbench: bad status line %q", line)
	}
	status, err = strconv.Atoi(line[9:12])
	if err != nil {
		return 0, false, fmt.Errorf("loadbench: bad status line %q", line)
	}
	length, chunked := -1, false
	keep = true
	for {
		h, err := readLine(br)
		if err != nil {
			return 0, false, err
		}
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return 0, false, fmt.Errorf("loadbench: bad header line %q", h)
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Content-Length"):
			if length, err = strconv.Atoi(value); err != nil || length < 0 {
				return 0, false, fmt.Errorf("loadbench: bad Content-Length %q", value)
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			chunked = strings.EqualFold(value, "chunked")
		case strings.EqualFold(name, "Connection"):
			keep = !strings.EqualFold(value, "close")
		}
	}
	switch {
	case chunked:
		for {
			line, err := readLine(br)
			if err != nil {
				return 0, false, err
			}
			size, _, _ := strings.Cut(line, ";")
			n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
			if err != nil || n < 0 {
				return 0, false, fmt.Errorf("loadbench: bad chunk size %q", line)
			}
			if n == 0 {
				break
			}
			if _, err := br.Discard(int(n)); err != nil {
				return 0, false, err
			}
			if l, err := readLine(br); err != nil || l != "" {
				return 0, false, fmt.Errorf("loadbench: chunk not followed by CRLF: %v", err)
			}
		}
		for { // trailers, then the blank line
			l, err := readLine(br)
			if err != nil {
				return 0, false, err
			}
			if l == "" {
				break
			}
		}
	case length >= 0:
		if _, err := br.Discard(length); err != nil {
			return 0, false, err
		}
	default:
		// No length: the body runs to the end of the connection.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return 0, false, err
		}
		keep = false
	}
	return status, keep, nil
}

// readLine is one CRLF-terminated line without its CRLF.
func readLine(br *bufio.Reader) (string, error) {
	b, err := br.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// closedLoop runs conns workers, each sending its next request as soon as
// the previous one is answered, for d.
func closedLoop(ctx context.Context, c *client, base string, t target, conns int, d time.Duration) *result {
	t = t.withRequest(base)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	end, _ := ctx.Deadline()
	var mu sync.Mutex
	res := &result{}
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []sample
			for ctx.Err() == nil {
				t0 := time.Now()
				st := do(ctx, c, base, t)
				if st == 0 && (ctx.Err() != nil || !time.Now().Before(end)) {
					// Cut off by the end of the pass, not a failure (the
					// connection's deadline is the pass's, and may fire
					// a moment before ctx's own timer).
					break
				}
				local = append(local, sample{lat: time.Since(t0), status: st})
			}
			mu.Lock()
			res.samples = append(res.samples, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// openLoop schedules requests at a fixed rate for d, each due at
// start + i/rate whatever happened to earlier ones, and times each from
// when it was due (so a slow server cannot hide its queueing delay by
// slowing the generator down). At most maxOutstanding requests are in
// flight; a request due while that many are outstanding is counted late
// and not sent.
func openLoop(ctx context.Context, c *client, base string, t target, rate float64, d time.Duration, maxOutstanding int) *result {
	t = t.withRequest(base)
	res := &result{offered: rate}
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	sem := make(chan struct{}, maxOutstanding)
	out := make(chan sample, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		default:
			res.late++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, wrote := send(ctx, c, base, t)
			s := sample{lat: time.Since(due), status: st}
			if !wrote.IsZero() {
				s.lag = wrote.Sub(due)
			}
			out <- s
			<-sem
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	close(out)
	for s := range out {
		res.samples = append(res.samples, s)
	}
	return res
}

// mixedLoop is closedLoop while one writer casts a vote every interval
// (alternating between two pitches of the demo's judging round 5), so that
// every page is computed again after each write. It returns the readers'
// result and how many writes succeeded.
func mixedLoop(ctx context.Context, c *client, base string, t target, conns int, d, every time.Duration) (*result, int, error) {
	wctx, stop := context.WithCancel(ctx)
	wc := &http.Client{Timeout: 10 * time.Second} // not the readers' connections: the writer must not queue behind them
	var writes int
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			body := fmt.Sprintf(`{"pitch": %d, "justification": "loadbench write %d"}`, 9+i%2, i)
			req, err := http.NewRequestWithContext(wctx, http.MethodPut, base+"/api/rounds/5/vote", strings.NewReader(body))
			if err != nil {
				werr = err
				return
			}
			req.Header.Set("Authorization", "Bearer "+writerToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := wc.Do(req)
			if err != nil {
				if wctx.Err() == nil {
					werr = err
				}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
				writes++
			} else if resp.StatusCode != http.StatusServiceUnavailable {
				werr = fmt.Errorf("vote: %d %s", resp.StatusCode, b)
				return
			}
		}
	}()
	r := closedLoop(ctx, c, base, t, conns, d)
	stop()
	<-done
	return r, writes, werr
}
