package httpserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// baselineSetter is the store's way to change a round's baseline outside
// the rubric edit (sqlite implements it); servers over other services
// answer that they cannot.
type baselineSetter interface {
	SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error)
}

// setBaseline checks the spec against the kernel manifest (the problem
// pitches are measured on) and stores it.
func (s *server) setBaseline(ctx context.Context, u *pitches.User, n int, baseline string) (*pitches.Round, error) {
	bs, ok := s.svc.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's baseline")
	}
	if u == nil || u.Role != pitches.RoleAdmin {
		return nil, pitches.Errorf(pitches.EFORBIDDEN, "", "only admins set a round's baseline")
	}
	baseline = strings.TrimSpace(baseline)
	if baseline != "" {
		ref, err := runner.KernelsCatalog{}.CheckVariant(defaultProblem, baseline)
		if err != nil {
			return nil, pitches.Errorf(pitches.EINVALID, "baseline", "%s", err.Error())
		}
		if ref {
			return nil, pitches.Errorf(pitches.EINVALID, "baseline", "the reference variant is not a timed baseline; use \"baseline\" or a knob variant")
		}
	}
	return bs.SetRoundBaseline(ctx, u, n, baseline)
}

func (s *server) handleAPISetBaseline(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var in struct {
		Baseline string `json:"baseline"`
	}
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.setBaseline(r.Context(), userFrom(r.Context()), n, in.Baseline)
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
	if _, err := s.setBaseline(r.Context(), userFrom(r.Context()), n, r.PostForm.Get("baseline")); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/admin/rounds#round-"+strconv.Itoa(n), "baseline")
}
