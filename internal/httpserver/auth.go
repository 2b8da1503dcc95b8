package httpserver

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// sessionCookie is the browser session's cookie name.
const sessionCookie = "pitchtank_session"

type ctxKey int

const userKey ctxKey = 1

// userFrom returns the authenticated user of the request, or nil.
func userFrom(ctx context.Context) *pitches.User {
	u, _ := ctx.Value(userKey).(*pitches.User)
	return u
}

func withUser(r *http.Request, u *pitches.User) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), userKey, u))
}

// pageUser loads the user of a browser session, if any. An unknown or
// expired cookie simply means "not logged in"; the stale cookie is cleared.
func (s *server) pageUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil || c.Value == "" {
			next.ServeHTTP(w, r)
			return
		}
		u, err := s.svc.UserBySession(r.Context(), c.Value)
		if err != nil {
			if code := pitches.ErrorCode(err); code != pitches.EUNAUTHORIZED && code != pitches.ENOTFOUND {
				s.renderError(w, r, err)
				return
			}
			s.clearSessionCookie(w, r)
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, withUser(r, u))
	})
}

// apiUser authenticates API requests by bearer token only. A session cookie
// is deliberately ignored on the API: a browser attaches cookies to
// cross-site requests on its own, but never an Authorization header, so the
// API cannot be driven by a forged request even if cross-origin protection
// were bypassed. Every API endpoint requires a token.
func (s *server) apiUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		scheme, secret, ok := strings.Cut(h, " ")
		if h == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pitchtank"`)
			s.apiError(w, r, pitches.Errorf(pitches.EUNAUTHORIZED, "", "missing Authorization: Bearer <token> header"))
			return
		}
		secret = strings.TrimSpace(secret)
		if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pitchtank"`)
			s.apiError(w, r, pitches.Errorf(pitches.EUNAUTHORIZED, "", "Authorization header must be: Bearer <token>"))
			return
		}
		u, err := s.svc.UserByToken(r.Context(), secret)
		if err != nil {
			if code := pitches.ErrorCode(err); code == pitches.EUNAUTHORIZED || code == pitches.ENOTFOUND {
				w.Header().Set("WWW-Authenticate", `Bearer realm="pitchtank", error="invalid_token"`)
				s.apiError(w, r, pitches.Errorf(pitches.EUNAUTHORIZED, "", "invalid or revoked token"))
				return
			}
			s.apiError(w, r, err)
			return
		}
		next.ServeHTTP(w, withUser(r, u))
	})
}

// requireLogin sends anonymous browsers to the login page and back.
func (s *server) requireLogin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if userFrom(r.Context()) == nil {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) secure(r *http.Request) bool { return r.TLS != nil || s.cfg.SecureCookies }

func (s *server) setSessionCookie(w http.ResponseWriter, r *http.Request, secret string) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: secret, Path: "/",
		MaxAge: int(s.cfg.SessionTTL.Seconds()), HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteLaxMode,
	})
}

func (s *server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteLaxMode,
	})
}

// clientIP is the peer address. X-Forwarded-For is not trusted: anyone can
// set it, and trusting it would let a guesser pick a fresh bucket per try.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Login rate limits, in the manner of GitHub and HotCRP: failures are what
// is counted, never successes, and a failure elsewhere never locks the real
// user out.
//
//   - ipLimit: failed logins per client address, whatever the login. An
//     address out of tries is refused (429) before its password is checked.
//   - nameLimit: failed logins per (login, address) pair, a backoff for one
//     address hammering one account; a successful login from that address
//     resets it. Another address, the real user's, is not affected: the
//     login is never locked as a whole, so nobody can lock someone out by
//     guessing wrong on purpose.
//
// A successful login uses up no allowance at all. A guesser spreading over
// many addresses gets each address's small budget, against bcrypt at the
// server's cost and 8-character passwords.
func loginKey(r *http.Request, login string) string {
	key := strings.ToLower(strings.TrimSpace(login))
	if len(key) > 64 {
		key = key[:64] // logins are short; this only bounds the map key
	}
	return key + "\x00" + clientIP(r)
}

// allowLogin says whether this address may try this login now.
func (s *server) allowLogin(r *http.Request, login string) error {
	if !s.ipLimit.has(clientIP(r)) || !s.nameLimit.has(loginKey(r, login)) {
		return pitches.Errorf(pitches.ERATELIMITED, "", "too many failed login attempts from your address; wait a minute and try again")
	}
	return nil
}

// loginFailed charges a failed attempt to the address and to the pair.
func (s *server) loginFailed(r *http.Request, login string) {
	s.ipLimit.take(clientIP(r))
	s.nameLimit.take(loginKey(r, login))
}

// loginSucceeded clears the pair's backoff; the address's failures stay
// counted, so logging in to one's own account between guesses at others
// does not buy more guesses.
func (s *server) loginSucceeded(r *http.Request, login string) {
	s.nameLimit.reset(loginKey(r, login))
}

// safeNext keeps post-login redirects on this site: a path, never a URL with
// a host or a scheme ("//evil.example" included).
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
