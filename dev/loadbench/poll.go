//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// The loops' requests go through a poller: one goroutine that owns every
// connection of a pass as a non-blocking socket and waits on them all with
// one epoll call. Why not a goroutine per connection over net.Conn: the
// generator shares the server's two cores, and each of its requests then
// cost a goroutine park and wake-up, a read that fails with EAGAIN before
// the netpoller's, and a futex to hand the wake-up between threads (pprof
// of the standings overload pass: 57% system calls, 12% futex, the rest
// mostly the scheduler; 16-17 us of CPU a request, docs/BENCHMARKS.md
// section 12). Here a request is one write, one read (or a few, for a
// large page) and a share of one epoll wait.

// sysEpollPwait2 is epoll_pwait2's number, the same on amd64 and arm64
// (Linux 5.11): epoll_wait's millisecond timeout is too coarse to pace an
// open loop whose requests are tens of microseconds apart.
const sysEpollPwait2 = 441

// maxHead bounds an answer's status line and headers.
const maxHead = 64 << 10

type pconn struct {
	fd    int
	buf   []byte    // the answer read so far
	busy  bool      // a request is in flight
	due   time.Time // when the request in flight was due (the open loop) or written
	wrote time.Time // when it was handed to the kernel
}

// poller is one pass's connections to one server and the request it sends
// on them. end is called once per request with its connection, status (0:
// it failed without one) and the time it ended.
type poller struct {
	epfd    int
	sa      syscall.Sockaddr
	family  int
	req     []byte
	timeout time.Duration
	conns   map[int]*pconn
	idle    []*pconn
	busy    int
	events  []syscall.EpollEvent
	rbuf    []byte
	noPwait bool
	end     func(c *pconn, status int, now time.Time)
	checked time.Time // when timeouts were last looked for
}

func newPoller(base string, t target, timeout time.Duration, end func(*pconn, int, time.Time)) (*poller, error) {
	host, ok := strings.CutPrefix(base, "http://")
	if !ok {
		return nil, fmt.Errorf("loadbench: %q is not an http:// address", base)
	}
	addr, err := net.ResolveTCPAddr("tcp", host)
	if err != nil {
		return nil, fmt.Errorf("loadbench: resolving %s: %w", host, err)
	}
	p := &poller{req: t.request(host), timeout: timeout, conns: map[int]*pconn{}, end: end,
		events: make([]syscall.EpollEvent, 256), rbuf: make([]byte, 64<<10)}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		p.sa, p.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To16())
		p.sa, p.family = sa, syscall.AF_INET6
	}
	if p.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("loadbench: creating an epoll instance: %w", err)
	}
	return p, nil
}

// close closes every connection and the epoll instance.
func (p *poller) close() {
	for fd := range p.conns {
		syscall.Close(fd)
	}
	p.conns, p.idle = nil, nil
	syscall.Close(p.epfd)
}

// conn is an idle connection, or a new one.
func (p *poller) conn() (*pconn, error) {
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c, nil
	}
	// A blocking connect (to this machine's loopback it completes at
	// once), then non-blocking for the requests.
	fd, err := syscall.Socket(p.family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("loadbench: opening a socket: %w", err)
	}
	if err := syscall.Connect(fd, p.sa); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("loadbench: connecting: %w", err)
	}
	// As net.Dial does: a request is one small write, sent at once.
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("loadbench: a non-blocking socket: %w", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("loadbench: watching a socket: %w", err)
	}
	c := &pconn{fd: fd}
	p.conns[fd] = c
	return c, nil
}

// send writes the request on an idle or new connection; due is when it
// was due. A request that cannot be written ends at once, with status 0.
func (p *poller) send(due time.Time) {
	c, err := p.conn()
	now := time.Now()
	if err != nil {
		p.end(&pconn{fd: -1, due: due}, 0, now)
		return
	}
	c.busy, c.due, c.wrote, c.buf = true, due, now, c.buf[:0]
	p.busy++
	// The socket's send buffer is empty (the previous answer has been read
	// whole), so a request of a few hundred bytes is written in one call.
	if n, err := syscall.Write(c.fd, p.req); err != nil || n != len(p.req) {
		p.fail(c, now)
	}
}

// finish ends c's request with status; keep says whether c can carry
// another.
func (p *poller) finish(c *pconn, status int, keep bool, now time.Time) {
	c.busy = false
	p.busy--
	if keep {
		p.idle = append(p.idle, c)
	} else {
		p.drop(c)
	}
	p.end(c, status, now)
}

func (p *poller) fail(c *pconn, now time.Time) { p.finish(c, 0, false, now) }

// drop closes c (closing also takes it out of the epoll set).
func (p *poller) drop(c *pconn) {
	delete(p.conns, c.fd)
	syscall.Close(c.fd)
}

// wait waits for answers until deadline at the latest, and ends every
// request that was answered, failed or timed out meanwhile.
func (p *poller) wait(deadline time.Time) error {
	d := time.Until(deadline)
	n, err := p.epollWait(max(d, 0))
	if err != nil && !errors.Is(err, syscall.EINTR) {
		return fmt.Errorf("loadbench: waiting on the connections: %w", err)
	}
	now := time.Now()
	for _, ev := range p.events[:max(n, 0)] {
		if c := p.conns[int(ev.Fd)]; c != nil {
			p.readable(c, now)
		}
	}
	if now.Sub(p.checked) >= 10*time.Millisecond {
		p.checked = now
		for _, c := range p.conns {
			if c.busy && now.Sub(c.wrote) > p.timeout {
				p.fail(c, now)
			}
		}
	}
	return nil
}

