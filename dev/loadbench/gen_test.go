//go:build linux

package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/httpserver"
)

// TestGenerator checks both loops against a tiny server: the closed loop
// counts what the server answered, the open loop sends about rate x d
// requests and times each, and refusals are told apart from successes.
func TestGenerator(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if r.URL.Path == "/busy" && n%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	ctx := context.Background()
	c := newClient(5 * time.Second)

	r := closedLoop(ctx, c, srv.URL, target{path: "/"}, 4, 300*time.Millisecond)
	if got := int64(len(r.samples)); got == 0 || got > hits.Load() {
		t.Fatalf("closed loop recorded %d requests, server saw %d", got, hits.Load())
	}
	if r.count(isOK) != len(r.samples) || r.goodput() <= 0 {
		t.Fatalf("closed loop: %d of %d ok, goodput %.1f", r.count(isOK), len(r.samples), r.goodput())
	}
	p := r.percentiles(isOK, 0.5, 0.99)
	if p[0] < time.Millisecond || p[1] < p[0] {
		t.Fatalf("closed loop percentiles %v: the server sleeps 1ms per request", p)
	}

	// Both forms of the open loop: a wake per event, and batched per tick.
	for _, tick := range []time.Duration{0, 200 * time.Microsecond} {
		hits.Store(0)
		checkOpenLoop(t, openLoop(ctx, newClient(5*time.Second), srv.URL, target{path: "/busy"}, 200, 500*time.Millisecond, 64, tick), tick)
	}
}

// checkOpenLoop checks an open loop of 100 requests to TestGenerator's
// /busy, which refuses every other request and sleeps 1 ms on the rest.
func checkOpenLoop(t *testing.T, o *result, tick time.Duration) {
	t.Helper()
	if n := len(o.samples) + o.late; n != 100 {
		t.Fatalf("open loop at 200 rps for 0.5 s scheduled %d requests, want 100", n)
	}
	ok, refused := o.count(isOK), o.count(isRefused)
	if ok < 40 || refused < 40 || ok+refused != len(o.samples) {
		t.Fatalf("open loop (tick %v): %d ok, %d refused of %d; the server refuses every other request", tick, ok, refused, len(o.samples))
	}
	// Batching never makes a request look faster than the server was.
	if p := o.percentiles(isOK, 0); p[0] < time.Millisecond {
		t.Fatalf("open loop (tick %v): fastest success %v; the server sleeps 1 ms on each", tick, p[0])
	}
	// The generator's lag is part of each latency measured from the due
	// time, never more than it.
	for _, s := range o.samples {
		if s.lag < 0 || s.lag > s.lat {
			t.Fatalf("open loop sample: lag %v, latency %v; want 0 <= lag <= latency", s.lag, s.lat)
		}
	}
	if lag := o.lagPercentiles(0.5, 0.99); lag[1] < lag[0] {
		t.Fatalf("open loop lag percentiles %v: p99 below p50", lag)
	}
}

func TestQuantiles(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	xs := []time.Duration{ms(5), ms(1), ms(4), ms(2), ms(3)}
	if got := quantiles(xs, 0.2, 0.5, 1); got[0] != ms(1) || got[1] != ms(3) || got[2] != ms(5) {
		t.Errorf("quantiles of 1..5 ms at 0.2, 0.5, 1: %v; want 1ms, 3ms, 5ms (nearest rank)", got)
	}
	if got := quantiles(nil, 0.5); got[0] != 0 {
		t.Errorf("quantiles of nothing: %v; want zero", got)
	}
}

func TestOriginalRows(t *testing.T) {
	off := map[string]int64{"rounds": 4, "runs": 18}
	if got := originalRows(cloneRules[0], off); got != "id <= 4" {
		t.Errorf("rounds: %q", got)
	}
	for _, r := range cloneRules {
		if r.table == "run_shapes" {
			if got := originalRows(r, off); got != "run_id <= 18" {
				t.Errorf("run_shapes: %q", got)
			}
		}
	}
}

func TestCapacityConns(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []int
	}{
		{[]string{"--max-inflight", "2"}, []int{16, 2, 4}},
		{[]string{"--max-inflight=8"}, []int{16, 8}},
		{[]string{"--max-inflight", "-1"}, []int{16}},
	} {
		if got := capacityConns(16, inFlight(c.args, "0")); !slices.Equal(got, c.want) {
			t.Errorf("%q: capacity measured at %v connections; want %v", c.args, got, c.want)
		}
	}
	// Without --max-inflight the limit is the server's default for the
	// CPUs it is pinned to: one request per CPU.
	for list, want := range map[string]int{"0": 1, "0,2": 2, "0-3": 4, "1-2,5": 3, "": 0, "x": 0, "3-1": 0} {
		if got := cpuCount(list); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", list, got, want)
		}
	}
	if got, want := inFlight(nil, "0-3"), 4*httpserver.DefaultMaxInFlight()/runtime.GOMAXPROCS(0); got != want {
		t.Errorf("default limit on 4 pinned CPUs: %d, want %d", got, want)
	}
}

// -server-cpus starts each server under taskset.
func TestServerCmd(t *testing.T) {
	if got := (options{}).serverCmd("bin/web"); !slices.Equal(got, []string{"bin/web"}) {
		t.Errorf("unpinned: %v", got)
	}
	if got := (options{serverCPUs: "0"}).serverCmd("bin/web"); !slices.Equal(got, []string{"taskset", "-c", "0", "bin/web"}) {
		t.Errorf("pinned: %v", got)
	}
}

