//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// epollLoops is the event-loop engine: each loop opens its own
// connections, drives them from the calling goroutine and closes them when
// it ends. timeout bounds one request, as the goroutine engine's client does.
type epollLoops struct{ timeout time.Duration }

func newEpollLoops(timeout time.Duration) loops { return epollLoops{timeout: timeout} }

// evConn is one connection of an event loop.
type evConn struct {
	fd          int
	buf         []byte    // the answer's bytes received so far
	due, wrote  time.Time // when the request in flight was due, and written
	deadline    time.Time // when it fails for want of an answer
	busy        bool      // a request is in flight (or waits for the connect)
	connecting  bool
	sendPending bool // write the request once connected
}

// evLoop is one closed or open loop's connections and results.
type evLoop struct {
	ep       int
	sa       syscall.Sockaddr
	family   int
	req      []byte
	timeout  time.Duration
	byFD     map[int]*evConn
	idle     []*evConn
	inflight int
	events   []syscall.EpollEvent
	scratch  []byte
	res      *result
	pwait2   bool // epoll_pwait2 (a nanosecond timeout) works here
	// next, when set, is called as each request finishes (the closed loop
	// counts a request to send; it sends them from its own loop, never from
	// here, so a server that fails every request at once cannot recurse).
	next func(now time.Time)
}

func newEvLoop(base string, t target, timeout time.Duration) (*evLoop, error) {
	host, ok := strings.CutPrefix(base, "http://")
	if !ok {
		return nil, fmt.Errorf("loadbench: %q is not an http:// address", base)
	}
	ta, err := net.ResolveTCPAddr("tcp", host)
	if err != nil {
		return nil, fmt.Errorf("loadbench: resolving %s: %w", host, err)
	}
	l := &evLoop{req: t.withRequest(base).req.b, timeout: timeout, byFD: map[int]*evConn{},
		events: make([]syscall.EpollEvent, 256), scratch: make([]byte, 64<<10), res: &result{}, pwait2: true}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To16())
		l.sa, l.family = sa, syscall.AF_INET6
	}
	if l.ep, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("loadbench: epoll_create1: %w", err)
	}
	return l, nil
}

// close ends every connection and the epoll instance.
func (l *evLoop) close() {
	for fd := range l.byFD {
		syscall.Close(fd)
	}
	syscall.Close(l.ep)
}

// conn is an idle connection, or a new one (its connect under way).
func (l *evLoop) conn() (*evConn, error) {
	if n := len(l.idle); n > 0 {
		c := l.idle[n-1]
		l.idle = l.idle[:n-1]
		return c, nil
	}
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, err
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	c := &evConn{fd: fd}
	if err := syscall.Connect(fd, l.sa); err != nil && !errors.Is(err, syscall.EINPROGRESS) {
		syscall.Close(fd)
		return nil, err
	}
	c.connecting = true
	ev := syscall.EpollEvent{Events: syscall.EPOLLOUT | syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	l.byFD[fd] = c
	return c, nil
}

// send starts a request due at due; a connection that cannot be had
// counts as a failed request.
func (l *evLoop) send(due time.Time) {
	c, err := l.conn()
	if err != nil {
		now := time.Now()
		l.res.samples = append(l.res.samples, sample{lat: now.Sub(due)})
		if l.next != nil {
			l.next(now)
		}
		return
	}
	c.due, c.busy = due, true
	l.inflight++
	if c.connecting {
		c.sendPending = true
		c.deadline = time.Now().Add(l.timeout)
		return
	}
	l.write(c)
}

func (l *evLoop) write(c *evConn) {
	c.sendPending = false
	c.wrote = time.Now()
	c.deadline = c.wrote.Add(l.timeout)
	if n, err := syscall.Write(c.fd, l.req); err != nil || n != len(l.req) {
		// A request is a few hundred bytes into an idle socket: a short
		// write or EAGAIN means the connection is not usable.
		l.finish(c, 0, false, time.Now())
	}
}

// finish records c's request (status 0: failed) and keeps or drops c.
func (l *evLoop) finish(c *evConn, status int, keep bool, now time.Time) {
	s := sample{lat: now.Sub(c.due), status: status}
	if !c.wrote.IsZero() && !c.wrote.Before(c.due) {
		s.lag = c.wrote.Sub(c.due)
	}
	l.res.samples = append(l.res.samples, s)
	c.busy, c.wrote = false, time.Time{}
	c.buf = c.buf[:0]
	l.inflight--
	if keep {
		l.idle = append(l.idle, c)
	} else {
		l.drop(c)
	}
	if l.next != nil {
		l.next(now)
	}
}

// drop closes c (an idle one is taken off the idle list).
func (l *evLoop) drop(c *evConn) {
	for i, x := range l.idle {
		if x == c {
			l.idle = append(l.idle[:i], l.idle[i+1:]...)
			break
		}
	}
	delete(l.byFD, c.fd)
	syscall.Close(c.fd)
}

// ready handles what epoll reported for c.
func (l *evLoop) ready(c *evConn, events uint32) {
	if c.connecting {
		if events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		if e, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || e != 0 {
			l.fail(c)
			return
		}
		c.connecting = false
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
			l.fail(c)
			return
		}
		if c.sendPending {
			l.write(c)
		}
		return
	}
	closed := false
	for {
		n, err := syscall.Read(c.fd, l.scratch)
		if n > 0 {
			c.buf = append(c.buf, l.scratch[:n]...)
			if n < len(l.scratch) {
				break
			}
			continue
		}
		if err == syscall.EINTR {
			continue
		}
		if err == nil || !errors.Is(err, syscall.EAGAIN) {
			closed = true // EOF, or a reset
		}
		break
	}
	if !c.busy {
		if closed || len(c.buf) > 0 {
			l.drop(c) // the server closed an idle connection (or spoke unasked)
		}
		return
	}
	status, keep, used, err := parseAnswer(c.buf, closed)
	switch {
	case errors.Is(err, errIncomplete):
		return
	case err != nil:
		l.fail(c)
	default:
		l.finish(c, status, keep && !closed && used == len(c.buf), time.Now())
	}
}

