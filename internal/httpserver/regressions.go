package httpserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
	"github.com/pitchtank/pitchtank/templates"
)

// Regression thresholds (every member reads them: GET /api/thresholds and
// /regressions; admins add and delete them: /api/thresholds,
// /admin/regressions) and the alerts they raised on finished runs (the run
// page, /regressions, GET /api/runs/{id}/regressions, GET /api/regressions),
// which admins dismiss and restore (tracking's lifecycle). Alerts quote a
// run's figures: a run whose result the viewer may not see shows none.

// thresholdInput is the body of POST /api/thresholds and the admin form.
type thresholdInput struct {
	Round       int     `json:"round"`
	Problem     string  `json:"problem"`
	Variant     string  `json:"variant"`
	Kind        string  `json:"kind"` // "percent" (the default) or "zscore"
	BaselineRun int64   `json:"baseline_run"`
	Percent     float64 `json:"percent"`
	Window      int     `json:"window"` // zscore: runs in the reference (default 20)
	Z           float64 `json:"z"`      // zscore: the boundary in standard deviations
}

func (s *server) addThreshold(ctx context.Context, u *pitches.User, in thresholdInput) (*tracking.Threshold, error) {
	if err := requireAdminAPI(u, "set regression thresholds"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	// Each field's own form first, so that a bad value is named even when
	// the combination is wrong too; checked before the spaces around it are
	// trimmed, so that a trailing control character is refused, not cut.
	if err := pitches.CheckLine("problem", in.Problem, pitches.MaxMeasurementChars); err != nil {
		return nil, err
	}
	if err := pitches.CheckLine("variant", in.Variant, pitches.MaxVariantChars); err != nil {
		return nil, err
	}
	t := tracking.Threshold{Round: in.Round, Problem: strings.TrimSpace(in.Problem), Variant: strings.TrimSpace(in.Variant),
		Kind: strings.TrimSpace(in.Kind), BaselineRun: in.BaselineRun, Percent: in.Percent, Window: in.Window, Z: in.Z, CreatedBy: u.ID}
	switch {
	case t.Round < 0:
		return nil, pitches.Errorf(pitches.EINVALID, "round", "round must be a positive round number")
	case t.Round > 0 && (t.Variant != "" || t.Problem != ""):
		return nil, pitches.Errorf(pitches.EINVALID, "variant", "a threshold is for a round or for a variant, not both")
	case t.Round == 0 && t.Variant == "":
		return nil, pitches.Errorf(pitches.EINVALID, "round", "give a round, or a problem and variant")
	case t.Round == 0 && t.Problem == "":
		return nil, pitches.Errorf(pitches.EINVALID, "problem", "a variant's threshold needs its problem")
	}
	if err := tracking.CheckKind(&t); err != nil {
		return nil, err
	}
	zscore := t.Kind == tracking.KindZScore
	switch {
	case zscore:
	case t.BaselineRun < 1:
		return nil, pitches.Errorf(pitches.EINVALID, "baseline_run", "baseline_run must be the id of a run with a result")
	case math.IsNaN(t.Percent) || !(t.Percent > 0 && t.Percent < 100):
		return nil, pitches.Errorf(pitches.EINVALID, "percent", "percent must be between 0 and 100 (exclusive), e.g. 5")
	}
	if s.runs == nil {
		return nil, errNoRunner
	}
	var base *runner.Run
	if !zscore {
		base, err = s.runs.Get(ctx, t.BaselineRun)
		if pitches.ErrorCode(err) == pitches.ENOTFOUND {
			return nil, pitches.Errorf(pitches.EINVALID, "baseline_run", "run %d does not exist", t.BaselineRun)
		}
		if err != nil {
			return nil, err
		}
	}
	var round *pitches.Round
	if t.Round > 0 {
		if round, err = s.svc.Round(ctx, t.Round); pitches.ErrorCode(err) == pitches.ENOTFOUND {
			return nil, pitches.Errorf(pitches.EINVALID, "round", "there is no round %d", t.Round)
		} else if err != nil {
			return nil, err
		}
	}
	if zscore {
		if err := tracking.CheckZScoreRound(round); err != nil {
			return nil, err
		}
	} else if err := tracking.CheckBaselineRun(t, base, round); err != nil {
		return nil, err
	}
	if t.Round == 0 {
		if err := s.checkThresholdVariant(ctx, t.Problem, t.Variant); err != nil {
			return nil, err
		}
		// Stored in the spelling runs of a built-in kernel are stored in,
		// so that another spelling of the same bound is a duplicate.
		t.Variant = runner.VariantSpelling(runner.KernelsCatalog{}, t.Problem, t.Variant)
	}
	if err := duplicateThreshold(ctx, st, t); err != nil {
		return nil, err
	}
	out, err := st.AddThreshold(ctx, t)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, u, "threshold.create", "threshold "+strconv.FormatInt(out.ID, 10), nil, out)
	return out, nil
}

