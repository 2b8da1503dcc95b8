package httpserver

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// The API decodes as docs/api.md promises: keys match exactly, a key given
// twice is refused, null is refused where a value is required; each refusal
// names the field and changes nothing.
func TestStrictJSONOverTheAPI(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	p := a.pitch("alice", 1, "Stages")
	a.status(1, pitches.RoundJudging)
	path := "/api/pitches/" + strconv.FormatInt(p.ID, 10) + "/scorecard"
	good := `"speedup": 7, "feasibility": 6, "risk": 5, "pitch_quality": 8`
	for _, c := range []struct {
		name, body, field string
	}{
		{"null score", `{"scores": {` + good[:len(good)-1] + `null}, "estimate": {"lo": 1.1, "hi": 1.3}, "verdict": "in"}`, "scores.pitch_quality"},
		{"null estimate bound", `{"scores": {` + good + `}, "estimate": {"lo": null, "hi": 1.3}, "verdict": "in"}`, "estimate.lo"},
		{"key in another case", `{"Scores": {` + good + `}, "estimate": {"lo": 1.1, "hi": 1.3}, "verdict": "in"}`, "Scores"},
		{"nested key in another case", `{"scores": {` + good + `}, "estimate": {"Lo": 1.1, "hi": 1.3}, "verdict": "in"}`, "estimate.Lo"},
		{"duplicate key", `{"scores": {` + good + `}, "verdict": "in", "estimate": {"lo": 1.1, "hi": 1.3}, "verdict": "out"}`, "verdict"},
		{"duplicate criterion", `{"scores": {` + good + `, "risk": 9}, "estimate": {"lo": 1.1, "hi": 1.3}, "verdict": "in"}`, "scores.risk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.api("PUT", path, "oracle", c.body).wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, c.field)
		})
	}
	// Nothing was stored.
	if n, _, err := a.db.VisibleScorecards(t.Context(), a.users["oracle"], p.ID); err != nil || len(n) != 0 {
		t.Fatalf("refused scorecards stored: %v %v", n, err)
	}
	// The same card, well-formed, is taken.
	a.api("PUT", path, "oracle", `{"scores": {`+good+`}, "estimate": {"lo": 1.1, "hi": 1.3}, "verdict": "in"}`).wantStatus(t, http.StatusOK)

	// A null weight names its criterion.
	a.round(2)
	a.api("PUT", "/api/rounds/2/weights", "pragmatist", `{"speedup": 40, "feasibility": null, "risk": 20, "pitch_quality": 15}`).
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "weights.feasibility")
	a.api("PUT", "/api/rounds/2/weights", "pragmatist", `{"speedup": 40, "speedup": 25, "risk": 20, "pitch_quality": 15}`).
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "weights.speedup")
	// Criteria in a round: the index is named.
	a.api("POST", "/api/rounds", "admin", `{"number": 3, "title": "T", "criteria": [{"key": "a", "name": "A", "weight": 50}, {"key": "b", "name": "B", "weight": null}]}`).
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "criteria[1].weight")
}

func TestCheckStrictJSON(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type req struct {
		A  string         `json:"a"`
		P  *int           `json:"p"`
		In inner          `json:"in"`
		M  map[string]int `json:"m"`
		L  []inner        `json:"l"`
		X  any            `json:"x"`
	}
	for _, c := range []struct {
		body, field string // field "" means accepted
	}{
		{`{"a": "x", "p": null, "m": null, "l": null, "x": null}`, ""},
		{`{"x": {"k": 1, "K": 2}}`, ""},
		{`{"x": {"k": 1, "k": 2}}`, "x.k"},
		{`{"a": null}`, "a"},
		{`{"in": {"n": null}}`, "in.n"},
		{`{"m": {"q": null}}`, "m.q"},
		{`{"l": [{"n": 1}, {"N": 1}]}`, "l[1].N"},
		{`{"A": "x"}`, "A"},
		{`{"a": "x"`, ""}, // malformed: encoding/json reports it
	} {
		err := checkStrictJSON([]byte(c.body), &req{})
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.body, err)
			}
			continue
		}
		if pitches.ErrorField(err) != c.field {
			t.Errorf("%s: %v (field %q), want the field %q named", c.body, err, pitches.ErrorField(err), c.field)
		}
	}
}

// A wrong type inside an array names the element, as docs/api.md promises
// ("criteria[1].weight"), on every round endpoint; nothing is stored.
func TestWrongTypeInArrayNamesIndex(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	criteria := func(second string) string {
		return `"criteria": [{"key": "a", "name": "A", "weight": 50}, {"key": "b", "name": "B", "weight": ` + second + `}]`
	}
	for _, weight := range []string{`35.5`, `"50"`, `true`, `{}`, `[50]`} {
		t.Run(weight, func(t *testing.T) {
			a.api("POST", "/api/rounds", "admin", `{"number": 2, "title": "T", `+criteria(weight)+`}`).
				wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "criteria[1].weight")
			a.api("PUT", "/api/rounds/1", "admin", `{"title": "T", `+criteria(weight)+`}`).
				wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "criteria[1].weight")
			a.api("PATCH", "/api/rounds/1", "admin", `{"title": "T", `+criteria(weight)+`}`).
				wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "criteria[1].weight")
		})
	}
	a.api("GET", "/api/rounds/2", "admin", nil).wantError(t, http.StatusNotFound, pitches.ENOTFOUND, "*")
	var r roundJSON
	a.api("GET", "/api/rounds/1", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &r)
	if r.Title != "Round title" || len(r.Criteria) != len(rubric) {
		t.Fatalf("a refused edit changed the round: %+v", r)
	}
}

// decodeJSON names the element of any array (nested, of scalars, of
// objects) where encoding/json found a wrong type, and says what was
// expected in a client's words.
func TestDecodeJSONTypeErrorPath(t *testing.T) {
	type leaf struct {
		N  int       `json:"n"`
		Xs []float64 `json:"xs"`
	}
	type req struct {
		N     int            `json:"n"`
		L     []leaf         `json:"l"`
		Grid  [][]int        `json:"grid"`
		M     map[string]int `json:"m"`
		In    leaf           `json:"in"`
		Texts []string       `json:"texts"`
	}
	for _, c := range []struct {
		body, field, msg string
	}{
		{`{"n": "1"}`, "n", "n must be an integer, not string"},
		{`{"l": [{"n": 1}, {"n": 1.5}]}`, "l[1].n", "l[1].n must be an integer, not number 1.5"},
		{`{"l": [{"n": 1}, {"xs": [1, 2, "3"]}]}`, "l[1].xs[2]", "l[1].xs[2] must be a number, not string"},
		{`{"l": [{"n": 1}, 7]}`, "l[1]", "l[1] must be an object, not number"},
		{`{"grid": [[1], [2, 3.5]]}`, "grid[1][1]", "grid[1][1] must be an integer, not number 3.5"},
		{`{"m": {"k": "x"}}`, "m.k", "m.k must be an integer, not string"},
		{`{"in": {"xs": [true]}}`, "in.xs[0]", "in.xs[0] must be a number, not bool"},
		{` {"texts": ["a", 1]}`, "texts[1]", "texts[1] must be a string, not number"},
		{`{"l": {"n": 1}}`, "l", "l must be an array, not object"},
	} {
		err := decodeJSON(strings.NewReader(c.body), &req{})
		if pitches.ErrorField(err) != c.field || pitches.ErrorMessage(err) != c.msg {
			t.Errorf("%s: field %q, message %q; want %q, %q", c.body, pitches.ErrorField(err), pitches.ErrorMessage(err), c.field, c.msg)
		}
	}
}
