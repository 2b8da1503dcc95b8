// Package jsonpath names where in a JSON document encoding/json found a
// value of the wrong type, the way the API's errors name fields:
// "criteria[1].weight", "shapes[0].variant_us", "m.key".
//
// encoding/json's UnmarshalTypeError.Field leaves out array indexes and map
// keys ("criteria.weight"), which is no help in a list of ten criteria. Its
// Offset is exact, though: it is where the value ends (a string, number,
// true, false) or where it opens (just after the '{' or '['). So the
// document is walked again, token by token, to the value at that offset.
package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Field returns the path of te's value in data, the document that was
// decoded from its first byte: te.Field with array indexes and map keys.
// Where no value is found at te.Offset, or the one found is not under
// te.Field (an error that came from somewhere else), it returns te.Field as
// it is: a path with fewer details, never a wrong one.
func Field(data []byte, te *json.UnmarshalTypeError) string {
	path, ok := At(data, te.Offset)
	if !ok || !under(path, te.Field) {
		return te.Field
	}
	return path
}

// At returns the path of the value in data whose first token ends at
// offset, as UnmarshalTypeError.Offset counts: "" is the whole document.
// ok is false when no value ends there (or data is not JSON up to there).
func At(data []byte, offset int64) (path string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec, offset: offset}
	if err := w.value(""); errors.Is(err, errFound) {
		return w.found, true
	}
	return "", false
}

// Containing returns the path of the value in data whose text holds the
// byte at offset, such as the string an invalid UTF-8 byte was found in
// (encoding/json turns it into U+FFFD without a word, so the caller finds
// the byte and asks here which field it belongs to). ok is false when the
// byte is in no value (an object key, or between tokens) or data is not
// JSON up to there.
func Containing(data []byte, offset int64) (path string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec, offset: offset, containing: true}
	if err := w.value(""); errors.Is(err, errFound) {
		return w.found, true
	}
	return "", false
}

var (
	errFound  = errors.New("found")
	errPassed = errors.New("passed the offset")
)

type walker struct {
	dec    *json.Decoder
	offset int64
	found  string
	// containing looks for the value whose text holds the byte at
	// offset (Containing), not the one that ends there (At).
	containing bool
}

// value reads one value at path; errFound stops the walk when it is the
// one at w.offset, errPassed when the walk went past it.
func (w *walker) value(path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	d, isDelim := tok.(json.Delim)
	switch end := w.dec.InputOffset(); {
	case w.containing && end > w.offset && !isDelim:
		// The first scalar that ends past the byte holds it: offsets
		// only grow, and the tokens before it ended before the byte.
		w.found = path
		return errFound
	case w.containing:
		if end > w.offset {
			return errPassed // a brace or bracket holds no text
		}
	case end == w.offset:
		w.found = path
		return errFound
	case end > w.offset:
		// Offsets only grow: no later value can end there.
		return errPassed
	}
	if !isDelim {
		return nil
	}
	for i := 0; w.dec.More(); i++ {
		var p string
		if d == '[' {
			p = path + "[" + strconv.Itoa(i) + "]"
		} else {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, ok := tok.(string)
			if !ok {
				return errors.New("object key is not a string")
			}
			if w.containing && w.dec.InputOffset() > w.offset {
				return errPassed // the byte is in a key, no value's text
			}
			p = join(path, key)
		}
		if err := w.value(p); err != nil {
			return err
		}
	}
	_, err = w.dec.Token() // the closing '}' or ']'
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var indexes = regexp.MustCompile(`\[[0-9]+\]`)

// under reports whether path agrees with field, encoding/json's name for
// it, which has the struct fields on the way and leaves out indexes and map
// keys: field's names come in path in order ("l.xs" in "l[1].k.xs[2]"),
// the first of them first.
func under(path, field string) bool {
	if field == "" {
		return true
	}
	want := strings.Split(field, ".")
	got := strings.Split(indexes.ReplaceAllString(path, ""), ".")
	if got[0] != want[0] {
		return false
	}
	i := 0
	for _, name := range got {
		if i < len(want) && name == want[i] {
			i++
		}
	}
	return i == len(want)
}

// Want says what a value of type t is to a JSON client: "an integer", "a
// number", "a string", "an object", ...
func Want(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a " + t.Kind().String()
}

// InvalidUTF8 returns the offset of the first byte of data that is not
// valid UTF-8, or -1 when there is none.
func InvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// UTF8Field names the field that holds data's first invalid UTF-8 byte, or
// whole when no value holds it; at is the byte's offset, -1 when data is
// valid UTF-8.
func UTF8Field(data []byte, whole string) (field string, at int) {
	at = InvalidUTF8(data)
	if at < 0 {
		return "", -1
	}
	if path, ok := Containing(data, int64(at)); ok && path != "" {
		return path, at
	}
	return whole, at
}
