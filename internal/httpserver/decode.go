package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/pitchtank/pitchtank/internal/jsonpath"
	"github.com/pitchtank/pitchtank/internal/pitches"
)

// decodeJSON reads exactly one JSON value from r into dst, refusing unknown
// fields and trailing data. Failures come back as *pitches.Error: bad_request
// naming the field where encoding/json tells us which, or too_large when the
// body cap (http.MaxBytesReader) was hit.
//
// It is strict in the ways docs/api.md promises (strictjson.go): keys match
// case-sensitively, a key given twice is refused, and null is refused where
// a value is required, each naming the field.
func decodeJSON(r io.Reader, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	// encoding/json replaces invalid UTF-8 with U+FFFD without a word:
	// refuse it, naming the field, as the forms refuse it. A 400, as every
	// other body that is not JSON: JSON text is UTF-8 (RFC 8259, 8.1).
	if field, at := jsonpath.UTF8Field(body, "body"); at >= 0 {
		return pitches.Errorf(pitches.EBADREQUEST, field, "%s must be valid UTF-8 text (invalid byte at offset %d)", field, at)
	}
	if err := checkStrictJSON(body, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(withPath(body, err))
	}
	// One value only: anything but whitespace after it is a malformed body.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return decodeError(err)
		}
		return pitches.Errorf(pitches.EBADREQUEST, "", "request body must be a single JSON value")
	}
	return nil
}

// decodeEmpty reads the body of an endpoint that takes none (the bodyless
// POSTs and every DELETE; delete_body_test.go walks the router for the
// DELETEs): nothing, or an empty object. Anything else is refused as decodeJSON refuses it (a
// field is unknown, named), so that a field the caller thinks matters, a
// reason say, is never silently dropped.
func decodeEmpty(r io.Reader) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return decodeJSON(bytes.NewReader(body), &none)
}

// withPath puts the array indexes and map keys into a type error's field:
// encoding/json names "criteria.weight" where docs/api.md promises
// "criteria[1].weight" (jsonpath finds the value in body by its offset).
func withPath(body []byte, err error) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		ute.Field = jsonpath.Field(body, ute)
	}
	return err
}

func decodeError(err error) error {
	var (
		mbe *http.MaxBytesError
		ute *json.UnmarshalTypeError
		se  *json.SyntaxError
	)
	switch {
	case errors.As(err, &mbe):
		return pitches.Errorf(pitches.ETOOLARGE, "", "request body is larger than %d bytes", mbe.Limit)
	case errors.As(err, &ute):
		field := ute.Field
		if field == "" {
			return pitches.Errorf(pitches.EBADREQUEST, "", "request body must be %s, not %s", jsonpath.Want(ute.Type), ute.Value)
		}
		return pitches.Errorf(pitches.EBADREQUEST, field, "%s must be %s, not %s", field, jsonpath.Want(ute.Type), ute.Value)
	case errors.As(err, &se):
		return pitches.Errorf(pitches.EBADREQUEST, "", "malformed JSON at byte %d", se.Offset)
	case errors.Is(err, io.EOF):
		return pitches.Errorf(pitches.EBADREQUEST, "", "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return pitches.Errorf(pitches.EBADREQUEST, "", "malformed JSON: body ends early")
	}
	// encoding/json reports unknown fields only as text: json: unknown field "x".
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		name := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return pitches.Errorf(pitches.EBADREQUEST, name, "unknown field %q", name)
	}
	return pitches.Errorf(pitches.EBADREQUEST, "", "malformed JSON request body")
}

// Request bodies of the JSON API. Pointers mark fields the client may omit
// where omission must be told apart from zero.

type criterionRequest struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Weight      int    `json:"weight"`
}

type roundRequest struct {
	Number   int                `json:"number"`
	Title    string             `json:"title"`
	Rules    string             `json:"rules"`
	Baseline string             `json:"baseline"`
	Criteria []criterionRequest `json:"criteria"`
	// Measurement is how the round's pitches are measured; absent: a new
	// round declares none, an edit leaves it as it is.
	Measurement *measurementRequest `json:"measurement"`
}

type measurementRequest struct {
	Problem      string `json:"problem"`
	Suite        string `json:"suite"`
	DeviceClass  string `json:"device_class"`
	AllowImports bool   `json:"allow_imports"`
}

func (q roundRequest) input() pitches.RoundInput {
	in := pitches.RoundInput{Number: q.Number, Title: q.Title, Rules: q.Rules, Baseline: q.Baseline}
	if m := q.Measurement; m != nil {
		in.Measurement = &pitches.RoundMeasurement{Problem: pitches.TrimLine(m.Problem), Suite: pitches.TrimLine(m.Suite),
			DeviceClass: pitches.TrimLine(m.DeviceClass), AllowImports: m.AllowImports}
	}
	for _, c := range q.Criteria {
		in.Criteria = append(in.Criteria, pitches.Criterion{Key: c.Key, Name: c.Name, Description: c.Description, Weight: c.Weight})
	}
	return in
}

