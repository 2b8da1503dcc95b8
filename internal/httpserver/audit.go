package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
	"github.com/pitchtank/pitchtank/templates"
)

// The audit log (migration 150): every state change made through the app,
// with who, when, and the state before and after. Changes through
// pitches.Service are recorded by auditedService, which wraps the service
// the server is given when its store keeps an audit log (sqlite does); runs
// (queued, cancelled, re-queued, imported, accepted), webhooks and
// regression thresholds are recorded where the handlers make them. An entry
// is written after the change succeeded; a failure to write it is logged,
// never shown to the person whose change went through.

// auditStore is the store's audit log (sqlite implements it).
type auditStore interface {
	AppendAudit(ctx context.Context, e pitches.AuditEntry) error
	AuditLog(ctx context.Context, f pitches.AuditFilter) ([]pitches.AuditEntry, error)
}

// auditedService records the state changes made through a pitches.Service.
// Reads go straight to the wrapped service (embedded).
type auditedService struct {
	pitches.Service
	log   auditStore
	sys   *slog.Logger
	inner pitches.Service
	track *tracking.Tracker // told of round status changes; may be nil
}

// withAudit wraps svc when it keeps an audit log; otherwise svc is returned
// as it is.
func withAudit(svc pitches.Service, logger *slog.Logger, track *tracking.Tracker) pitches.Service {
	st, ok := svc.(auditStore)
	if !ok {
		return svc
	}
	return &auditedService{Service: svc, log: st, sys: logger, inner: svc, track: track}
}

// auditJSON is v as an audit document; nil stays nil.
func auditJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(strconv.Quote(fmt.Sprint(v)))
	}
	return b
}

// record appends an entry, actor by (or the request's user when by is nil).
func (a *auditedService) record(ctx context.Context, by *pitches.User, action, target string, before, after any) {
	appendAudit(ctx, a.log, a.sys, by, action, target, before, after)
}

func appendAudit(ctx context.Context, st auditStore, sys *slog.Logger, by *pitches.User, action, target string, before, after any) {
	if st == nil {
		return
	}
	if by == nil {
		by = userFrom(ctx)
	}
	e := pitches.AuditEntry{Action: action, Target: target, Before: auditJSON(before), After: auditJSON(after)}
	if by != nil {
		e.ActorID, e.Actor = by.ID, by.Login
	}
	// The change is made: the entry is written even if the request ends now.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := st.AppendAudit(wctx, e); err != nil && sys != nil {
		sys.Error("audit: append entry", slog.String("action", action), slog.String("target", target), slog.Any("err", err))
	}
}

// audit records a change made outside pitches.Service (runs, webhooks,
// thresholds) when the store keeps an audit log.
func (s *server) audit(ctx context.Context, by *pitches.User, action, target string, before, after any) {
	st, _ := s.svc.(auditStore)
	appendAudit(ctx, st, s.log, by, action, target, before, after)
}

func roundTarget(n int) string    { return "round " + strconv.Itoa(n) }
func pitchTarget(id int64) string { return "pitch " + strconv.FormatInt(id, 10) }
func userTarget(id int64) string  { return pitches.AuditUserTarget(id) }
func runTarget(id int64) string   { return "run " + strconv.FormatInt(id, 10) }

// auditRun is what the log keeps of a run: what was asked and where it
// stands, and the summary of its result.
func auditRun(r *runner.Run) any {
	if r == nil {
		return nil
	}
	m := map[string]any{"id": r.ID, "problem": r.Problem, "suite": r.Suite, "variant": r.Variant, "baseline": r.Baseline,
		"device": r.Device, "pitch_id": r.PitchID, "imported": r.Imported, "status": r.Status}
	if r.HasResult {
		m["speedup"] = r.Speedup
	}
	if r.Accepted() {
		m["accepted_by"], m["accept_reason"] = r.AcceptedBy, r.AcceptReason
	}
	return m
}

func (a *auditedService) CreateUser(ctx context.Context, login, displayName string, role pitches.Role, password string) (*pitches.User, error) {
	u, err := a.inner.CreateUser(ctx, login, displayName, role, password)
	if err == nil {
		a.record(ctx, nil, "user.create", userTarget(u.ID), nil, pitches.AuditUser(u))
	}
	return u, err
}

func (a *auditedService) SetUserRole(ctx context.Context, by *pitches.User, userID int64, role pitches.Role) error {
	before, _ := a.inner.UserByID(ctx, userID)
	err := a.inner.SetUserRole(ctx, by, userID, role)
	if err == nil {
		after, _ := a.inner.UserByID(ctx, userID)
		a.record(ctx, by, "user.role", userTarget(userID), pitches.AuditUser(before), pitches.AuditUser(after))
	}
	return err
}

