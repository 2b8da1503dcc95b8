package pitches

import (
	"errors"
	"fmt"
)

// Error codes. The HTTP layer maps each to one status in one place.
const (
	EINVALID      = "invalid"      // 422: a field's value breaks a rule
	EBADREQUEST   = "bad_request"  // 400: malformed request (bad JSON, wrong types)
	EUNAUTHORIZED = "unauthorized" // 401: not logged in / bad token / bad password
	EFORBIDDEN    = "forbidden"    // 403: logged in, but this role may not do this
	ENOTFOUND     = "not_found"    // 404
	ECONFLICT     = "conflict"     // 409: the state forbids it (closed round, frozen weights, duplicate)
	ETOOLARGE     = "too_large"    // 413: body over the size cap
	ERATELIMITED  = "rate_limited" // 429
	EINTERNAL     = "internal"     // 500: never shown in detail
)

// Error is the domain's error: a code, a message for people, and the field it
// is about (empty when it is about no single field). Err, when set, is the
// typed error it was made from (a *kernels.KnobError, say), kept so that
// callers decide with errors.As rather than by reading the message.
type Error struct {
	Code    string
	Message string
	Field   string
	Err     error
}

// Unwrap returns the error e was made from, if any.
func (e *Error) Unwrap() error { return e.Err }

// WithCause records err as the error e was made from and returns e.
func (e *Error) WithCause(err error) *Error {
	e.Err = err
	return e
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("pitchtank %s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("pitchtank %s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with a formatted message.
func Errorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, else EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage returns the message of err if it is (or wraps) an *Error, else
// a generic message: internal details never reach users.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorField returns the field of err if it is (or wraps) an *Error.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// Sentinel errors the Service returns as they are, so callers may test them
// with errors.Is as well as by code.
var (
	// ErrUnauthorized: wrong login or password, unknown or expired session,
	// unknown or revoked token. One message for all, so a caller cannot tell
	// which part was wrong.
	ErrUnauthorized = &Error{Code: EUNAUTHORIZED, Message: "wrong login or password, or your session has ended"}
	// ErrNotFound: for lookups with nothing to name (e.g. CurrentRound with no rounds).
	ErrNotFound = &Error{Code: ENOTFOUND, Message: "not found"}
)
