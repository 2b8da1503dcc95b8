package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// checkStrictJSON enforces what docs/api.md promises and encoding/json does
// not: object keys match field names exactly (encoding/json folds case, so
// "Title" would fill title), no key appears twice in an object (encoding/json
// keeps the last), and null is refused where a value is required
// (encoding/json leaves the zero value, so a null score would be stored as
// 0). It walks the body's tokens alongside dst's type; the first problem
// comes back naming the field ("claim.lo", "criteria[1].weight").
func checkStrictJSON(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	t := reflect.TypeOf(dst)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	err := strictValue(dec, t, "")
	if err == nil || errors.Is(err, errSyntax) {
		// Malformed JSON is encoding/json's to report, with its offset.
		return nil
	}
	return err
}

var (
	errSyntax      = errors.New("syntax")
	rawMessageType = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerT   = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// strictValue reads one value. t is the Go type it lands in; nil means
// "anything" (inside a RawMessage, an interface or a custom unmarshaler),
// where only duplicate keys are checked.
func strictValue(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return errSyntax
	}
	nullable := t == nil
	for t != nil && t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	if t != nil {
		switch {
		case t == rawMessageType:
			// Kept raw for a later typed decode (scores, notes, weights),
			// which treats null as "no value": refused here.
			t = nil
		case t.Kind() == reflect.Interface, reflect.PointerTo(t).Implements(unmarshalerT):
			t, nullable = nil, true
		case t.Kind() == reflect.Map, t.Kind() == reflect.Slice:
			nullable = true
		}
	}
	switch v := tok.(type) {
	case nil:
		if !nullable {
			return pitches.Errorf(pitches.EBADREQUEST, path, "%s must not be null", orBody(path))
		}
		return nil
	case json.Delim:
		switch v {
		case '{':
			return strictObject(dec, t, path)
		case '[':
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for i := 0; dec.More(); i++ {
				if err := strictValue(dec, elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return errSyntax
			}
		}
	}
	return nil
}

func orBody(path string) string {
	if path == "" {
		return "the request body"
	}
	return path
}

func strictObject(dec *json.Decoder, t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errSyntax
		}
		key, ok := tok.(string)
		if !ok {
			return errSyntax
		}
		field := joinPath(path, key)
		if seen[key] {
			return pitches.Errorf(pitches.EBADREQUEST, field, "duplicate key %q", field)
		}
		seen[key] = true
		vt := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return pitches.Errorf(pitches.EBADREQUEST, field, "unknown field %q (keys are case-sensitive: did you mean %q?)", field, joinPath(path, name))
					}
				}
				return pitches.Errorf(pitches.EBADREQUEST, field, "unknown field %q", field)
			}
			vt = ft
		}
		if err := strictValue(dec, vt, field); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errSyntax
	}
	return nil
}

// jsonFields maps a struct's JSON names to field types, the way
// encoding/json names them (tag name, else the Go name; "-" skipped;
// embedded structs without a tag flattened).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// readBody reads a request body whole (the body cap applies), so that it can
// be checked strictly and then decoded.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, decodeError(err)
	}
	return b, nil
}