// parseAnswer reads exactly one response, whatever its framing, and says
// it is not whole yet for every shorter prefix of it.
func TestParseAnswer(t *testing.T) {
	cases := []struct {
		name, in   string
		status     int
		keep, fail bool
		eofBody    bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, true, false, false},
		{"chunked", "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nTrailer: t\r\n\r\n", 503, true, false, false},
		{"close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, false, false, false},
		{"to EOF", "HTTP/1.0 200 OK\r\n\r\nbody to the end", 200, false, false, true},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, false, true, false},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, false, true, false},
		{"bad header", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", 0, false, true, false},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, false, true, false},
		{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokxx0\r\n\r\n", 0, false, true, false},
	}
	for _, c := range cases {
		st, keep, used, eofBody, err := parseAnswer([]byte(c.in))
		if (err != nil) != c.fail || st != c.status || keep != c.keep || eofBody != c.eofBody {
			t.Errorf("%s: status %d keep %v eofBody %v err %v, want %d %v %v fail %v", c.name, st, keep, eofBody, err, c.status, c.keep, c.eofBody, c.fail)
			continue
		}
		if c.fail {
			continue
		}
		if want := len(c.in); !c.eofBody && used != want {
			t.Errorf("%s: used %d bytes, want %d", c.name, used, want)
		}
		// Every prefix that ends before the answer does is "not yet".
		for n := 0; n < len(c.in); n++ {
			if _, _, used, _, err := parseAnswer([]byte(c.in[:n])); err != nil || used != 0 {
				t.Errorf("%s: the first %d bytes read as whole (used %d) or bad (%v)", c.name, n, used, err)
				break
			}
		}
	}
	if _, _, _, _, err := parseAnswer([]byte(strings.Repeat("x", maxHead+1))); err == nil {
		t.Error("a header past maxHead without its end was taken as not yet whole")
	}
}

// parseStatCPU reads fields 14 and 15 after a command name that holds
// spaces and parentheses, and refuses lines it cannot read.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (web (x) y) S 1 4242 4242 0 -1 4194304 1234 0 0 0 250 37 0 0 20 0 9 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil || got != 287*clockTick {
		t.Errorf("parseStatCPU = %v, %v; want %v", got, err, 287*clockTick)
	}
	for _, bad := range []string{"", "4242 web S 1", "4242 (web) S 1 2 3", "4242 (web) S 1 4242 4242 0 -1 4194304 1234 0 0 0 x 37 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q) took it", bad)
		}
	}
	if c, err := procCPU(os.Getpid()); err != nil || c < 0 {
		t.Errorf("procCPU of this process: %v, %v", c, err)
	}
	if selfCPU() <= 0 {
		t.Error("selfCPU is zero after running tests")
	}
}

// A request the server never answers ends at the client's timeout, and one
// whose connection the server closes ends at once; both count as failures
// without a status, and neither stops a loop: the closed loop opens a new
// connection and goes on, the open loop waits for its outstanding requests
// no longer than the timeout.
func TestGeneratorFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			<-r.Context().Done() // the client gives up first
		case "/close":
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	timeout := 150 * time.Millisecond

	r := closedLoop(ctx, newClient(timeout), srv.URL, target{path: "/hang"}, 2, 400*time.Millisecond)
	if n := len(r.samples); n < 2 || n > 6 || r.count(isOK) != 0 {
		t.Fatalf("closed loop on a page that never answers: %d samples, %d ok; want 2-6 timeouts (2 connections, 150 ms each, 400 ms)", n, r.count(isOK))
	}
	for _, s := range r.samples {
		if s.status != 0 || s.lat < timeout {
			t.Fatalf("a request that timed out: status %d after %v; want 0 after at least %v", s.status, s.lat, timeout)
		}
	}

	r = closedLoop(ctx, newClient(timeout), srv.URL, target{path: "/close"}, 2, 100*time.Millisecond)
	if n := len(r.samples); n < 4 || r.count(func(st int) bool { return st != 0 }) != 0 {
		t.Fatalf("closed loop on a page that closes the connection: %d samples, statuses %v; want several failures, all without a status", n, r.samples[:min(3, n)])
	}

	// A server that is gone: every connection refused, each a failure at
	// once, and the closed loop still ends on time.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String()
	l.Close()
	start := time.Now()
	r = closedLoop(ctx, newClient(timeout), gone, target{path: "/"}, 2, 100*time.Millisecond)
	if n := len(r.samples); n == 0 || r.count(func(st int) bool { return st != 0 }) != 0 || time.Since(start) > time.Second {
		t.Fatalf("closed loop against a closed port: %d samples, %d with a status, %v; want failures only, within the pass", n, r.count(func(st int) bool { return st != 0 }), time.Since(start))
	}

	start = time.Now()
	o := openLoop(ctx, newClient(timeout), srv.URL, target{path: "/hang"}, 50, 200*time.Millisecond, 64, 0)
	if n := len(o.samples); n != 10 || o.count(func(st int) bool { return st != 0 }) != 0 {
		t.Fatalf("open loop at 50 rps for 0.2 s on a page that never answers: %d samples, want 10 failures", n)
	}
	if el := time.Since(start); el > 200*time.Millisecond+timeout+200*time.Millisecond {
		t.Fatalf("open loop took %v to give up on its outstanding requests; the timeout is %v", el, timeout)
	}
}
