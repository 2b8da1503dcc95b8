// Package notify sends pitchtank's events out: to webhooks an admin
// configured (a JSON body signed with HMAC-SHA256 under the hook's secret,
// retried with exponential backoff, every attempt written to a delivery log)
// and, when configured, by e-mail over SMTP.
//
// Publish never blocks the caller (a run's worker, a request): each
// delivery runs in its own goroutine, and Close waits for them (or gives
// up on their retries when its context ends).
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Event types a hook may subscribe to.
const (
	EventRunFinished  = "run.finished"     // a run finished with a result (succeeded, incorrect, suspect; imports too)
	EventRunFailed    = "run.failed"       // a run failed or was cancelled
	EventRegression   = "regression.found" // a finished run crossed a regression threshold
	EventRoundStatus  = "round.status"     // a round moved to judging or closed
	EventPing         = "ping"             // an admin's test delivery; every hook receives it
	SignatureHeader   = "X-Pitchtank-Signature"
	EventHeader       = "X-Pitchtank-Event"
	DeliveryIDHeader  = "X-Pitchtank-Delivery"
	signaturePrefix   = "sha256="
	defaultAttempts   = 5
	defaultBackoff    = time.Second
	defaultMaxBackoff = 5 * time.Minute
)

// Events lists the event types a hook may subscribe to.
var Events = []string{EventRunFinished, EventRunFailed, EventRegression, EventRoundStatus}

// KnownEvent reports whether e is a subscribable event type.
func KnownEvent(e string) bool { return slices.Contains(Events, e) }

// Event is one thing that happened, as sent: the body of every delivery is
// this as JSON.
type Event struct {
	ID        string    `json:"id"` // "evt_" and 16 hex digits; the same for every hook and attempt
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      any       `json:"data"`
}

// Hook is an outgoing webhook: where to POST which events, and the secret
// the body is signed with. Secret never leaves the server.
type Hook struct {
	ID        int64     `json:"id"`
	URL       string    `json:"url"`
	Secret    string    `json:"-"`
	Events    []string  `json:"events"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"created_at"`
}

// Wants reports whether h receives events of type t.
func (h *Hook) Wants(t string) bool {
	return h.Active && (t == EventPing || slices.Contains(h.Events, t))
}

// Delivery is one attempt to deliver an event to a hook.
type Delivery struct {
	ID         int64     `json:"id"`
	HookID     int64     `json:"hook_id"`
	EventID    string    `json:"event_id"`
	Event      string    `json:"event"`
	Attempt    int       `json:"attempt"`              // 1 for the first try
	StatusCode int       `json:"status_code,omitzero"` // the receiver's answer; 0 when none came
	Error      string    `json:"error,omitempty"`      // why the attempt failed
	Delivered  bool      `json:"delivered"`            // a 2xx answer
	Final      bool      `json:"final"`                // no further attempt follows
	At         time.Time `json:"at"`
	DurationMs int64     `json:"duration_ms"`
}

// Store keeps the hooks and the delivery log (internal/sqlite).
type Store interface {
	// Webhooks lists every hook with its secret.
	Webhooks(ctx context.Context) ([]Hook, error)
	// RecordDelivery appends one attempt to the delivery log and returns
	// its id there (0 when it was not kept: its hook is gone).
	RecordDelivery(ctx context.Context, d Delivery) (int64, error)
}

// Config tunes a Notifier. Store is required; the rest have defaults.
type Config struct {
	Store  Store
	Client *http.Client // default: a client with a 10 s timeout
	// Attempts is the most deliveries tried per event and hook (default 5);
	// the wait before attempt n+1 is Backoff·2^(n-1), at most MaxBackoff
	// (defaults 1 s and 5 min).
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	Mail       *Mailer // nil: no e-mail
	Logger     *slog.Logger
	Now        func() time.Time
}

// Notifier delivers events. The zero value is not usable: call New.
type Notifier struct {
	cfg    Config
	log    *slog.Logger
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
}

// New returns a Notifier over cfg.Store.
func New(cfg Config) *Notifier {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = defaultAttempts
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = defaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = defaultMaxBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Notifier{cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel}
}

// NewEvent is an event of type t now, with a fresh id.
// A nil Notifier makes events too (that it will not send).
func (n *Notifier) NewEvent(t string, data any) Event {
	var b [8]byte
	_, _ = rand.Read(b[:])
	now := time.Now
	if n != nil {
		now = n.cfg.Now
	}
	return Event{ID: "evt_" + hex.EncodeToString(b[:]), Type: t, CreatedAt: now().UTC(), Data: data}
}