type statusRequest struct {
	Status pitches.RoundStatus `json:"status"`
}

type pitchRequest struct {
	Round     int           `json:"round"`
	Title     string        `json:"title"`
	Category  string        `json:"category"`
	Body      string        `json:"body"`
	Claim     pitches.Range `json:"claim"`
	Variant   string        `json:"variant"`
	RepitchOf int64         `json:"repitch_of"`
}

func (q pitchRequest) input() pitches.PitchInput {
	return pitches.PitchInput{RoundNumber: q.Round, Title: q.Title, Category: q.Category, Body: q.Body,
		Claim: q.Claim, Variant: q.Variant, RepitchOf: q.RepitchOf}
}

// scorecardRequest keeps the maps' values raw so that a wrong type names
// its criterion ("scores.speedup"); encoding/json names only the map.
type scorecardRequest struct {
	Scores   map[string]json.RawMessage `json:"scores"`
	Notes    map[string]json.RawMessage `json:"notes"`
	Estimate pitches.Range              `json:"estimate"`
	Verdict  string                     `json:"verdict"`
}

func (q scorecardRequest) input() (pitches.ScorecardInput, error) {
	in := pitches.ScorecardInput{Estimate: q.Estimate, Verdict: q.Verdict}
	if q.Scores != nil {
		in.Scores = make(map[string]float64, len(q.Scores))
	}
	for k, v := range q.Scores {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return pitches.ScorecardInput{}, pitches.Errorf(pitches.EBADREQUEST, "scores."+k, "score for %q must be a number", k)
		}
		in.Scores[k] = f
	}
	if q.Notes != nil {
		in.Notes = make(map[string]string, len(q.Notes))
	}
	for k, v := range q.Notes {
		var n string
		if err := json.Unmarshal(v, &n); err != nil {
			return pitches.ScorecardInput{}, pitches.Errorf(pitches.EBADREQUEST, "notes."+k, "note for %q must be a string", k)
		}
		in.Notes[k] = n
	}
	return in, nil
}

type voteRequest struct {
	Pitch         int64              `json:"pitch"`
	Justification string             `json:"justification"`
	Terms         *pitches.DealTerms `json:"terms"` // optional deal terms
}

type tokenRequest struct {
	Label string `json:"label"`
}

// The decode* functions are what handlers and fuzz targets call.

func decodeRound(r io.Reader) (pitches.RoundInput, error) {
	var q roundRequest
	if err := decodeJSON(r, &q); err != nil {
		return pitches.RoundInput{}, err
	}
	in := q.input()
	if err := checkRoundMeasurement(in); err != nil {
		return pitches.RoundInput{}, err
	}
	return in, nil
}

func decodePitch(r io.Reader) (pitches.PitchInput, error) {
	var q pitchRequest
	if err := decodeJSON(r, &q); err != nil {
		return pitches.PitchInput{}, err
	}
	return q.input(), nil
}

func decodeScorecard(r io.Reader) (pitches.ScorecardInput, error) {
	var q scorecardRequest
	if err := decodeJSON(r, &q); err != nil {
		return pitches.ScorecardInput{}, err
	}
	return q.input()
}

func decodeVote(r io.Reader) (pitches.VoteInput, error) {
	var q voteRequest
	if err := decodeJSON(r, &q); err != nil {
		return pitches.VoteInput{}, err
	}
	in := pitches.VoteInput{PitchID: q.Pitch, Justification: q.Justification}
	if q.Terms != nil {
		in.Terms = *q.Terms
	}
	return in, nil
}

func decodeWeights(r io.Reader) (map[string]int, error) {
	// Decoded value by value, so a wrong type is reported as weights.<key>
	// (encoding/json names no field for the values of a top-level map).
	var raw map[string]json.RawMessage
	if err := decodeJSON(r, &raw); err != nil {
		if f := pitches.ErrorField(err); f != "" {
			// The body is the weights object itself; name its keys as
			// the per-value errors below do.
			return nil, pitches.Errorf(pitches.ErrorCode(err), "weights."+f, "%s", strings.Replace(pitches.ErrorMessage(err), f, "weights."+f, 1))
		}
		return nil, err
	}
	if raw == nil {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "", "request body must be a JSON object of criterion key to integer weight")
	}
	w := make(map[string]int, len(raw))
	for k, v := range raw {
		var n int
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "weights."+k, "weight of %q must be an integer", k)
		}
		w[k] = n
	}
	return w, nil
}

func decodeStatus(r io.Reader) (pitches.RoundStatus, error) {
	var q statusRequest
	if err := decodeJSON(r, &q); err != nil {
		return "", err
	}
	return q.Status, nil
}