func (a *auditedService) SetUserActive(ctx context.Context, by *pitches.User, userID int64, active bool) error {
	before, _ := a.inner.UserByID(ctx, userID)
	err := a.inner.SetUserActive(ctx, by, userID, active)
	if err == nil {
		after, _ := a.inner.UserByID(ctx, userID)
		a.record(ctx, by, "user.active", userTarget(userID), pitches.AuditUser(before), pitches.AuditUser(after))
	}
	return err
}

func (a *auditedService) ChangePassword(ctx context.Context, by *pitches.User, oldPassword, newPassword string) error {
	err := a.inner.ChangePassword(ctx, by, oldPassword, newPassword)
	if err == nil && by != nil {
		a.record(ctx, by, "user.password", userTarget(by.ID), nil, map[string]any{"changed": true})
	}
	return err
}

func (a *auditedService) CreateToken(ctx context.Context, userID int64, label string) (string, *pitches.Token, error) {
	secret, tok, err := a.inner.CreateToken(ctx, userID, label)
	if err == nil {
		a.record(ctx, nil, "token.create", userTarget(userID), nil, map[string]any{"id": tok.ID, "label": tok.Label})
	}
	return secret, tok, err
}

func (a *auditedService) RevokeToken(ctx context.Context, by *pitches.User, tokenID int64) error {
	err := a.inner.RevokeToken(ctx, by, tokenID)
	if err == nil {
		a.record(ctx, by, "token.revoke", "token "+strconv.FormatInt(tokenID, 10), map[string]any{"id": tokenID, "revoked": false},
			map[string]any{"id": tokenID, "revoked": true})
	}
	return err
}

func (a *auditedService) CreateRound(ctx context.Context, by *pitches.User, in pitches.RoundInput) (*pitches.Round, error) {
	r, err := a.inner.CreateRound(ctx, by, in)
	if err == nil {
		a.record(ctx, by, "round.create", roundTarget(r.Number), nil, r)
	}
	return r, err
}

func (a *auditedService) UpdateRound(ctx context.Context, by *pitches.User, number int, in pitches.RoundInput) (*pitches.Round, error) {
	before, _ := a.inner.Round(ctx, number)
	r, err := a.inner.UpdateRound(ctx, by, number, in)
	if err == nil {
		a.record(ctx, by, "round.rubric", roundTarget(number), before, r)
	}
	return r, err
}

func (a *auditedService) SetRoundStatus(ctx context.Context, by *pitches.User, number int, status pitches.RoundStatus) (*pitches.Round, error) {
	before, _ := a.inner.Round(ctx, number)
	r, err := a.inner.SetRoundStatus(ctx, by, number, status)
	if err == nil {
		var was pitches.RoundStatus
		if before != nil {
			was = before.Status
		}
		a.record(ctx, by, "round.status", roundTarget(number), map[string]any{"status": was}, map[string]any{"status": r.Status})
		a.track.RoundStatus(r, was)
	}
	return r, err
}

func (a *auditedService) SetPersonalWeights(ctx context.Context, by *pitches.User, round int, weights map[string]int) error {
	var before map[string]int
	if by != nil {
		before, _ = a.inner.PersonalWeights(ctx, by.ID, round)
	}
	err := a.inner.SetPersonalWeights(ctx, by, round, weights)
	if err == nil {
		a.record(ctx, by, "weights.set", roundTarget(round), nilIfEmpty(before), weights)
	}
	return err
}

func nilIfEmpty(m map[string]int) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func (a *auditedService) FilePitch(ctx context.Context, by *pitches.User, in pitches.PitchInput) (*pitches.Pitch, error) {
	p, err := a.inner.FilePitch(ctx, by, in)
	if err == nil {
		a.record(ctx, by, "pitch.file", pitchTarget(p.ID), nil, p)
	}
	return p, err
}

func (a *auditedService) EditPitch(ctx context.Context, by *pitches.User, id int64, in pitches.PitchInput) (*pitches.Pitch, error) {
	before, _ := a.inner.Pitch(ctx, id)
	p, err := a.inner.EditPitch(ctx, by, id, in)
	if err == nil {
		a.record(ctx, by, "pitch.edit", pitchTarget(id), before, p)
	}
	return p, err
}