// Publish sends ev to every active hook that wants it, and by e-mail when
// configured, in the background. A nil Notifier publishes nothing.
func (n *Notifier) Publish(ev Event) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.deliverAll(ev)
	}()
}

// Send delivers ev to one hook now, with its retries, and returns the last
// attempt (an admin's test delivery waits for it). Attempts go to the log.
func (n *Notifier) Send(ctx context.Context, h Hook, ev Event) Delivery {
	body, err := json.Marshal(ev)
	if err != nil {
		return Delivery{HookID: h.ID, EventID: ev.ID, Event: ev.Type, Error: "encode event: " + err.Error(), Final: true}
	}
	var last Delivery
	for attempt := 1; attempt <= n.cfg.Attempts; attempt++ {
		last = n.attempt(ctx, h, ev, body, attempt)
		last.Final = last.Delivered || attempt == n.cfg.Attempts || ctx.Err() != nil
		n.record(ctx, &last)
		if last.Final {
			break
		}
		wait := n.backoff(attempt)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return last
		}
	}
	return last
}

// Try delivers ev to h once, without retries, and logs the attempt as
// final (an admin's test delivery).
func (n *Notifier) Try(ctx context.Context, h Hook, ev Event) Delivery {
	body, err := json.Marshal(ev)
	if err != nil {
		return Delivery{HookID: h.ID, EventID: ev.ID, Event: ev.Type, Error: "encode event: " + err.Error(), Final: true}
	}
	d := n.attempt(ctx, h, ev, body, 1)
	d.Final = true
	n.record(ctx, &d)
	return d
}

// record logs the attempt d and gives it its id in the log, so that the
// attempt an admin's test delivery answers is the one the log lists.
// A failure to log is the server's to see, not the caller's.
func (n *Notifier) record(ctx context.Context, d *Delivery) {
	id, err := n.cfg.Store.RecordDelivery(context.WithoutCancel(ctx), *d)
	if err != nil {
		n.log.Error("webhook: record delivery", slog.Int64("hook", d.HookID), slog.Any("err", err))
		return
	}
	d.ID = id
}

// backoff is the wait after failed attempt n (1-based).
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.cfg.Backoff
	for i := 1; i < attempt && d < n.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, n.cfg.MaxBackoff)
}

func (n *Notifier) deliverAll(ev Event) {
	hooks, err := n.cfg.Store.Webhooks(n.ctx)
	if err != nil {
		n.log.Error("webhook: list hooks", slog.Any("err", err))
		return
	}
	var wg sync.WaitGroup
	for _, h := range hooks {
		if !h.Wants(ev.Type) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.Send(n.ctx, h, ev)
		}()
	}
	if n.cfg.Mail != nil && ev.Type != EventPing {
		if err := n.cfg.Mail.Send(ev); err != nil {
			n.log.Error("notify: send mail", slog.String("event", ev.Type), slog.Any("err", err))
		}
	}
	wg.Wait()
}

// attempt makes one POST of body to h.
func (n *Notifier) attempt(ctx context.Context, h Hook, ev Event, body []byte, attempt int) Delivery {
	d := Delivery{HookID: h.ID, EventID: ev.ID, Event: ev.Type, Attempt: attempt, At: n.cfg.Now().UTC()}
	start := time.Now()
	defer func() { d.DurationMs = time.Since(start).Milliseconds() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		d.Error = "build request: " + err.Error()
		return d
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pitchtank-webhook/1")
	req.Header.Set(EventHeader, ev.Type)
	req.Header.Set(DeliveryIDHeader, ev.ID)
	req.Header.Set(SignatureHeader, Sign(h.Secret, body))
	res, err := n.cfg.Client.Do(req)
	if err != nil {
		d.Error = err.Error()
		d.DurationMs = time.Since(start).Milliseconds()
		return d
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	d.StatusCode = res.StatusCode
	d.Delivered = res.StatusCode >= 200 && res.StatusCode < 300
	if !d.Delivered {
		d.Error = fmt.Sprintf("receiver answered %s", res.Status)
	}
	d.DurationMs = time.Since(start).Milliseconds()
	return d
}

// Close stops taking events and waits for deliveries in flight; when ctx
// ends first, pending retries are given up (their last attempt is logged).
func (n *Notifier) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
		n.cancel()
		return nil
	case <-ctx.Done():
		n.cancel()
		<-done
		return errors.New("notify: close: deliveries given up: " + ctx.Err().Error())
	}
}

// Sign is the signature header's value for body under secret:
// "sha256=" and the hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return signaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header against body and secret in constant
// time: what a receiver does.
func Verify(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(header))
}