// checkThresholdVariant checks a variant threshold's spec, which covers
// the runs of that variant (tracking: knob order ignored, a built-in
// kernel in any spelling): a variant spec in the form pitches
// and runs use (name[?knob=value&...], or kernel:<hash>[?knobs];
// pitches.ValidateVariant, at most pitches.MaxVariantChars), or else the
// variant of a run of the problem already stored: an imported run names a
// variant measured elsewhere in words of its own (runner's import check:
// one line of at most pitches.MaxVariantChars), and a threshold may cover
// it.
func (s *server) checkThresholdVariant(ctx context.Context, problem, variant string) error {
	verr := pitches.ValidateVariant("variant", variant)
	if verr == nil {
		return nil
	}
	runs, err := s.runs.List(ctx, runner.Filter{Problem: problem, Variant: variant, Limit: 1})
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		return nil
	}
	return pitches.Errorf(pitches.EINVALID, "variant", "%s (nor is it the variant of a stored run of %s)",
		pitches.ErrorMessage(verr), problem)
}

// duplicateThreshold refuses a threshold that another one already is
// (tracking.Threshold.SameAs) before anything is written. The store's
// unique index refuses the same with the same error when two creates race
// past this check.
func duplicateThreshold(ctx context.Context, st trackStore, t tracking.Threshold) error {
	ths, err := st.Thresholds(ctx)
	if err != nil {
		return err
	}
	for _, o := range ths {
		if o.SameAs(t) {
			return tracking.DuplicateError(o)
		}
	}
	return nil
}

func (s *server) deleteThreshold(ctx context.Context, u *pitches.User, id int64) error {
	if err := requireAdminAPI(u, "remove regression thresholds"); err != nil {
		return err
	}
	st, err := s.tracks()
	if err != nil {
		return err
	}
	old, err := st.Threshold(ctx, id)
	if err != nil {
		return err
	}
	if err := st.DeleteThreshold(ctx, id); err != nil {
		return err
	}
	s.audit(ctx, u, "threshold.delete", "threshold "+strconv.FormatInt(id, 10), old, nil)
	return nil
}

// handleAPIThresholds lists the thresholds to every member (the API needs
// a token): a bound is a scope, a percent and a baseline run's id, no
// figure of any run, and members who are warned by the alerts should know
// what raises them. Adding and deleting stay the admins'.
func (s *server) handleAPIThresholds(w http.ResponseWriter, r *http.Request) {
	st, err := s.tracks()
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ths, err := st.Thresholds(r.Context())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, append([]tracking.Threshold{}, ths...))
}

