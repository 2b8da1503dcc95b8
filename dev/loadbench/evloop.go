package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"
)

// The event-loop engine (-engine epoll, Linux): the overload pass's
// requests driven from one goroutine over non-blocking sockets and epoll,
// without a goroutine, a timer and a netpoller round trip per request.
// Why: on this 2-core machine the generator shares the server's cores, and
// at three times a page's capacity its CPU per request is taken from the
// pages it measures. Measured with -cpuprofile on the goroutine engine
// (standings, 3x capacity): the write syscall 30% of the generator's
// samples, the read 15% (each answer read once too early, EAGAIN, then
// again), the scheduler's wake-ups and netpoll ~25%; 17-24 us of CPU per
// request against the server's 4-7 us per refusal.

// errIncomplete: the bytes received so far end before the response does.
var errIncomplete = errors.New("loadbench: response incomplete")

// answerBytes is an answerReader over the bytes received so far. Reading
// past them fails with errIncomplete, or io.EOF once the peer has closed
// the connection (closed), so that readAnswer either finishes a response
// or says more bytes are needed.
type answerBytes struct {
	b      []byte
	off    int
	closed bool
}

func (a *answerBytes) short() error {
	if a.closed {
		return io.EOF
	}
	return errIncomplete
}

func (a *answerBytes) ReadSlice(delim byte) ([]byte, error) {
	i := bytes.IndexByte(a.b[a.off:], delim)
	if i < 0 {
		return nil, a.short()
	}
	s := a.b[a.off : a.off+i+1]
	a.off += i + 1
	return s, nil
}

func (a *answerBytes) Discard(n int) (int, error) {
	if len(a.b)-a.off < n {
		return 0, a.short()
	}
	a.off += n
	return n, nil
}

func (a *answerBytes) Read(p []byte) (int, error) {
	if a.off == len(a.b) {
		return 0, a.short()
	}
	n := copy(p, a.b[a.off:])
	a.off += n
	return n, nil
}

// parseAnswer reads one response from b, the bytes received so far (closed:
// the peer has closed the connection since): its status, whether the
// connection stays open and how many bytes it took. errIncomplete means
// more bytes are needed.
func parseAnswer(b []byte, closed bool) (status int, keep bool, n int, err error) {
	a := &answerBytes{b: b, closed: closed}
	status, keep, err = readAnswer(a)
	return status, keep, a.off, err
}

// loops runs the overload pass's closed and open loops on one engine.
type loops interface {
	closed(ctx context.Context, base string, t target, conns int, d time.Duration) *result
	open(ctx context.Context, base string, t target, rate float64, d time.Duration, maxOutstanding int) *result
}

// goroutineLoops is the goroutine engine: closedLoop on one client,
// openLoop on another (as many connections as requests outstanding).
type goroutineLoops struct{ closedC, openC *client }

func newGoroutineLoops(closedConns int, timeout time.Duration) goroutineLoops {
	return goroutineLoops{closedC: newClient(closedConns, timeout), openC: newClient(1024, timeout)}
}

func (g goroutineLoops) closed(ctx context.Context, base string, t target, conns int, d time.Duration) *result {
	return closedLoop(ctx, g.closedC, base, t, conns, d)
}

func (g goroutineLoops) open(ctx context.Context, base string, t target, rate float64, d time.Duration, maxOutstanding int) *result {
	return openLoop(ctx, g.openC, base, t, rate, d, maxOutstanding)
}
