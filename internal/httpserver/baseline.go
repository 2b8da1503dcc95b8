package httpserver

import (
	"context"
	"net/http"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// baselineSetter is the store's way to change a round's baseline and
// measurement outside the rubric edit (sqlite implements it); servers over
// other services answer that they cannot.
type baselineSetter interface {
	SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error)
	SetRoundMeasurement(ctx context.Context, by *pitches.User, number int, m pitches.RoundMeasurement, baseline string) (*pitches.Round, error)
}

// setBaseline checks the spec against the kernel manifest (the problem of
// the round's measurement) and stores it.
func (s *server) setBaseline(ctx context.Context, u *pitches.User, n int, baseline string) (*pitches.Round, error) {
	bs, ok := s.svc.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's baseline")
	}
	if pitches.Can(u, pitches.ActSetMeasure, pitches.Target{}) != nil {
		return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins set a round's baseline")
	}
	round, err := s.svc.Round(ctx, n)
	if err != nil {
		return nil, err
	}
	baseline = pitches.TrimLine(baseline)
	if err := pitches.ValidateRoundBaseline(n, round.Measurement, baseline); err != nil {
		return nil, err
	}
	if err := runner.CheckMeasurement(runner.KernelsCatalog{}, round.Measurement, baseline); err != nil {
		return nil, err
	}
	return bs.SetRoundBaseline(ctx, u, n, baseline)
}

// measurementInput is the JSON body of PUT /api/rounds/{n}/measurement and
// the round forms' measurement fields.
type measurementInput struct {
	Problem      string `json:"problem"`
	Suite        string `json:"suite"`
	Baseline     string `json:"baseline"`
	DeviceClass  string `json:"device_class"`
	AllowImports bool   `json:"allow_imports"`
}

// setMeasurementRequest is the JSON body of PUT
// /api/rounds/{n}/measurement. Every field is required: the request replaces
// the measurement, so a field left out would silently reset it (imports
// stop counting, the baseline becomes bench's default).
type setMeasurementRequest struct {
	Problem      *string `json:"problem"`
	Suite        *string `json:"suite"`
	Baseline     *string `json:"baseline"`
	DeviceClass  *string `json:"device_class"`
	AllowImports *bool   `json:"allow_imports"`
}

func (q setMeasurementRequest) input() (measurementInput, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"problem", q.Problem != nil}, {"suite", q.Suite != nil}, {"baseline", q.Baseline != nil},
		{"device_class", q.DeviceClass != nil}, {"allow_imports", q.AllowImports != nil}} {
		if !f.set {
			return measurementInput{}, missingField(f.name)
		}
	}
	return measurementInput{Problem: *q.Problem, Suite: *q.Suite, Baseline: *q.Baseline, DeviceClass: *q.DeviceClass,
		AllowImports: *q.AllowImports}, nil
}

// missingField is the error for a required field that is absent (or
// null): 422 naming it, never read as empty.
func missingField(name string) error {
	return pitches.Errorf(pitches.EINVALID, name, "%s is required (missing or null)", name)
}

func (in measurementInput) measurement() pitches.RoundMeasurement {
	return pitches.RoundMeasurement{Problem: pitches.TrimLine(in.Problem), Suite: pitches.TrimLine(in.Suite),
		DeviceClass: pitches.TrimLine(in.DeviceClass), AllowImports: in.AllowImports}
}

// setMeasurement checks the measurement against the kernel catalogue, as
// runs are checked, and stores it with the baseline (admins, until the
// round closes).
func (s *server) setMeasurement(ctx context.Context, u *pitches.User, n int, in measurementInput) (*pitches.Round, error) {
	bs, ok := s.svc.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's measurement")
	}
	if pitches.Can(u, pitches.ActSetMeasure, pitches.Target{}) != nil {
		return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins set a round's measurement")
	}
	m := in.measurement()
	if m.Problem == "" {
		return nil, pitches.Errorf(pitches.EINVALID, "problem", "a measurement needs its problem")
	}
	if err := runner.CheckMeasurement(runner.KernelsCatalog{}, m, in.Baseline); err != nil {
		return nil, err
	}
	return bs.SetRoundMeasurement(ctx, u, n, m, pitches.TrimLine(in.Baseline))
}

func (s *server) handleAPISetMeasurement(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var q setMeasurementRequest
	if err := decodeJSON(r.Body, &q); err != nil {
		s.apiError(w, r, err)
		return
	}
	in, err := q.input()
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.setMeasurement(r.Context(), userFrom(r.Context()), n, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoundJSON(round, true))
}

func (s *server) handleAdminSetMeasurement(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	f := r.PostForm
	in := measurementInput{Problem: f.Get("problem"), Suite: f.Get("suite"), Baseline: f.Get("baseline"),
		DeviceClass: f.Get("device_class"), AllowImports: f.Get("allow_imports") != ""}
	if _, err := s.setMeasurement(r.Context(), userFrom(r.Context()), n, in); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/admin/rounds#round-"+strconv.Itoa(n), "measurement")
}

func (s *server) handleAPISetBaseline(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	// Required: "" is bench's default, an absent baseline no baseline at
	// all, which must not clear the round's.
	var in struct {
		Baseline *string `json:"baseline"`
	}
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	if in.Baseline == nil {
		s.apiError(w, r, missingField("baseline"))
		return
	}
	round, err := s.setBaseline(r.Context(), userFrom(r.Context()), n, *in.Baseline)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoundJSON(round, true))
}

func (s *server) handleAdminSetBaseline(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	// An empty field is bench's default; no field at all is a broken
	// form, which must not clear the round's baseline.
	if _, ok := r.PostForm["baseline"]; !ok {
		s.renderError(w, r, missingField("baseline"))
		return
	}
	if _, err := s.setBaseline(r.Context(), userFrom(r.Context()), n, r.PostForm.Get("baseline")); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/admin/rounds#round-"+strconv.Itoa(n), "baseline")
}

// checkRoundMeasurement checks a round form's or request's measurement (and
// baseline) against the kernel catalogue before the round is stored.
func checkRoundMeasurement(in pitches.RoundInput) error {
	if in.Measurement == nil {
		return nil
	}
	return runner.CheckMeasurement(runner.KernelsCatalog{}, *in.Measurement, in.Baseline)
}

// checkRoundEdit checks an edit of round n before it is stored: its
// measurement and baseline against the kernel catalogue. An edit that
// leaves the measurement has its baseline checked against the stored one,
// and stores that measurement again with it, so that the baseline is stored
// with the measurement it was checked against even if another admin
// changes it meanwhile. A round with no problem has no measurement to
// store; the store refuses a baseline on it (pitches.ValidateRoundBaseline).
func (s *server) checkRoundEdit(ctx context.Context, u *pitches.User, n int, in *pitches.RoundInput) error {
	// The role first: whoever may not edit rounds learns nothing of this one.
	if err := pitches.CanRole(u, pitches.ActEditRound); err != nil {
		return err
	}
	if in.Measurement == nil {
		round, err := s.svc.Round(ctx, n)
		if err != nil {
			return err
		}
		if round.Measurement.Problem != "" {
			m := round.Measurement
			in.Measurement = &m
		}
	}
	return checkRoundMeasurement(*in)
}
