//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// target is one page the generator asks for, with the headers that log it in.
type target struct {
	name   string
	path   string
	header http.Header
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

// client makes the pass's single requests (the checks before any load,
// the health wait); the loops' requests go through a poller (poll.go).
// timeout bounds every request, the loops' included.
type client struct {
	timeout time.Duration
	hc      *http.Client
}

func newClient(timeout time.Duration) *client {
	return &client{timeout: timeout, hc: &http.Client{Timeout: timeout}}
}

// do sends one GET, reads the whole body and returns its status (0 on a
// transport error, a timeout or ctx's end).
func do(ctx context.Context, c *client, base string, t target) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+t.path, nil)
	if err != nil {
		return 0
	}
	for name, vs := range t.header {
		req.Header[name] = vs
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0
	}
	return resp.StatusCode
}

// request is t's GET for host, built once per pass: the loops write the
// same bytes for every request.
func (t target) request(host string) []byte {
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

// closedLoop keeps conns connections busy for d: each sends its next
// request as soon as the previous one is answered. A request still in
// flight at the end is not counted (cut off by the pass, not failed).
func closedLoop(ctx context.Context, c *client, base string, t target, conns int, d time.Duration) *result {
	res := &result{}
	start := time.Now()
	end := start.Add(d)
	// Each request that ends frees its connection's turn; the loop sends
	// the next ones, not the poller's callback: a send that fails at once
	// (a server that refuses connections) ends inside the send, and a
	// callback that sent again would recurse for the whole pass.
	turns := conns
	p, err := newPoller(base, t, c.timeout, func(k *pconn, st int, now time.Time) {
		res.samples = append(res.samples, sample{lat: now.Sub(k.due), status: st})
		turns++
	})
	if err != nil {
		res.elapsed = d
		return res
	}
	defer p.close()
	for now := time.Now(); now.Before(end) && ctx.Err() == nil; now = time.Now() {
		for n := turns; n > 0; n-- {
			turns--
			p.send(time.Now())
		}
		if err := p.wait(minTime(end, now.Add(10*time.Millisecond))); err != nil {
			break
		}
	}
	res.elapsed = time.Since(start)
	return res
}

// openLoop schedules requests at a fixed rate for d, each due at
// start + i/rate whatever happened to earlier ones, and times each from
// when it was due (so a slow server cannot hide its queueing delay by
// slowing the generator down). At most maxOutstanding requests are in
// flight; a request due while that many are outstanding is counted late
// and not sent. After the last is due it waits for those outstanding (each
// at most the client's timeout).
//
// tick > 0 batches the loop's work: it wakes once per tick (or at the next
// due time when nothing is in flight), sends every request due by then and
// reads every answer that has come, instead of waking for each due time
// and each answer. At the overload pass's rates (standings: ~14,000 rps,
// 70 us apart) a wake per event took two epoll waits a request, a third
// of the generator's CPU on the server's cores (pprof, BENCHMARKS section
// 12). Each latency is still timed from its due time to its collection,
// so the batching can only add to what is measured (at most a tick, in
// the lag column for the send), never hide the server's time.
func openLoop(ctx context.Context, c *client, base string, t target, rate float64, d time.Duration, maxOutstanding int, tick time.Duration) *result {
	res := &result{offered: rate}
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	p, err := newPoller(base, t, c.timeout, func(k *pconn, st int, now time.Time) {
		s := sample{lat: now.Sub(k.due), status: st}
		if !k.wrote.IsZero() {
			s.lag = k.wrote.Sub(k.due)
		}
		res.samples = append(res.samples, s)
	})
	if err != nil {
		res.elapsed = d
		return res
	}
	defer p.close()
	start := time.Now()
	for i := 0; ctx.Err() == nil && (i < n || p.busy > 0); {
		now := time.Now()
		for ; i < n; i++ {
			due := start.Add(time.Duration(i) * interval)
			if due.After(now) {
				break
			}
			if p.busy >= maxOutstanding {
				res.late++
				continue
			}
			p.send(due)
		}
		next := now.Add(10 * time.Millisecond)
		if i < n {
			next = minTime(next, start.Add(time.Duration(i)*interval))
		}
		var err error
		if tick > 0 {
			wake := now.Add(tick)
			if p.busy == 0 && next.After(wake) {
				wake = next // nothing to collect before the next is due
			}
			err = p.sleepThenPoll(wake)
		} else {
			err = p.wait(next)
		}
		if err != nil {
			break
		}
	}
	res.elapsed = time.Since(start)
	return res
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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
