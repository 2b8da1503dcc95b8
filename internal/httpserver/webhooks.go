package httpserver

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/tracking"
	"github.com/pitchtank/pitchtank/templates"
)

// Outgoing webhooks, configured by admins (/api/webhooks, /admin/webhooks),
// and the delivery log. Sending is internal/notify's; the store is
// sqlite's.

// trackStore is what the tracking pages need from the store (sqlite
// implements it).
type trackStore interface {
	Webhooks(ctx context.Context) ([]notify.Hook, error)
	Webhook(ctx context.Context, id int64) (*notify.Hook, error)
	SaveWebhook(ctx context.Context, h notify.Hook, by int64) (*notify.Hook, error)
	DeleteWebhook(ctx context.Context, id int64) error
	Deliveries(ctx context.Context, hookID, before int64, limit int) ([]notify.Delivery, error)
	Thresholds(ctx context.Context) ([]tracking.Threshold, error)
	Threshold(ctx context.Context, id int64) (*tracking.Threshold, error)
	AddThreshold(ctx context.Context, t tracking.Threshold) (*tracking.Threshold, error)
	DeleteThreshold(ctx context.Context, id int64) error
	Alerts(ctx context.Context, f tracking.AlertFilter) ([]tracking.Alert, error)
	DismissAlert(ctx context.Context, id, by int64, reason string) (before, after *tracking.Alert, err error)
	UndismissAlert(ctx context.Context, id int64) (before, after *tracking.Alert, err error)
	Provenances(ctx context.Context, ids []int64) (map[int64]tracking.Provenance, error)
}

// tracks is the store's tracking side, through the audit wrapper.
func (s *server) tracks() (trackStore, error) {
	svc := audit.Inner(s.svc)
	if st, ok := svc.(trackStore); ok {
		return st, nil
	}
	return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server keeps no webhooks, thresholds or run history")
}

// requireAdminAPI asks pitches whether u may manage webhooks and
// thresholds, and words a refusal with what was asked.
func requireAdminAPI(u *pitches.User, what string) error {
	if pitches.CanRole(u, pitches.ActManageAlerts) != nil {
		return pitches.Errorf(pitches.EFORBIDDEN, "", "only admins may %s", what)
	}
	return nil
}

// webhookInput is the body of POST and PUT /api/webhooks(/{id}) and the
// admin form's fields.
type webhookInput struct {
	URL    string   `json:"url"`
	Secret string   `json:"secret"`
	Events []string `json:"events"`
	Active *bool    `json:"active"`
}

