package httpserver

import (
	"net/http"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

func (s *server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	if userFrom(r.Context()) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, templates.LoginPage(s.chrome(r, "Log in", ""), templates.LoginView{Next: safeNext(r.URL.Query().Get("next"))}))
}

func (s *server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	login := strings.TrimSpace(r.PostForm.Get("login"))
	password := r.PostForm.Get("password")
	next := safeNext(r.PostForm.Get("next"))
	fail := func(err error) {
		s.render(w, r, errorStatus(err), templates.LoginPage(s.chrome(r, "Log in", ""), templates.LoginView{
			Login: login, Next: next, Err: s.formErr(r, err),
		}))
	}
	if err := s.allowLogin(r, login); err != nil {
		w.Header().Set("Retry-After", "60")
		fail(err)
		return
	}
	u, err := s.svc.Authenticate(r.Context(), login, password)
	if err != nil {
		if pitches.ErrorCode(err) == pitches.EUNAUTHORIZED || pitches.ErrorCode(err) == pitches.ENOTFOUND || pitches.ErrorCode(err) == pitches.EINVALID {
			s.loginFailed(r, login)
			// One message for unknown login, wrong password and a
			// deactivated user alike; the password field is named.
			err = pitches.Errorf(pitches.EUNAUTHORIZED, "password", "Wrong login or password.")
		}
		fail(err)
		return
	}
	s.loginSucceeded(r, login)
	secret, err := s.svc.CreateSession(r.Context(), u.ID, s.cfg.SessionTTL)
	if err != nil {
		fail(err)
		return
	}
	s.setSessionCookie(w, r, secret)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if err := s.svc.DeleteSession(r.Context(), c.Value); err != nil && pitches.ErrorCode(err) != pitches.ENOTFOUND {
			s.renderError(w, r, err)
			return
		}
	}
	s.clearSessionCookie(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *server) tokensView(r *http.Request) (templates.TokensView, error) {
	toks, err := s.svc.Tokens(r.Context(), userFrom(r.Context()).ID)
	return templates.TokensView{Tokens: toks}, err
}

func (s *server) handleTokens(w http.ResponseWriter, r *http.Request) {
	v, err := s.tokensView(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.TokensPage(s.chrome(r, "API tokens", "tokens"), v))
}

// handleCreateToken renders the page directly instead of redirecting: the
// secret is shown exactly once and is never stored where a GET could find it.
func (s *server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	label := strings.TrimSpace(r.PostForm.Get("label"))
	secret, _, err := s.svc.CreateToken(r.Context(), userFrom(r.Context()).ID, label)
	v, lerr := s.tokensView(r)
	if lerr != nil {
		s.renderError(w, r, lerr)
		return
	}
	if err != nil {
		v.Label, v.Err = label, s.formErr(r, err)
		s.render(w, r, errorStatus(err), templates.TokensPage(s.chrome(r, "API tokens", "tokens"), v))
		return
	}
	v.NewSecret = secret
	s.render(w, r, http.StatusCreated, templates.TokensPage(s.chrome(r, "API tokens", "tokens"), v))
}

func (s *server) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if err := s.svc.RevokeToken(r.Context(), userFrom(r.Context()), id); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/tokens", "")
}

func (s *server) handleAccount(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, templates.AccountPage(s.chrome(r, "Account", "account"), templates.AccountView{Flash: flashFrom(r)}))
}

// handleChangePassword changes the logged-in user's password; the store
// checks the current one. Other sessions stay logged in: ending them is
// what deactivation is for.
func (s *server) handleChangePassword(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	err := s.svc.ChangePassword(r.Context(), userFrom(r.Context()), r.PostForm.Get("old_password"), r.PostForm.Get("new_password"))
	if err != nil {
		s.render(w, r, errorStatus(err), templates.AccountPage(s.chrome(r, "Account", "account"), templates.AccountView{Err: s.formErr(r, err)}))
		return
	}
	redirect(w, r, "/account", "password")
}
