package jsonpath

import (
	"encoding/json"
	"errors"
	"testing"
)

// Field names the element encoding/json found a wrong type in, at any
// depth, in arrays of objects, of scalars and of arrays, and in maps.
func TestField(t *testing.T) {
	type leaf struct {
		N  int       `json:"n"`
		Xs []float64 `json:"xs"`
	}
	type doc struct {
		N    int            `json:"n"`
		L    []leaf         `json:"l"`
		Grid [][]int        `json:"grid"`
		M    map[string]int `json:"m"`
		Ms   []map[string]leaf
	}
	for _, c := range []struct{ body, want string }{
		{`{"n": "1"}`, "n"},
		{`  {"n": 1.5}`, "n"},
		{`{"l": [{"n": 1}, {"n": 35.5}]}`, "l[1].n"},
		{`{"l": [{"n": 1}, {"n": "x"}]}`, "l[1].n"},
		{`{"l": [{"n": 1}, {"n": {"a": 1}}]}`, "l[1].n"},
		{`{"l": [{"n": 1}, {"n": [1]}]}`, "l[1].n"},
		{`{"l": [{"n": 1}, {"xs": [1, "x"]}]}`, "l[1].xs[1]"},
		{`{"l": [{"n": 1}, 5]}`, "l[1]"},
		{`{"l": {"n": 1}}`, "l"},
		{`{"grid": [[1], [2, "x"]]}`, "grid[1][1]"},
		{`{"m": {"a": 1, "b": true}}`, "m.b"},
		{`{"Ms": [{}, {"k": {"xs": [null, 1, "2"]}}]}`, "Ms[1].k.xs[2]"},
		{`[1]`, ""},
	} {
		var ute *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(c.body), &doc{}); !errors.As(err, &ute) {
			t.Fatalf("%s: %v, want a type error", c.body, err)
		}
		if got := Field([]byte(c.body), ute); got != c.want {
			t.Errorf("%s: Field = %q (encoding/json: %q at %d), want %q", c.body, got, ute.Field, ute.Offset, c.want)
		}
	}
}

// Where the offset names no value, or a value that is not under the
// field encoding/json named, Field keeps encoding/json's name.
func TestFieldFallsBack(t *testing.T) {
	data := []byte(`{"a": [1, 2], "b": [3, 4]}`)
	for _, c := range []struct {
		te   json.UnmarshalTypeError
		want string
	}{
		{json.UnmarshalTypeError{Field: "a", Offset: 8}, "a[0]"},
		{json.UnmarshalTypeError{Field: "a", Offset: 21}, "a"},  // b[0] ends there: not under a
		{json.UnmarshalTypeError{Field: "a", Offset: 9}, "a"},   // between values
		{json.UnmarshalTypeError{Field: "a", Offset: 500}, "a"}, // past the end
		{json.UnmarshalTypeError{Field: "a", Offset: -1}, "a"},
	} {
		if got := Field(data, &c.te); got != c.want {
			t.Errorf("offset %d: Field = %q, want %q", c.te.Offset, got, c.want)
		}
	}
	if _, ok := At([]byte(`{"a": [1, `), 100); ok {
		t.Errorf("At found a value in a document cut short")
	}
}
