package httpserver

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// statusOf is the one place where domain error codes become HTTP statuses
// (the WTF Dial pattern): handlers never pick a status for a domain error.
var statusOf = map[string]int{
	pitches.EINVALID:      http.StatusUnprocessableEntity,
	pitches.EBADREQUEST:   http.StatusBadRequest,
	pitches.EUNAUTHORIZED: http.StatusUnauthorized,
	pitches.EFORBIDDEN:    http.StatusForbidden,
	pitches.ENOTFOUND:     http.StatusNotFound,
	pitches.ECONFLICT:     http.StatusConflict,
	pitches.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	pitches.ERATELIMITED:  http.StatusTooManyRequests,
	pitches.EINTERNAL:     http.StatusInternalServerError,
}

// errorStatus returns the HTTP status for err.
func errorStatus(err error) int {
	if s, ok := statusOf[pitches.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// errorBody is the JSON shape of every API error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// logInternal logs errors that are not domain errors: their details stay in
// the log and never reach the response.
func (s *server) logInternal(r *http.Request, err error) {
	var e *pitches.Error
	if errors.As(err, &e) && e.Code != pitches.EINTERNAL {
		return
	}
	s.log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
}

// apiError writes err as the JSON error body with its mapped status.
func (s *server) apiError(w http.ResponseWriter, r *http.Request, err error) {
	s.logInternal(r, err)
	writeJSON(w, errorStatus(err), errorBody{Error: errorDetail{
		Code:    pitches.ErrorCode(err),
		Message: pitches.ErrorMessage(err),
		Field:   pitches.ErrorField(err),
	}})
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing useful to do
}
