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

// Containing names the value whose text holds a byte, at any depth; a byte
// in a key or between values is in no value. UTF8Field finds the first
// invalid UTF-8 byte with it.
func TestContaining(t *testing.T) {
	for _, c := range []struct {
		body string
		want string
		ok   bool
	}{
		{"{\"label\": \"ok\xffok\"}", "label", true},
		{"{\"a\": 1, \"l\": [{\"n\": 1}, {\"s\": \"x\xff\"}]}", "l[1].s", true},
		{"{\"grid\": [[\"a\"], [\"b\", \"\xc3\"]]}", "grid[1][1]", true},
		{"\"\xff\"", "", true},
		{"{\"k\xff\": 1}", "", false},
		{"{\"a\": 1} \xff", "", false},
	} {
		at := InvalidUTF8([]byte(c.body))
		if at < 0 {
			t.Fatalf("%q: no invalid byte found", c.body)
		}
		if got, ok := Containing([]byte(c.body), int64(at)); got != c.want || ok != c.ok {
			t.Errorf("%q: Containing(%d) = %q, %v; want %q, %v", c.body, at, got, ok, c.want, c.ok)
		}
	}
	if f, at := UTF8Field([]byte(`{"a": "ok"}`), "body"); at != -1 || f != "" {
		t.Errorf("valid UTF-8: %q at %d", f, at)
	}
	if f, _ := UTF8Field([]byte("{\"k\xff\": 1}"), "body"); f != "body" {
		t.Errorf("a key's invalid byte names %q, want the whole body", f)
	}
}
