package httpserver

import (
	"io/fs"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// securityHeaders sets the headers every response carries. The CSP allows
// scripts only from our own origin, which is why the app has no inline
// scripts or event-handler attributes.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body; reading past the cap fails with
// *http.MaxBytesError, which decoders turn into a 413.
func (s *server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			limit := s.cfg.MaxBodyBytes
			if isKernelUpload(r) {
				limit = max(limit, maxKernelUploadBody) // kernels_upload.go
			}
			if r.Method == http.MethodPost && r.URL.Path == "/api/runs/import" {
				// A full bench document with raw samples outgrows 1 MiB;
				// the import's own cap is what docs/api.md promises.
				limit = max(limit, runner.MaxImportBytes)
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a panic in a handler into a 500 and a log line, so a bug
// costs one request rather than the process.
func (s *server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", slog.String("path", r.URL.Path), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				err := pitches.Errorf(pitches.EINTERNAL, "", "internal error")
				if isAPI(r) {
					writeJSON(w, http.StatusInternalServerError, errorBody{Error: errorDetail{Code: pitches.EINTERNAL, Message: "internal error"}})
					return
				}
				s.renderError(w, r, err)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func isAPI(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}

// staticHandler serves the embedded CSS and JS. Files are small and change
// only with a new binary, so a short cache is enough.
func staticHandler(fsys fs.FS) http.Handler {
	fileServer := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		fileServer.ServeHTTP(w, r)
	})
}