// sleepThenPoll sleeps until wake without waking for answers, then ends
// every request answered meanwhile (one wait that does not block): the
// open loop's batched form (openLoop's tick).
func (p *poller) sleepThenPoll(wake time.Time) error {
	if d := time.Until(wake); d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		for {
			err := syscall.Nanosleep(&ts, &ts)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	return p.wait(time.Time{})
}

func (p *poller) epollWait(d time.Duration) (int, error) {
	if !p.noPwait {
		ts := syscall.NsecToTimespec(int64(d))
		r, _, e := syscall.Syscall6(sysEpollPwait2, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])),
			uintptr(len(p.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e != syscall.ENOSYS {
			if e != 0 {
				return 0, e
			}
			return int(r), nil
		}
		p.noPwait = true
	}
	ms := int((d + time.Millisecond - 1) / time.Millisecond)
	return syscall.EpollWait(p.epfd, p.events, ms)
}

// readable reads what c has and ends its request once the answer is whole.
func (p *poller) readable(c *pconn, now time.Time) {
	n, err := syscall.Read(c.fd, p.rbuf)
	if errors.Is(err, syscall.EAGAIN) {
		return
	}
	if !c.busy {
		// An idle connection the server closed (or wrote to unasked).
		p.drop(c)
		for i, k := range p.idle {
			if k == c {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				break
			}
		}
		return
	}
	if err != nil || n == 0 {
		// The end of the connection ends an answer that runs to it.
		if st, _, _, eofBody, perr := parseAnswer(c.buf); err == nil && perr == nil && eofBody {
			p.finish(c, st, false, now)
			return
		}
		p.fail(c, now)
		return
	}
	c.buf = append(c.buf, p.rbuf[:n]...)
	st, keep, used, eofBody, perr := parseAnswer(c.buf)
	switch {
	case perr != nil:
		p.fail(c, now)
	case used == 0 || eofBody:
		// not whole yet
	case used != len(c.buf):
		p.fail(c, now) // more than one answer to one request
	default:
		p.finish(c, st, keep, now)
	}
}

// parseAnswer reads one HTTP/1.1 response from the start of b. used is its
// length once it is whole (0: not yet); eofBody says it has no length, so
// its body runs to the end of the connection; keep says whether the
// connection can carry another request.
func parseAnswer(b []byte) (status int, keep bool, used int, eofBody bool, err error) {
	i := bytes.Index(b, []byte("\r\n\r\n"))
	if i < 0 {
		if len(b) > maxHead {
			return 0, false, 0, false, fmt.Errorf("loadbench: no end of headers in %d bytes", len(b))
		}
		return 0, false, 0, false, nil
	}
	lines := strings.Split(string(b[:i]), "\r\n")
	// "HTTP/1.1 200 OK"
	line := lines[0]
	if len(line) < 12 || !strings.HasPrefix(line, "HTTP/1.") || line[8] != ' ' {
		return 0, false, 0, false, fmt.Errorf("loadbench: bad status line %q", line)
	}
	if status, err = strconv.Atoi(line[9:12]); err != nil {
		return 0, false, 0, false, fmt.Errorf("loadbench: bad status line %q", line)
	}
	length, chunked := -1, false
	keep = true
	for _, h := range lines[1:] {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return 0, false, 0, false, fmt.Errorf("loadbench: bad header line %q", h)
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Content-Length"):
			if length, err = strconv.Atoi(value); err != nil || length < 0 {
				return 0, false, 0, false, fmt.Errorf("loadbench: bad Content-Length %q", value)
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			chunked = strings.EqualFold(value, "chunked")
		case strings.EqualFold(name, "Connection"):
			keep = !strings.EqualFold(value, "close")
		}
	}
	body := i + 4
	switch {
	case chunked:
		n, err := chunkedLen(b[body:])
		if err != nil || n == 0 {
			return 0, false, 0, false, err
		}
		return status, keep, body + n, false, nil
	case length >= 0:
		if len(b) < body+length {
			return 0, false, 0, false, nil
		}
		return status, keep, body + length, false, nil
	default:
		return status, false, 0, true, nil
	}
}

// chunkedLen is the length of the chunked body (trailers included) at the
// start of b, or 0 while it is not whole.
func chunkedLen(b []byte) (int, error) {
	pos := 0
	for {
		j := bytes.Index(b[pos:], []byte("\r\n"))
		if j < 0 {
			return 0, nil
		}
		size, _, _ := strings.Cut(string(b[pos:pos+j]), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("loadbench: bad chunk size %q", b[pos:pos+j])
		}
		pos += j + 2
		if n == 0 {
			break
		}
		if len(b) < pos+int(n)+2 {
			return 0, nil
		}
		if string(b[pos+int(n):pos+int(n)+2]) != "\r\n" {
			return 0, fmt.Errorf("loadbench: chunk not followed by CRLF")
		}
		pos += int(n) + 2
	}
	for { // trailers, then the blank line
		j := bytes.Index(b[pos:], []byte("\r\n"))
		if j < 0 {
			return 0, nil
		}
		pos += j + 2
		if j == 0 {
			return pos, nil
		}
	}
}
