package httpserver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

// registerAdminRoutes mounts the admin pages. The service refuses every
// admin action by a non-admin anyway; requireAdmin also keeps the pages
// (user list included) from non-admins, and guards CreateUser, which takes
// no acting user in the Service contract.
func (s *server) registerAdminRoutes(r chi.Router) {
	r.Use(s.requireAdmin)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) { redirect(w, r, "/admin/rounds", "") })
	r.Get("/rounds", s.handleAdminRounds)
	r.Post("/rounds", s.handleAdminCreateRound)
	r.Get("/rounds/{number}/edit", s.handleAdminEditRoundForm)
	r.Post("/rounds/{number}/edit", s.handleAdminEditRound)
	r.Get("/rounds/{number}/status", s.handleAdminStatusConfirm)
	r.Post("/rounds/{number}/status", s.handleAdminStatus)
	r.Post("/rounds/{number}/baseline", s.handleAdminSetBaseline)
	r.Post("/rounds/{number}/measurement", s.handleAdminSetMeasurement)
	r.Get("/users", s.handleAdminUsers)
	r.Post("/users", s.handleAdminCreateUser)
	r.Post("/users/{id}/role", s.handleAdminSetRole)
	r.Post("/users/{id}/active", s.handleAdminSetActive)
	s.registerTrackingAdminRoutes(r)
}