// fail ends c's request without an answer and drops c.
func (l *evLoop) fail(c *evConn) {
	if c.busy {
		l.finish(c, 0, false, time.Now())
		return
	}
	l.drop(c)
}

// expire fails the requests whose deadline has passed.
func (l *evLoop) expire(now time.Time) {
	for _, c := range l.byFD {
		if c.busy && now.After(c.deadline) {
			l.fail(c)
		}
	}
}

// poll waits at most d for events and handles them.
func (l *evLoop) poll(d time.Duration) error {
	n, err := l.wait(max(d, 0))
	if err != nil {
		if errors.Is(err, syscall.EINTR) {
			return nil
		}
		return fmt.Errorf("loadbench: epoll wait: %w", err)
	}
	for _, ev := range l.events[:n] {
		if c := l.byFD[int(ev.Fd)]; c != nil {
			l.ready(c, ev.Events)
		}
	}
	return nil
}

// sysEpollPwait2 is epoll_pwait2's number, the same on every architecture
// (it came after their tables were unified); Go's syscall package lacks it.
const sysEpollPwait2 = 441

// wait is epoll_pwait2 with d's nanoseconds, or epoll_wait with d rounded
// up to a millisecond where the kernel lacks the former (before 5.11).
func (l *evLoop) wait(d time.Duration) (int, error) {
	if l.pwait2 {
		ts := syscall.NsecToTimespec(int64(d))
		n, _, e := syscall.Syscall6(sysEpollPwait2, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])),
			uintptr(len(l.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e == 0 {
			return int(n), nil
		}
		if e != syscall.ENOSYS {
			return 0, e
		}
		l.pwait2 = false
	}
	ms := int((d + time.Millisecond - 1) / time.Millisecond)
	return syscall.EpollWait(l.ep, l.events, ms)
}

// expireEvery is how often a loop looks for requests past their deadline.
const expireEvery = 5 * time.Millisecond

func (e epollLoops) closed(ctx context.Context, base string, t target, conns int, d time.Duration) *result {
	l, err := newEvLoop(base, t, e.timeout)
	if err != nil {
		return &result{}
	}
	defer l.close()
	start := time.Now()
	end := start.Add(d)
	want := conns // requests to send: one per connection whose last has finished
	l.next = func(time.Time) { want++ }
	lastExpire := start
	for ctx.Err() == nil {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		for k := want; k > 0; k-- {
			want--
			l.send(time.Now())
		}
		if now.Sub(lastExpire) >= expireEvery {
			l.expire(now)
			lastExpire = now
		}
		if err := l.poll(min(end.Sub(now), expireEvery)); err != nil {
			break
		}
	}
	// Requests still in flight at the end are cut off, not failures.
	l.res.elapsed = time.Since(start)
	return l.res
}

func (e epollLoops) open(ctx context.Context, base string, t target, rate float64, d time.Duration, maxOutstanding int) *result {
	l, err := newEvLoop(base, t, e.timeout)
	if err != nil {
		return &result{offered: rate}
	}
	defer l.close()
	l.res.offered = rate
	n := int(rate * d.Seconds())
	l.res.samples = make([]sample, 0, n)
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	i, lastExpire := 0, start
	for ctx.Err() == nil {
		now := time.Now()
		for ; i < n; i++ {
			due := start.Add(time.Duration(i) * interval)
			if due.After(now) {
				break
			}
			if l.inflight >= maxOutstanding {
				l.res.late++
				continue
			}
			l.send(due)
		}
		if i == n && l.inflight == 0 {
			break
		}
		if now.Sub(lastExpire) >= expireEvery {
			l.expire(now)
			lastExpire = now
		}
		wait := expireEvery
		if i < n {
			wait = min(wait, start.Add(time.Duration(i)*interval).Sub(now))
		}
		if err := l.poll(wait); err != nil {
			break
		}
	}
	l.res.elapsed = time.Since(start)
	return l.res
}
