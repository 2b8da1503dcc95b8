package notify

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memStore is the delivery log in memory (the sqlite store is tested with
// the server, internal/httpserver/webhooks_test.go).
type memStore struct {
	mu    sync.Mutex
	hooks []Hook
	log   []Delivery
}

func (m *memStore) Webhooks(context.Context) ([]Hook, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Hook(nil), m.hooks...), nil
}

func (m *memStore) RecordDelivery(_ context.Context, d Delivery) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d.ID = int64(len(m.log) + 1)
	m.log = append(m.log, d)
	return d.ID, nil
}

func (m *memStore) deliveries(hook int64) []Delivery {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Delivery
	for _, d := range m.log {
		if d.HookID == hook {
			out = append(out, d)
		}
	}
	return out
}

// receiver is a webhook endpoint that checks signatures with its secret
// and fails the first `fail` requests with 503.
type receiver struct {
	srv      *httptest.Server
	secret   string
	fail     int32
	calls    atomic.Int32
	mu       sync.Mutex
	accepted [][]byte
	times    []time.Time
	badSigs  int
}

func newReceiver(t *testing.T, secret string, fail int32) *receiver {
	r := &receiver{secret: secret, fail: fail}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.calls.Add(1)
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.times = append(r.times, time.Now())
		r.mu.Unlock()
		if !Verify(r.secret, body, req.Header.Get(SignatureHeader)) {
			r.mu.Lock()
			r.badSigs++
			r.mu.Unlock()
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if req.Header.Get(EventHeader) == "" || !strings.HasPrefix(req.Header.Get(DeliveryIDHeader), "evt_") {
			http.Error(w, "headers", http.StatusBadRequest)
			return
		}
		if n <= r.fail {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		r.accepted = append(r.accepted, body)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func TestSignVerify(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	sig := Sign("s3cret", body)
	// HMAC-SHA256 of the body under the key, computed independently:
	// printf '{"id":"evt_1"}' | openssl dgst -sha256 -hmac s3cret
	if want := "sha256=4d9ffeb08661a558de926d65a83f186637434f47fef8d47c45e376c749c1c651"; sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	if !Verify("s3cret", body, sig) {
		t.Error("own signature refused")
	}
	if Verify("other", body, sig) || Verify("s3cret", []byte(`{"id":"evt_2"}`), sig) || Verify("s3cret", body, strings.ToUpper(sig)) {
		t.Error("a wrong secret, body or header passed")
	}
}

// A receiver that fails twice gets the event on the third attempt, after
// waits that double; every attempt is in the log, the last one final and
// delivered; the body's signature checks out.
func TestDeliveryRetriesWithBackoff(t *testing.T) {
	rcv := newReceiver(t, "right-secret-0123", 2)
	st := &memStore{hooks: []Hook{{ID: 1, URL: rcv.srv.URL, Secret: "right-secret-0123", Events: []string{EventRunFinished}, Active: true}}}
	n := New(Config{Store: st, Backoff: 40 * time.Millisecond, Attempts: 5})
	n.Publish(n.NewEvent(EventRunFinished, map[string]any{"run": 7}))
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	log := st.deliveries(1)
	if len(log) != 3 {
		t.Fatalf("attempts logged: %+v", log)
	}
	for i, d := range log {
		if d.Attempt != i+1 || d.Event != EventRunFinished || !strings.HasPrefix(d.EventID, "evt_") {
			t.Errorf("attempt %d: %+v", i+1, d)
		}
	}
	if log[0].StatusCode != 503 || log[0].Delivered || log[0].Final || !strings.Contains(log[0].Error, "503") {
		t.Errorf("first attempt: %+v", log[0])
	}
	if !log[2].Delivered || !log[2].Final || log[2].StatusCode != 204 {
		t.Errorf("last attempt: %+v", log[2])
	}
	if len(rcv.accepted) != 1 || !strings.Contains(string(rcv.accepted[0]), `"type":"run.finished"`) || !strings.Contains(string(rcv.accepted[0]), `"run":7`) {
		t.Errorf("accepted bodies: %q", rcv.accepted)
	}
	gap1, gap2 := rcv.times[1].Sub(rcv.times[0]), rcv.times[2].Sub(rcv.times[1])
	if gap1 < 40*time.Millisecond || gap2 < 80*time.Millisecond {
		t.Errorf("backoff waits %v then %v, want at least 40ms then 80ms", gap1, gap2)
	}
}

// A hook whose secret the receiver does not share is refused every time:
// all attempts fail, the last is final; a hook not subscribed to the event,
// or inactive, gets nothing.
func TestDeliveryGivesUpAndFilters(t *testing.T) {
	rcv := newReceiver(t, "the-receivers-secret", 0)
	other := newReceiver(t, "x-secret-0123456789", 0)
	st := &memStore{hooks: []Hook{
		{ID: 1, URL: rcv.srv.URL, Secret: "a-different-secret", Events: []string{EventRegression}, Active: true},
		{ID: 2, URL: other.srv.URL, Secret: "x-secret-0123456789", Events: []string{EventRunFailed}, Active: true},
		{ID: 3, URL: other.srv.URL, Secret: "x-secret-0123456789", Events: []string{EventRegression}, Active: false},
	}}
	n := New(Config{Store: st, Backoff: time.Millisecond, Attempts: 3})
	n.Publish(n.NewEvent(EventRegression, map[string]any{"run": 9}))
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	log := st.deliveries(1)
	if len(log) != 3 || log[2].Delivered || !log[2].Final || log[2].StatusCode != 401 || rcv.badSigs != 3 {
		t.Errorf("wrong secret: %+v (bad signatures seen %d)", log, rcv.badSigs)
	}
	if other.calls.Load() != 0 || len(st.deliveries(2)) != 0 || len(st.deliveries(3)) != 0 {
		t.Errorf("unsubscribed or inactive hooks were called: %d", other.calls.Load())
	}
}

// An unreachable receiver: the error is logged per attempt; Close with an
// ended context gives up the retries.
func TestDeliveryUnreachableAndClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	st := &memStore{hooks: []Hook{{ID: 1, URL: "http://" + addr + "/hook", Secret: "s", Events: []string{EventRunFailed}, Active: true}}}
	n := New(Config{Store: st, Backoff: time.Hour, Attempts: 5})
	n.Publish(n.NewEvent(EventRunFailed, nil))
	deadline := time.Now().Add(5 * time.Second)
	for len(st.deliveries(1)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := n.Close(ctx); err == nil {
		t.Error("Close with a retry an hour away returned no error")
	}
	log := st.deliveries(1)
	if len(log) != 1 || log[0].Error == "" || log[0].StatusCode != 0 || log[0].Delivered {
		t.Errorf("log: %+v", log)
	}
	n.Publish(n.NewEvent(EventRunFailed, nil)) // after Close: dropped, no panic
}

func TestBackoffCaps(t *testing.T) {
	n := New(Config{Store: &memStore{}, Backoff: time.Second, MaxBackoff: 5 * time.Second})
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := n.backoff(i + 1); got != w {
			t.Errorf("backoff after attempt %d: %v, want %v", i+1, got, w)
		}
	}
}

// fakeSMTP accepts one message and hands it over.
func fakeSMTP(t *testing.T) (string, <-chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		say := func(s string) { _, _ = io.WriteString(c, s+"\r\n") }
		say("220 fake ESMTP")
		var data strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			cmd := strings.ToUpper(strings.TrimSpace(line))
			switch {
			case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
				say("250 fake")
			case strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"):
				data.WriteString(strings.TrimSpace(line) + "\n")
				say("250 ok")
			case cmd == "DATA":
				say("354 go on")
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if l == ".\r\n" {
						break
					}
					data.WriteString(l)
				}
				say("250 queued")
			case cmd == "QUIT":
				say("221 bye")
				got <- data.String()
				return
			default:
				say("250 ok")
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestMailOverSMTP(t *testing.T) {
	addr, got := fakeSMTP(t)
	m := &Mailer{Addr: addr, From: "pitchtank@example.org", To: []string{"team@example.org"}}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	n := New(Config{Store: &memStore{}, Mail: m})
	n.Publish(n.NewEvent(EventRegression, map[string]any{"run": 12, "shape": "g=8 N=4096 K=7168"}))
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-got:
		for _, want := range []string{"MAIL FROM:<pitchtank@example.org>", "RCPT TO:<team@example.org>", "Subject: [pitchtank] regression found", `"run": 12`} {
			if !strings.Contains(msg, want) {
				t.Errorf("mail lacks %q:\n%s", want, msg)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no mail reached the SMTP server")
	}
	for _, bad := range []*Mailer{{Addr: "nohost", From: "a@b", To: []string{"c@d"}}, {Addr: "h:25", From: "x", To: []string{"c@d"}},
		{Addr: "h:25", From: "a@b"}, {Addr: "h:25", From: "a@b", To: []string{"c@d\r\nBcc: e@f"}}} {
		if bad.Check() == nil {
			t.Errorf("config %+v passed", bad)
		}
	}
}