func (s *server) handleAPICreateThreshold(w http.ResponseWriter, r *http.Request) {
	var in thresholdInput
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	t, err := s.addThreshold(r.Context(), userFrom(r.Context()), in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/thresholds/"+strconv.FormatInt(t.ID, 10))
	writeJSON(w, http.StatusCreated, t)
}

func (s *server) handleAPIDeleteThreshold(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := s.deleteThreshold(r.Context(), userFrom(r.Context()), id); err != nil {
		s.apiError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// visibleAlerts leaves out alerts on runs whose results viewer may not see.
func (s *server) visibleAlerts(ctx context.Context, vis *visibility, as []tracking.Alert) ([]tracking.Alert, error) {
	out := []tracking.Alert{}
	for _, a := range as {
		run, err := s.runs.Get(ctx, a.RunID)
		if pitches.ErrorCode(err) == pitches.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		hidden, err := vis.resultHidden(ctx, run.PitchID)
		if err != nil {
			return nil, err
		}
		if !hidden {
			out = append(out, a)
		}
	}
	return out, nil
}

// runAlerts are run id's alerts for viewer; nil when the store keeps none.
func (s *server) runAlerts(ctx context.Context, viewer *pitches.User, id int64) ([]tracking.Alert, error) {
	st, err := s.tracks()
	if err != nil || s.runs == nil {
		return nil, nil
	}
	as, err := st.Alerts(ctx, tracking.AlertFilter{RunID: id, Limit: 100})
	if err != nil {
		return nil, err
	}
	return s.visibleAlerts(ctx, s.visibility(viewer), as)
}

func (s *server) handleAPIRunRegressions(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	run, err := s.loadRun(r.Context(), userFrom(r.Context()), id, false)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := map[string]any{"run_id": id, "regressions": []tracking.Alert{}}
	if run.ResultHidden {
		out["result_hidden"] = true
	} else {
		as, err := s.runAlerts(r.Context(), userFrom(r.Context()), id)
		if err != nil {
			s.apiError(w, r, err)
			return
		}
		if as != nil {
			out["regressions"] = as
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIRegressions lists recent alerts on every run the caller may
// see, in the state asked for (?state=active|dismissed|all, default all).
func (s *server) handleAPIRegressions(w http.ResponseWriter, r *http.Request) {
	st, err := s.tracks()
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if s.runs == nil {
		s.apiError(w, r, errNoRunner)
		return
	}
	before, limit, err := pageParams(r.URL.Query(), 50, 500)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	state, err := tracking.ParseAlertState(r.URL.Query().Get("state"))
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	as, err := st.Alerts(r.Context(), tracking.AlertFilter{State: state, Before: before, Limit: limit + 1})
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	next := int64(0)
	if len(as) > limit {
		as = as[:limit]
		next = as[limit-1].ID
	}
	vis, err := s.visibleAlerts(r.Context(), s.visibility(userFrom(r.Context())), as)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Regressions []tracking.Alert `json:"regressions"`
		NextBefore  int64            `json:"next_before,omitzero"`
	}{vis, next})
}

// alertRows are alerts as the pages show them, a dismissed one with who
// dismissed it, when and why.
func alertRows(as []tracking.Alert) []templates.AlertRow {
	var out []templates.AlertRow
	for _, a := range as {
		row := templates.AlertRow{ID: a.ID, RunID: a.RunID, BaselineRun: a.BaselineRun, Scope: a.Scope,
			Percent: strconv.FormatFloat(a.Percent, 'g', -1, 64), Summary: a.Summary, At: a.CreatedAt.UTC().Format("2006-01-02 15:04")}
		if a.Kind == tracking.KindZScore {
			row.Bound = fmt.Sprintf("z=%s over its last %d comparable runs", strconv.FormatFloat(a.Z, 'g', -1, 64), a.History)
		}
		if d := a.Dismissed; d != nil {
			who := d.ByLogin
			if who == "" {
				who = "a deleted user"
			}
			row.Dismissed = fmt.Sprintf("Dismissed by %s on %s: %s", who, d.At.UTC().Format("2006-01-02 15:04"), d.Reason)
		}
		out = append(out, row)
	}
	return out
}

// dismissInput is the body of POST /api/regressions/{id}/dismiss and the
// page's form.
type dismissInput struct {
	Reason string `json:"reason"`
}

// dismissAlert records u's dismissal of alert id with a written reason
// (tracking.CheckDismissReason) and audits it; only admins may
// (tracking's lifecycle says why not the run's requester).
func (s *server) dismissAlert(ctx context.Context, u *pitches.User, id int64, reason string) (*tracking.Alert, error) {
	if err := requireAdminAPI(u, "dismiss regression alerts"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	reason, err = tracking.CheckDismissReason(reason)
	if err != nil {
		return nil, err
	}
	before, after, err := st.DismissAlert(ctx, id, u.ID, reason)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, u, "alert.dismiss", alertTarget(id), before, after)
	return after, nil
}

// undismissAlert undoes alert id's dismissal (admins) and audits it: the
// log keeps the dismissal the alert no longer carries.
func (s *server) undismissAlert(ctx context.Context, u *pitches.User, id int64) (*tracking.Alert, error) {
	if err := requireAdminAPI(u, "restore dismissed regression alerts"); err != nil {
		return nil, err
	}
	st, err := s.tracks()
	if err != nil {
		return nil, err
	}
	before, after, err := st.UndismissAlert(ctx, id)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, u, "alert.undismiss", alertTarget(id), before, after)
	return after, nil
}

func alertTarget(id int64) string { return "alert " + strconv.FormatInt(id, 10) }

func (s *server) handleAPIDismissAlert(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var in dismissInput
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	a, err := s.dismissAlert(r.Context(), userFrom(r.Context()), id, in.Reason)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *server) handleAPIUndismissAlert(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	a, err := s.undismissAlert(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// The members' page: thresholds and the latest alerts for every logged-in
// user, read-only; admins get the dismiss and restore forms on it.

// thresholdRows are thresholds as the pages show them.
func thresholdRows(ths []tracking.Threshold) []templates.ThresholdRow {
	var out []templates.ThresholdRow
	for _, t := range ths {
		row := templates.ThresholdRow{ID: t.ID, Scope: t.Scope(), BaselineRun: t.BaselineRun,
			Percent: strconv.FormatFloat(t.Percent, 'g', -1, 64), Created: t.CreatedAt.UTC().Format("2006-01-02 15:04")}
		row.Bound = row.Percent + "%"
		if t.KindOrDefault() == tracking.KindZScore {
			row.Bound = fmt.Sprintf("z=%s over the last %d runs", strconv.FormatFloat(t.Z, 'g', -1, 64), t.Window)
		}
		out = append(out, row)
	}
	return out
}

// renderMemberRegressions renders /regressions for the viewer: the alerts
// on runs whose results the viewer may not see are left out
// (visibleAlerts, as GET /api/regressions does). failed is the alert whose
// dismiss form was refused with ferr, shown again with its reason.
func (s *server) renderMemberRegressions(w http.ResponseWriter, r *http.Request, status int, failed int64, reason string, ferr *templates.FormError) {
	ctx := r.Context()
	u := userFrom(ctx)
	st, err := s.tracks()
	if err == nil && s.runs == nil {
		err = errNoRunner
	}
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	state, err := tracking.ParseAlertState(r.URL.Query().Get("state"))
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	ths, err := st.Thresholds(ctx)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	as, err := st.Alerts(ctx, tracking.AlertFilter{State: state, Limit: 50})
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	as, err = s.visibleAlerts(ctx, s.visibility(u), as)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := templates.MemberRegressionsView{Thresholds: thresholdRows(ths), Alerts: alertRows(as), State: string(state),
		CanDismiss: pitches.CanRole(u, pitches.ActManageAlerts) == nil, Note: trackingNotes[r.URL.Query().Get("note")]}
	for i := range v.Alerts {
		if v.Alerts[i].ID == failed {
			v.Alerts[i].Err, v.Alerts[i].Reason = ferr, reason
		}
	}
	s.render(w, r, status, templates.RegressionsPage(s.chrome(r, "Regressions", "regressions"), v))
}

func (s *server) handleRegressionsPage(w http.ResponseWriter, r *http.Request) {
	s.renderMemberRegressions(w, r, http.StatusOK, 0, "", nil)
}

// alertFormDone ends a dismiss or restore post: back to the list with a
// note, or the refusal: a page of its own for whom the forms are not (403)
// and for an unknown alert (404), else the list again with the message at
// the alert's form.
func (s *server) alertFormDone(w http.ResponseWriter, r *http.Request, id int64, reason string, err error, note string) {
	if err == nil {
		redirect(w, r, "/regressions?note="+note, "")
		return
	}
	switch pitches.ErrorCode(err) {
	case pitches.EFORBIDDEN, pitches.EUNAUTHORIZED, pitches.ENOTFOUND:
		s.renderError(w, r, err)
		return
	}
	s.renderMemberRegressions(w, r, errorStatus(err), id, reason, s.formErr(r, err))
}

func (s *server) handleDismissAlert(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	reason := r.PostForm.Get("reason")
	_, err = s.dismissAlert(r.Context(), userFrom(r.Context()), id, reason)
	s.alertFormDone(w, r, id, reason, err, "dismissed")
}

func (s *server) handleUndismissAlert(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	_, err = s.undismissAlert(r.Context(), userFrom(r.Context()), id)
	s.alertFormDone(w, r, id, "", err, "undismissed")
}

// The admin page.

func (s *server) renderRegressions(w http.ResponseWriter, r *http.Request, status int, form templates.ThresholdForm, note string) {
	ctx := r.Context()
	st, err := s.tracks()
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	ths, err := st.Thresholds(ctx)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := templates.RegressionsView{Form: form, Note: note, Thresholds: thresholdRows(ths)}
	as, err := st.Alerts(ctx, tracking.AlertFilter{Limit: 50})
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Alerts = alertRows(as) // admins see every run's result
	s.render(w, r, status, templates.AdminRegressionsPage(s.chrome(r, "Regressions", "admin"), v))
}

func (s *server) handleAdminRegressions(w http.ResponseWriter, r *http.Request) {
	s.renderRegressions(w, r, http.StatusOK, templates.ThresholdForm{}, trackingNotes[r.URL.Query().Get("note")])
}

func (s *server) handleAdminCreateThreshold(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	f := templates.ThresholdForm{Round: r.PostForm.Get("round"), Problem: r.PostForm.Get("problem"), Variant: r.PostForm.Get("variant"),
		BaselineRun: r.PostForm.Get("baseline_run"), Percent: r.PostForm.Get("percent"),
		Kind: r.PostForm.Get("kind"), Window: r.PostForm.Get("window"), Z: r.PostForm.Get("z")}
	in := thresholdInput{Problem: f.Problem, Variant: f.Variant, Kind: f.Kind}
	var err error
	parse := func(field, v string, dst func(string) error) {
		if err == nil && strings.TrimSpace(v) != "" {
			if dst(strings.TrimSpace(v)) != nil {
				err = pitches.Errorf(pitches.EINVALID, field, "%s must be a number, not %q", field, v)
			}
		}
	}
	parse("round", f.Round, func(v string) (e error) { in.Round, e = strconv.Atoi(v); return })
	parse("baseline_run", f.BaselineRun, func(v string) (e error) { in.BaselineRun, e = strconv.ParseInt(v, 10, 64); return })
	parse("percent", f.Percent, func(v string) (e error) { in.Percent, e = strconv.ParseFloat(v, 64); return })
	parse("window", f.Window, func(v string) (e error) { in.Window, e = strconv.Atoi(v); return })
	parse("z", f.Z, func(v string) (e error) { in.Z, e = strconv.ParseFloat(v, 64); return })
	if err == nil {
		_, err = s.addThreshold(r.Context(), userFrom(r.Context()), in)
	}
	if err != nil {
		if code := pitches.ErrorCode(err); code == pitches.EFORBIDDEN || code == pitches.EUNAUTHORIZED {
			s.renderError(w, r, err)
			return
		}
		f.Err = s.formErr(r, err)
		s.renderRegressions(w, r, errorStatus(err), f, "")
		return
	}
	redirect(w, r, "/admin/regressions?note=threshold", "")
}

func (s *server) handleAdminDeleteThreshold(w http.ResponseWriter, r *http.Request) {
	s.adminDelete(w, r, s.deleteThreshold, "/admin/regressions?note=unthreshold")
}

// runTracking is what a run's JSON carries of tracking, for a viewer who
// may see its result.
type runTracking struct {
	Regressions []tracking.Alert     `json:"regressions,omitempty"`
	Provenance  *tracking.Provenance `json:"provenance,omitempty"`
}

// addRunTracking fills out's regressions and provenance (not for a hidden
// result; nothing where the store keeps none).
func (s *server) addRunTracking(ctx context.Context, viewer *pitches.User, out *runJSON) error {
	st, err := s.tracks()
	if err != nil || out.ResultHidden {
		return nil
	}
	as, err := st.Alerts(ctx, tracking.AlertFilter{RunID: out.ID, Limit: 100})
	if err != nil {
		return err
	}
	out.Regressions = as
	ps, err := st.Provenances(ctx, []int64{out.ID})
	if err != nil {
		return err
	}
	if p, ok := ps[out.ID]; ok {
		out.Provenance = &p
	}
	return nil
}

func runTrackingRows(rj *runJSON) templates.RunTracking {
	t := rj.runTracking
	v := templates.RunTracking{Alerts: alertRows(t.Regressions)}
	if rj.HasResult && !rj.ResultHidden {
		v.HistoryURL = historyURL(rj.Run)
	}
	if t.Provenance != nil {
		v.SourceHash, v.AppBuild = t.Provenance.SourceHash, t.Provenance.AppBuild
	}
	return v
}
