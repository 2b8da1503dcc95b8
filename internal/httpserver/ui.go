package httpserver

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

// registerPageRoutes mounts the server-rendered pages. Every page but the
// login form needs a session: standings and scorecards are per viewer
// (hidden-score rule), so there is no anonymous view of a round.
func (s *server) registerPageRoutes(r chi.Router) {
	r.Use(s.pageUser, s.cachePages)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no page at %s.", r.URL.Path))
	})
	r.Get("/login", s.handleLoginForm)
	r.Post("/login", s.handleLogin)
	r.Post("/logout", s.handleLogout)

	// The home page is the landing page for anonymous visitors; the round
	// and pitch pages check CanReadRound (closed rounds may be public).
	r.Get("/", s.handleHome)
	r.Get("/rounds", s.handleRounds)
	r.Get("/rounds/{number}", s.handleRound)
	r.Get("/pitches/{id:[0-9]+}", s.handlePitch)

	r.Group(func(r chi.Router) {
		r.Use(s.requireLogin)
		r.Post("/rounds/{number}/weights", s.handleSetWeights)
		r.Post("/rounds/{number}/vote", s.handleVote)

		r.Get("/pitches/new", s.handleNewPitchForm)
		r.Post("/pitches", s.handleFilePitch)
		r.Get("/pitches/{id}/edit", s.handleEditPitchForm)
		r.Post("/pitches/{id}/edit", s.handleEditPitch)
		r.Get("/pitches/{id}/withdraw", s.handleWithdrawForm)
		r.Post("/pitches/{id}/withdraw", s.handleWithdraw)
		r.Post("/pitches/{id}/scorecard", s.handleScorecard)

		r.Get("/tokens", s.handleTokens)
		r.Post("/tokens", s.handleCreateToken)
		r.Post("/tokens/{id}/revoke", s.handleRevokeToken)
		r.Get("/account", s.handleAccount)
		r.Post("/account/password", s.handleChangePassword)

		s.registerRunPageRoutes(r)
		s.registerKernelPageRoutes(r)

		r.Route("/admin", s.registerAdminRoutes)
	})
}

// render writes a component as a full page. It renders into a buffer first
// so that a template error becomes a clean 500, not half a page.
func (s *server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render page", slog.String("path", r.URL.Path), slog.Any("err", err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (s *server) chrome(r *http.Request, title, nav string) templates.Chrome {
	u := userFrom(r.Context())
	c := templates.Chrome{User: u, Title: title, Nav: nav, PublicRounds: s.cfg.PublicClosedRounds,
		Admin: pitches.Can(u, pitches.ActManageUsers, pitches.Target{}) == nil, Scorer: pitches.CanRole(u, pitches.ActScore) == nil}
	if r.Method == http.MethodPost {
		// A page rendered for a POST is a refused form (successes
		// redirect): app.js swaps the entry for the form's GET address.
		c.ReplaceURL = formPageURL(r)
	}
	return c
}

// formPageURL is the GET address of the page a form was posted from: the
// Referer's path when it is this site's, else the POST's own path (most
// forms post to the address that shows them).
func formPageURL(r *http.Request) string {
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host && ref.Path != "" {
		return safeNext(ref.RequestURI())
	}
	return safeNext(r.URL.Path)
}

// renderError shows err as an error page with its mapped status; an
// anonymous visitor who needs to log in is sent to the login form instead.
func (s *server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	s.logInternal(r, err)
	status := errorStatus(err)
	if status == http.StatusUnauthorized && userFrom(r.Context()) == nil && r.Method == http.MethodGet {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	s.render(w, r, status, templates.ErrorPage(s.chrome(r, http.StatusText(status), ""), templates.ErrorView{
		Status: status, Title: http.StatusText(status), Message: pageErrorMessage(err),
	}))
}

// pageErrorMessage is err's message as an error page shows it: prefixed
// with the field it is about, since the page, unlike a form, has no input
// beside which to show it ("status: must be pitching, judging or closed").
func pageErrorMessage(err error) string {
	msg := pitches.ErrorMessage(err)
	if f := pitches.ErrorField(err); f != "" && !strings.HasPrefix(msg, f) {
		return f + ": " + msg
	}
	return msg
}

// parseForm parses a form body; an oversized body is a 413, a malformed
// one a 400, both as error pages.
func (s *server) parseForm(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.renderError(w, r, pitches.Errorf(pitches.ETOOLARGE, "", "The form is larger than %d bytes.", mbe.Limit))
			return false
		}
		s.renderError(w, r, pitches.Errorf(pitches.EBADREQUEST, "", "The form could not be read."))
		return false
	}
	return true
}

// formErr converts a service error into the form's error; errors that are
// not about the form (internal ones) are logged and shown generically.
func (s *server) formErr(r *http.Request, err error) *templates.FormError {
	s.logInternal(r, err)
	return &templates.FormError{Field: pitches.ErrorField(err), Message: pitches.ErrorMessage(err)}
}

// flashes are the messages a PRG redirect can ask for; only these keys are
// shown, so a crafted URL cannot put arbitrary text on the page.
var flashes = map[string]string{
	"scored":      "Scorecard saved. The total shown is the one pitchtank computed.",
	"voted":       "Vote recorded.",
	"filed":       "Pitch filed.",
	"edited":      "Pitch saved.",
	"withdrawn":   "Pitch withdrawn.",
	"weights":     "Your weights for this round are saved.",
	"created":     "Round opened.",
	"updated":     "Round saved.",
	"status":      "Round status changed.",
	"user":        "User added.",
	"role":        "Role changed.",
	"deactivated": "User deactivated: they cannot log in, and their sessions and tokens no longer work.",
	"reactivated": "User reactivated.",
	"password":    "Password changed.",
	"queued":      "Run queued.",
	"cancelled":   "Run cancelled.",
	"requeued":    "Run queued again with the same parameters.",
	"baseline":    "Baseline saved.",
	"measurement": "Measurement saved: pitch results follow it.",
	"accepted":    "Suspect run accepted as a result; your reason is recorded.",
}

func flashFrom(r *http.Request) string { return flashes[r.URL.Query().Get("ok")] }

// redirect finishes a successful form post (PRG).
func redirect(w http.ResponseWriter, r *http.Request, path, ok string) {
	if ok != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		frag := ""
		if i := strings.Index(path, "#"); i >= 0 {
			path, frag = path[:i], path[i:]
		}
		path += sep + "ok=" + url.QueryEscape(ok) + frag
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// parseNumber reads a decimal form value; field names the input for the
// error message next to it.
func parseNumber(v, field, label string) (float64, *templates.FormError) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, &templates.FormError{Field: field, Message: label + " is required."}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, &templates.FormError{Field: field, Message: label + " must be a number."}
	}
	return f, nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