func (a *auditedService) WithdrawPitch(ctx context.Context, by *pitches.User, id int64) (*pitches.Pitch, error) {
	before, _ := a.inner.Pitch(ctx, id)
	p, err := a.inner.WithdrawPitch(ctx, by, id)
	if err == nil {
		var was pitches.PitchStatus
		if before != nil {
			was = before.Status
		}
		a.record(ctx, by, "pitch.withdraw", pitchTarget(id), map[string]any{"status": was}, map[string]any{"status": p.Status})
	}
	return p, err
}

func (a *auditedService) SubmitScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput) (*pitches.Scorecard, error) {
	var before *pitches.Scorecard
	if by != nil {
		if h, err := a.inner.ScorecardHistory(ctx, by, pitchID, by.ID); err == nil && len(h) > 0 {
			before = &h[len(h)-1]
		}
	}
	c, err := a.inner.SubmitScorecard(ctx, by, pitchID, in)
	if err == nil {
		a.record(ctx, by, "scorecard.submit", pitchTarget(pitchID), before, c)
	}
	return c, err
}

func (a *auditedService) CastVote(ctx context.Context, by *pitches.User, round int, in pitches.VoteInput) (*pitches.Vote, error) {
	var before *pitches.Vote
	if by != nil {
		if h, err := a.inner.VoteHistory(ctx, by, round, by.ID); err == nil && len(h) > 0 {
			before = &h[len(h)-1]
		}
	}
	v, err := a.inner.CastVote(ctx, by, round, in)
	if err == nil {
		a.record(ctx, by, "vote.cast", roundTarget(round), before, v)
	}
	return v, err
}

func (a *auditedService) UploadKernel(ctx context.Context, by *pitches.User, pitchID int64, in pitches.KernelUpload) (*pitches.KernelVersion, error) {
	before, _ := a.inner.Pitch(ctx, pitchID)
	kv, err := a.inner.UploadKernel(ctx, by, pitchID, in)
	if err == nil {
		var was string
		if before != nil {
			was = before.Variant
		}
		after := map[string]any{"version": kv.Version, "hash": kv.Hash, "name": kv.Name, "kind": kv.Kind, "size": kv.Size, "note": kv.Note}
		if p, err := a.inner.Pitch(ctx, pitchID); err == nil {
			after["variant"] = p.Variant
		}
		a.record(ctx, by, "kernel.upload", pitchTarget(pitchID), map[string]any{"variant": was}, after)
	}
	return kv, err
}

// SetRoundBaseline and SetRoundMeasurement are the store's (baselineSetter),
// forwarded and recorded.
func (a *auditedService) SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error) {
	bs, ok := a.inner.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's baseline")
	}
	before, _ := a.inner.Round(ctx, number)
	r, err := bs.SetRoundBaseline(ctx, by, number, baseline)
	if err == nil {
		a.record(ctx, by, "round.baseline", roundTarget(number), roundMeasure(before), roundMeasure(r))
	}
	return r, err
}

func (a *auditedService) SetRoundMeasurement(ctx context.Context, by *pitches.User, number int, m pitches.RoundMeasurement, baseline string) (*pitches.Round, error) {
	bs, ok := a.inner.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's measurement")
	}
	before, _ := a.inner.Round(ctx, number)
	r, err := bs.SetRoundMeasurement(ctx, by, number, m, baseline)
	if err == nil {
		a.record(ctx, by, "round.measurement", roundTarget(number), roundMeasure(before), roundMeasure(r))
	}
	return r, err
}

func roundMeasure(r *pitches.Round) any {
	if r == nil {
		return nil
	}
	return map[string]any{"baseline": r.Baseline, "measurement": r.Measurement}
}

// Ping is the store's (healthz), forwarded.
func (a *auditedService) Ping(ctx context.Context) error {
	if p, ok := a.inner.(Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := a.inner.CurrentRound(ctx)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return nil
	}
	return err
}

func (a *auditedService) AppendAudit(ctx context.Context, e pitches.AuditEntry) error {
	return a.log.AppendAudit(ctx, e)
}

func (a *auditedService) AuditLog(ctx context.Context, f pitches.AuditFilter) ([]pitches.AuditEntry, error) {
	return a.log.AuditLog(ctx, f)
}

// The admin's view of the log: GET /api/audit and /admin/audit.