// check validates in for a new hook (secret required) or an update of old
// (an empty secret keeps old's).
func (in webhookInput) check(old *notify.Hook) (notify.Hook, error) {
	h := notify.Hook{URL: strings.TrimSpace(in.URL), Secret: in.Secret, Active: true}
	if old != nil {
		h.ID, h.Active = old.ID, old.Active
		if h.Secret == "" {
			h.Secret = old.Secret
		}
	}
	if in.Active != nil {
		h.Active = *in.Active
	}
	u, err := url.Parse(h.URL)
	switch {
	case h.URL == "":
		return h, pitches.Errorf(pitches.EINVALID, "url", "a webhook needs its URL")
	case len(h.URL) > 2000:
		return h, pitches.Errorf(pitches.EINVALID, "url", "the URL is longer than 2000 characters")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return h, pitches.Errorf(pitches.EINVALID, "url", "the URL must be an absolute http:// or https:// address, not %q", h.URL)
	case u.User != nil:
		return h, pitches.Errorf(pitches.EINVALID, "url", "put no user or password in the URL: the body is signed with the secret")
	}
	switch {
	case len(h.Secret) < 16:
		return h, pitches.Errorf(pitches.EINVALID, "secret", "the secret must be at least 16 characters")
	case len(h.Secret) > 256:
		return h, pitches.Errorf(pitches.EINVALID, "secret", "the secret must be at most 256 characters")
	case strings.ContainsFunc(h.Secret, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return h, pitches.Errorf(pitches.EINVALID, "secret", "the secret must not contain control characters")
	}
	if len(in.Events) == 0 {
		return h, pitches.Errorf(pitches.EINVALID, "events", "pick at least one event: %s", strings.Join(notify.Events, ", "))
	}
	for i, e := range in.Events {
		if !notify.KnownEvent(e) {
			return h, pitches.Errorf(pitches.EINVALID, "events["+strconv.Itoa(i)+"]", "unknown event %q: events are %s", e, strings.Join(notify.Events, ", "))
		}
		if !slices.Contains(h.Events, e) {
			h.Events = append(h.Events, e)
		}
	}
	return h, nil
}

// auditHook is what the log keeps of a hook: never its secret.
func auditHook(h *notify.Hook) any {
	if h == nil {
		return nil
	}
	return map[string]any{"id": h.ID, "url": h.URL, "events": h.Events, "active": h.Active}
}

func (s *server) saveWebhook(ctx context.Context, u *pitches.User, id int64, in webhookInput) (*notify.Hook, error) {
	if err := requireAdminAPI(u, "configure webhooks"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	var old *notify.Hook
	if id != 0 {
		if old, err = st.Webhook(ctx, id); err != nil {
			return nil, err
		}
	}
	h, err := in.check(old)
	if err != nil {
		return nil, err
	}
	saved, err := st.SaveWebhook(ctx, h, u.ID)
	if err != nil {
		return nil, err
	}
	action := "webhook.create"
	if old != nil {
		action = "webhook.update"
	}
	s.audit(ctx, u, action, "webhook "+strconv.FormatInt(saved.ID, 10), auditHook(old), auditHook(saved))
	return saved, nil
}

func (s *server) deleteWebhook(ctx context.Context, u *pitches.User, id int64) error {
	if err := requireAdminAPI(u, "configure webhooks"); err != nil {
		return err
	}
	st, err := s.tracks()
	if err != nil {
		return err
	}
	old, err := st.Webhook(ctx, id)
	if err != nil {
		return err
	}
	if err := st.DeleteWebhook(ctx, id); err != nil {
		return err
	}
	s.audit(ctx, u, "webhook.delete", "webhook "+strconv.FormatInt(id, 10), auditHook(old), nil)
	return nil
}

// pingWebhook sends one ping event to hook id now and returns the attempt.
func (s *server) pingWebhook(ctx context.Context, u *pitches.User, id int64) (*notify.Delivery, error) {
	if err := requireAdminAPI(u, "test webhooks"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	h, err := st.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	n := s.cfg.Tracker.Notifier()
	if n == nil {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server sends no notifications")
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	d := n.Try(cctx, *h, n.NewEvent(notify.EventPing, map[string]any{"hook_id": h.ID, "by": u.Login}))
	return &d, nil
}

func (s *server) handleAPIWebhooks(w http.ResponseWriter, r *http.Request) {
	serveAdminList(s, w, r, "read webhooks", trackStore.Webhooks)
}

// serveAdminList answers an admin's GET of one of the tracking store's
// lists (webhooks, thresholds) as a JSON array: [] when it is empty, so
// clients never see null.
func serveAdminList[T any](s *server, w http.ResponseWriter, r *http.Request, what string, list func(trackStore, context.Context) ([]T, error)) {
	if err := requireAdminAPI(userFrom(r.Context()), what); err != nil {
		s.apiError(w, r, err)
		return
	}
	st, err := s.tracks()
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	items, err := list(st, r.Context())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, append([]T{}, items...))
}

func (s *server) handleAPICreateWebhook(w http.ResponseWriter, r *http.Request) {
	var in webhookInput
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	h, err := s.saveWebhook(r.Context(), userFrom(r.Context()), 0, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/webhooks/"+strconv.FormatInt(h.ID, 10))
	writeJSON(w, http.StatusCreated, h)
}

func (s *server) handleAPIUpdateWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var in webhookInput
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	h, err := s.saveWebhook(r.Context(), userFrom(r.Context()), id, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *server) handleAPIDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := s.deleteWebhook(r.Context(), userFrom(r.Context()), id); err != nil {
		s.apiError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleAPIPingWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	d, err := s.pingWebhook(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// deliveryPage is one page of a hook's delivery log.
type deliveryPage struct {
	Deliveries []notify.Delivery `json:"deliveries"`
	NextBefore int64             `json:"next_before,omitzero"`
}

func pageParams(q url.Values, def, most int) (before int64, limit int, err error) {
	limit = def
	if v := strings.TrimSpace(q.Get("before")); v != "" {
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 1 {
			return 0, 0, pitches.Errorf(pitches.EBADREQUEST, "before", "before must be a positive integer")
		}
	}
	if v := strings.TrimSpace(q.Get("limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > most {
			return 0, 0, pitches.Errorf(pitches.EBADREQUEST, "limit", "limit must be between 1 and %d", most)
		}
		limit = n
	}
	return before, limit, nil
}

func (s *server) deliveries(ctx context.Context, u *pitches.User, id int64, q url.Values) (*deliveryPage, error) {
	if err := requireAdminAPI(u, "read the delivery log"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	if _, err := st.Webhook(ctx, id); err != nil {
		return nil, err
	}
	before, limit, err := pageParams(q, 50, 500)
	if err != nil {
		return nil, err
	}
	ds, err := st.Deliveries(ctx, id, before, limit+1)
	if err != nil {
		return nil, err
	}
	out := &deliveryPage{Deliveries: []notify.Delivery{}}
	if len(ds) > limit {
		ds = ds[:limit]
		out.NextBefore = ds[limit-1].ID
	}
	out.Deliveries = append(out.Deliveries, ds...)
	return out, nil
}

func (s *server) handleAPIDeliveries(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	page, err := s.deliveries(r.Context(), userFrom(r.Context()), id, r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// The admin page.

func (s *server) webhooksView(ctx context.Context) (*templates.WebhooksView, error) {
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	hooks, err := st.Webhooks(ctx)
	if err != nil {
		return nil, err
	}
	v := &templates.WebhooksView{Events: notify.Events}
	for _, h := range hooks {
		row := templates.WebhookRow{ID: h.ID, URL: h.URL, Events: strings.Join(h.Events, ", "), Active: h.Active,
			Created: h.CreatedAt.UTC().Format("2006-01-02 15:04")}
		ds, err := st.Deliveries(ctx, h.ID, 0, 10)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			row.Deliveries = append(row.Deliveries, deliveryRow(d))
		}
		v.Hooks = append(v.Hooks, row)
	}
	return v, nil
}

func deliveryRow(d notify.Delivery) templates.DeliveryRow {
	out := templates.DeliveryRow{At: d.At.UTC().Format("2006-01-02 15:04:05"), Event: d.Event, EventID: d.EventID, Attempt: d.Attempt,
		Delivered: d.Delivered, Final: d.Final, Error: d.Error, Ms: d.DurationMs}
	if d.StatusCode != 0 {
		out.Status = strconv.Itoa(d.StatusCode)
	}
	return out
}

func (s *server) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, form templates.WebhookForm, note string) {
	v, err := s.webhooksView(r.Context())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Form, v.Note = form, note
	s.render(w, r, status, templates.AdminWebhooksPage(s.chrome(r, "Webhooks", "admin"), *v))
}

// trackingNotes are the messages the tracking pages' redirects may show.
var trackingNotes = map[string]string{
	"saved":       "Webhook saved.",
	"deleted":     "Webhook deleted.",
	"pinged":      "Ping delivered.",
	"ping-failed": "The ping was not delivered: see the delivery log.",
	"threshold":   "Threshold saved.",
	"unthreshold": "Threshold deleted.",
	"dismissed":   "Alert dismissed.",
	"undismissed": "Alert restored: it is active again.",
}

func (s *server) handleAdminWebhooks(w http.ResponseWriter, r *http.Request) {
	s.renderWebhooks(w, r, http.StatusOK, templates.WebhookForm{}, trackingNotes[r.URL.Query().Get("note")])
}

func (s *server) handleAdminCreateWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	in := webhookInput{URL: r.PostForm.Get("url"), Secret: r.PostForm.Get("secret"), Events: r.PostForm["events"]}
	if _, err := s.saveWebhook(r.Context(), userFrom(r.Context()), 0, in); err != nil {
		if code := pitches.ErrorCode(err); code == pitches.EFORBIDDEN || code == pitches.EUNAUTHORIZED {
			s.renderError(w, r, err)
			return
		}
		form := templates.WebhookForm{URL: in.URL, Events: in.Events, Err: s.formErr(r, err)}
		s.renderWebhooks(w, r, errorStatus(err), form, "")
		return
	}
	redirect(w, r, "/admin/webhooks?note=saved", "")
}

func (s *server) handleAdminDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.adminDelete(w, r, s.deleteWebhook, "/admin/webhooks?note=deleted")
}

// adminDelete serves an admin page's delete form for the item named by the
// path's {id}: del, then back to next; a refusal renders the error page.
func (s *server) adminDelete(w http.ResponseWriter, r *http.Request, del func(context.Context, *pitches.User, int64) error, next string) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	if err := del(r.Context(), userFrom(r.Context()), id); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, next, "")
}

func (s *server) handleAdminPingWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	d, err := s.pingWebhook(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	note := "pinged"
	if !d.Delivered {
		note = "ping-failed"
	}
	redirect(w, r, "/admin/webhooks?note="+note, "")
}