func (s *server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pitches.Can(userFrom(r.Context()), pitches.ActManageUsers, pitches.Target{}) != nil {
			s.renderError(w, r, pitches.Errorf(pitches.EFORBIDDEN, "", "Only admins may use the admin pages."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// blankRows is how many empty criterion rows a rubric form offers.
const blankRows = 3

func roundForm(rd *pitches.Round) templates.RoundForm {
	f := templates.RoundForm{Suite: "benchmarks", Problems: problemNames()}
	if rd != nil {
		f = templates.RoundForm{Editing: true, Number: strconv.Itoa(rd.Number), Title: rd.Title, Rules: rd.Rules, Baseline: rd.Baseline,
			Problem: rd.Measurement.Problem, Suite: rd.Measurement.Suite, DeviceClass: rd.Measurement.DeviceClass,
			AllowImports: rd.Measurement.AllowImports, Problems: problemNames()}
		for _, c := range rd.Criteria {
			f.Criteria = append(f.Criteria, templates.CriterionRow{Key: c.Key, Name: c.Name, Description: c.Description, Weight: strconv.Itoa(c.Weight)})
		}
	}
	for range blankRows {
		f.Criteria = append(f.Criteria, templates.CriterionRow{})
	}
	return f
}

// roundFormInput reads the rubric form: parallel key/name/description/weight
// lists, one entry per row; rows with an empty key and name are dropped.
func roundFormInput(r *http.Request) (templates.RoundForm, pitches.RoundInput, *templates.FormError) {
	f := templates.RoundForm{
		Number: strings.TrimSpace(r.PostForm.Get("number")), Title: strings.TrimSpace(r.PostForm.Get("title")),
		Rules: r.PostForm.Get("rules"), Baseline: strings.TrimSpace(r.PostForm.Get("baseline")),
	}
	keys, names, descs, weights := r.PostForm["key"], r.PostForm["name"], r.PostForm["description"], r.PostForm["weight"]
	at := func(list []string, i int) string {
		if i < len(list) {
			return strings.TrimSpace(list[i])
		}
		return ""
	}
	in := pitches.RoundInput{Title: f.Title, Rules: f.Rules, Baseline: f.Baseline}
	// The measurement's fields; a form without a problem declares none.
	f.Problem, f.Suite = strings.TrimSpace(r.PostForm.Get("problem")), strings.TrimSpace(r.PostForm.Get("suite"))
	f.DeviceClass, f.AllowImports = strings.TrimSpace(r.PostForm.Get("device_class")), r.PostForm.Get("allow_imports") != ""
	f.Problems = problemNames()
	if f.Problem != "" {
		in.Measurement = &pitches.RoundMeasurement{Problem: f.Problem, Suite: f.Suite, DeviceClass: f.DeviceClass, AllowImports: f.AllowImports}
	}
	var ferr *templates.FormError
	for i := range keys {
		row := templates.CriterionRow{Key: at(keys, i), Name: at(names, i), Description: at(descs, i), Weight: at(weights, i)}
		if row.Key == "" && row.Name == "" {
			continue
		}
		f.Criteria = append(f.Criteria, row)
		w, err := strconv.Atoi(row.Weight)
		if err != nil && ferr == nil {
			ferr = &templates.FormError{Field: "criteria", Message: "Weight of criterion " + strconv.Quote(row.Key) + " must be a whole number."}
		}
		in.Criteria = append(in.Criteria, pitches.Criterion{Key: row.Key, Name: row.Name, Description: row.Description, Weight: w})
	}
	for range blankRows {
		f.Criteria = append(f.Criteria, templates.CriterionRow{})
	}
	n, err := strconv.Atoi(f.Number)
	if err != nil && ferr == nil {
		ferr = &templates.FormError{Field: "number", Message: "Round number must be a whole number."}
	}
	in.Number = n
	return f, in, ferr
}

func (s *server) adminRoundsView(r *http.Request, f templates.RoundForm) (templates.AdminRoundsView, error) {
	rounds, err := s.svc.Rounds(r.Context())
	if err != nil {
		return templates.AdminRoundsView{}, err
	}
	if !f.Editing && f.Number == "" {
		next := 1
		for _, rd := range rounds {
			if rd.Number >= next {
				next = rd.Number + 1
			}
		}
		f.Number = strconv.Itoa(next)
	}
	return templates.AdminRoundsView{Rounds: rounds, Problems: problemNames(), Form: f, Flash: flashFrom(r)}, nil
}

func (s *server) handleAdminRounds(w http.ResponseWriter, r *http.Request) {
	v, err := s.adminRoundsView(r, roundForm(nil))
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.AdminRoundsPage(s.chrome(r, "Admin: rounds", "admin"), v))
}

func (s *server) handleAdminCreateRound(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	f, in, ferr := roundFormInput(r)
	status := http.StatusUnprocessableEntity
	if ferr == nil {
		err := checkRoundMeasurement(in)
		if err == nil {
			_, err = s.svc.CreateRound(r.Context(), userFrom(r.Context()), in)
		}
		if err == nil {
			redirect(w, r, "/admin/rounds", "created")
			return
		}
		ferr, status = s.formErr(r, err), errorStatus(err)
	}
	f.Err = ferr
	v, err := s.adminRoundsView(r, f)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Flash = ""
	s.render(w, r, status, templates.AdminRoundsPage(s.chrome(r, "Admin: rounds", "admin"), v))
}

func (s *server) adminRound(w http.ResponseWriter, r *http.Request) (*pitches.Round, bool) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return nil, false
	}
	rd, err := s.svc.Round(r.Context(), n)
	if err != nil {
		s.renderError(w, r, err)
		return nil, false
	}
	return rd, true
}

func (s *server) handleAdminEditRoundForm(w http.ResponseWriter, r *http.Request) {
	rd, ok := s.adminRound(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, templates.AdminRoundEditPage(s.chrome(r, "Edit round", "admin"), roundForm(rd)))
}

func (s *server) handleAdminEditRound(w http.ResponseWriter, r *http.Request) {
	rd, ok := s.adminRound(w, r)
	if !ok || !s.parseForm(w, r) {
		return
	}
	f, in, ferr := roundFormInput(r)
	f.Editing, f.Number, in.Number = true, strconv.Itoa(rd.Number), rd.Number
	if ferr != nil && ferr.Field == "number" {
		ferr = nil // the number comes from the path when editing
	}
	status := http.StatusUnprocessableEntity
	if ferr == nil {
		err := s.checkRoundEdit(r.Context(), userFrom(r.Context()), rd.Number, &in)
		if err == nil {
			_, err = s.svc.UpdateRound(r.Context(), userFrom(r.Context()), rd.Number, in)
		}
		if err == nil {
			redirect(w, r, "/admin/rounds", "updated")
			return
		}
		ferr, status = s.formErr(r, err), errorStatus(err)
	}
	f.Err = ferr
	s.render(w, r, status, templates.AdminRoundEditPage(s.chrome(r, "Edit round", "admin"), f))
}

func (s *server) handleAdminStatusConfirm(w http.ResponseWriter, r *http.Request) {
	rd, ok := s.adminRound(w, r)
	if !ok {
		return
	}
	to := pitches.RoundStatus(r.URL.Query().Get("to"))
	if to == "" || to != templates.NextStatus(rd.Status) {
		s.renderError(w, r, pitches.Errorf(pitches.ECONFLICT, "", "Round %d is %s; it can only move forward one step.", rd.Number, rd.Status))
		return
	}
	s.render(w, r, http.StatusOK, templates.ConfirmStatusPage(s.chrome(r, "Change round status", "admin"), templates.ConfirmStatusView{Round: *rd, To: to}))
}

func (s *server) handleAdminStatus(w http.ResponseWriter, r *http.Request) {
	rd, ok := s.adminRound(w, r)
	if !ok || !s.parseForm(w, r) {
		return
	}
	to := pitches.RoundStatus(r.PostForm.Get("status"))
	if _, err := s.svc.SetRoundStatus(r.Context(), userFrom(r.Context()), rd.Number, to); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/admin/rounds", "status")
}

func (s *server) adminUsersView(r *http.Request) (templates.AdminUsersView, error) {
	users, err := s.svc.Users(r.Context())
	return templates.AdminUsersView{Users: users, Form: templates.UserForm{Role: string(pitches.RoleViewer)}, Flash: flashFrom(r)}, err
}

func (s *server) handleAdminUsers(w http.ResponseWriter, r *http.Request) {
	v, err := s.adminUsersView(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.AdminUsersPage(s.chrome(r, "Admin: users", "admin"), v))
}

func (s *server) handleAdminCreateUser(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	f := templates.UserForm{Login: strings.TrimSpace(r.PostForm.Get("login")), DisplayName: strings.TrimSpace(r.PostForm.Get("display_name")), Role: r.PostForm.Get("role")}
	display := f.DisplayName
	if display == "" {
		display = f.Login
	}
	_, err := s.svc.CreateUser(r.Context(), f.Login, display, pitches.Role(f.Role), r.PostForm.Get("password"))
	if err == nil {
		redirect(w, r, "/admin/users", "user")
		return
	}
	v, verr := s.adminUsersView(r)
	if verr != nil {
		s.renderError(w, r, verr)
		return
	}
	f.Err = s.formErr(r, err)
	v.Form, v.Flash = f, ""
	s.render(w, r, errorStatus(err), templates.AdminUsersPage(s.chrome(r, "Admin: users", "admin"), v))
}

func (s *server) handleAdminSetRole(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such user."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	if err := s.svc.SetUserRole(r.Context(), userFrom(r.Context()), id, pitches.Role(r.PostForm.Get("role"))); err != nil {
		v, verr := s.adminUsersView(r)
		if verr != nil {
			s.renderError(w, r, verr)
			return
		}
		v.RoleErr, v.Flash = s.formErr(r, err), ""
		s.render(w, r, errorStatus(err), templates.AdminUsersPage(s.chrome(r, "Admin: users", "admin"), v))
		return
	}
	redirect(w, r, "/admin/users", "role")
}

// handleAdminSetActive deactivates (active=0) or reactivates (active=1) a user.
func (s *server) handleAdminSetActive(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such user."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	active := r.PostForm.Get("active")
	if active != "0" && active != "1" {
		err = pitches.Errorf(pitches.EINVALID, "active", "active must be 0 (deactivate) or 1 (reactivate)")
	} else {
		err = s.svc.SetUserActive(r.Context(), userFrom(r.Context()), id, active == "1")
	}
	if err != nil {
		v, verr := s.adminUsersView(r)
		if verr != nil {
			s.renderError(w, r, verr)
			return
		}
		v.RoleErr, v.Flash = s.formErr(r, err), ""
		s.render(w, r, errorStatus(err), templates.AdminUsersPage(s.chrome(r, "Admin: users", "admin"), v))
		return
	}
	if active == "1" {
		redirect(w, r, "/admin/users", "reactivated")
		return
	}
	redirect(w, r, "/admin/users", "deactivated")
}

// problemNames are the kernel catalogue's problems, for the measurement forms.
func problemNames() []string {
	var out []string
	for _, p := range problemOptions() {
		out = append(out, p.Name)
	}
	return out
}