// auditFilter reads the filters and paging from the query string; a
// malformed value is a 400 naming the parameter.
func (s *server) auditFilter(ctx context.Context, q url.Values) (pitches.AuditFilter, error) {
	f := pitches.AuditFilter{Action: strings.TrimSpace(q.Get("action")), Target: strings.TrimSpace(q.Get("target")), Limit: 50}
	for _, p := range []struct {
		key string
		dst *int64
	}{{"before", &f.BeforeID}, {"actor_id", &f.ActorID}} {
		if v := strings.TrimSpace(q.Get(p.key)); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return f, pitches.Errorf(pitches.EBADREQUEST, p.key, "%s must be a positive integer", p.key)
			}
			*p.dst = n
		}
	}
	if v := strings.TrimSpace(q.Get("limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return f, pitches.Errorf(pitches.EBADREQUEST, "limit", "limit must be between 1 and 500")
		}
		f.Limit = n
	}
	if login := strings.TrimSpace(q.Get("actor")); login != "" {
		users, err := s.svc.Users(ctx)
		if err != nil {
			return f, err
		}
		f.ActorID = -1 // nobody, unless the login exists
		for _, u := range users {
			if strings.EqualFold(u.Login, login) {
				f.ActorID = u.ID
			}
		}
	}
	return f, nil
}

// auditPage is one page of the log with the cursor of the next.
type auditPage struct {
	Entries    []pitches.AuditEntry `json:"entries"`
	NextBefore int64                `json:"next_before,omitzero"` // pass as before= for the next page; absent on the last
}

func (s *server) auditEntries(ctx context.Context, u *pitches.User, q url.Values) (*auditPage, pitches.AuditFilter, error) {
	if pitches.CanRole(u, pitches.ActReadAudit) != nil {
		return nil, pitches.AuditFilter{}, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins may read the audit log")
	}
	st, ok := s.svc.(auditStore)
	if !ok {
		return nil, pitches.AuditFilter{}, pitches.Errorf(pitches.ECONFLICT, "", "this server keeps no audit log")
	}
	f, err := s.auditFilter(ctx, q)
	if err != nil {
		return nil, f, err
	}
	out := &auditPage{Entries: []pitches.AuditEntry{}}
	if f.ActorID == -1 {
		return out, f, nil
	}
	// One more than asked says whether there is a next page.
	want := f.Limit
	f.Limit++
	entries, err := st.AuditLog(ctx, f)
	f.Limit = want
	if err != nil {
		return nil, f, err
	}
	if len(entries) > want {
		entries = entries[:want]
		out.NextBefore = entries[want-1].ID
	}
	out.Entries = append(out.Entries, entries...)
	return out, f, nil
}

func (s *server) handleAPIAudit(w http.ResponseWriter, r *http.Request) {
	page, _, err := s.auditEntries(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *server) handleAdminAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _, err := s.auditEntries(r.Context(), userFrom(r.Context()), q)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := templates.AuditView{Action: q.Get("action"), Actor: q.Get("actor"), Target: q.Get("target")}
	for _, e := range page.Entries {
		v.Entries = append(v.Entries, templates.AuditRow{ID: e.ID, At: e.At.UTC().Format("2006-01-02 15:04:05"), Actor: e.Actor,
			Action: e.Action, Target: e.Target, Before: string(e.Before), After: string(e.After)})
	}
	if page.NextBefore != 0 {
		next := url.Values{}
		for _, k := range []string{"action", "actor", "target", "limit"} {
			if val := q.Get(k); val != "" {
				next.Set(k, val)
			}
		}
		next.Set("before", strconv.FormatInt(page.NextBefore, 10))
		v.NextPage = "/admin/audit?" + next.Encode()
	}
	s.render(w, r, http.StatusOK, templates.AdminAuditPage(s.chrome(r, "Audit log", "admin"), v))
}

// auditRunAs records a run change (action) by u once it succeeded, with the
// run before (nil for a new run) and after: wrap the runner call's results,
// s.auditRunAs(ctx, u, "run.cancel", before)(s.runs.Get(ctx, id)).
func (s *server) auditRunAs(ctx context.Context, u *pitches.User, action string, before *runner.Run) func(*runner.Run, error) (*runner.Run, error) {
	return func(after *runner.Run, err error) (*runner.Run, error) {
		if err == nil && after != nil {
			var b any
			if before != nil {
				b = auditRun(before)
			}
			s.audit(ctx, u, action, runTarget(after.ID), b, auditRun(after))
		}
		return after, err
	}
}

// acceptRun is the runner's Accept (an admin accepts a suspect result),
// recorded.
func (s *server) acceptRun(ctx context.Context, id int64, u *pitches.User, reason string) (*runner.Run, error) {
	before, err := s.runs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.auditRunAs(ctx, u, "run.accept", before)(s.runs.Accept(ctx, id, u, reason))
}
