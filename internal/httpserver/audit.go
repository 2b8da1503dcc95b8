package httpserver

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/templates"
)

// The audit log (internal/audit): changes through pitches.Service are
// recorded by audit.Service, which New wraps around the service; runs
// (queued, cancelled, re-queued, imported, accepted), webhooks and
// regression thresholds are recorded here, where the handlers make them;
// and the admin's view of the log is here.

// audit records a change made outside pitches.Service (runs, webhooks,
// thresholds) when the store keeps an audit log (internal/audit).
func (s *server) audit(ctx context.Context, by *pitches.User, action, target string, before, after any) {
	st, _ := s.svc.(audit.Store)
	if by == nil {
		by = userFrom(ctx)
	}
	audit.Append(ctx, st, s.log, by, action, target, before, after)
}

func runTarget(id int64) string { return "run " + strconv.FormatInt(id, 10) }

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
	st, ok := s.svc.(audit.Store)
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
	// The runner checks the role; the round's state is the web layer's to
	// supply (pitches.ActAcceptRun: not once the pitch's round is closed).
	if before.PitchID != 0 {
		_, round, err := s.pitchAndRound(ctx, before.PitchID)
		if err != nil && pitches.ErrorCode(err) != pitches.EINVALID { // a deleted pitch has no round to protect
			return nil, err
		}
		if err := pitches.Can(u, pitches.ActAcceptRun, pitches.Target{Round: round}); err != nil {
			return nil, err
		}
	}
	return s.auditRunAs(ctx, u, "run.accept", before)(s.runs.Accept(ctx, id, u, reason))
}
