package sqlite

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// variantCond is the condition, with its arguments, that column col holds
// one of specs with its knobs in any order (pitches.SameVariant): the
// spec itself or, for a spec of two knobs or more, a value as long as it
// that starts with its name and "?" and holds each of its knobs between
// '&'s. So a lookup by a kernel's canonical spelling finds the rows stored
// before runs were stored in it, knobs in the order they were typed, and
// the runs_history index still serves the common exact match. Lengths are
// counted in characters, as SQLite's length and substr count them in
// text. Empty specs are ignored; none left: no condition ("").
func variantCond(col string, specs ...string) (string, []any) {
	var ors []string
	var args []any
	seen := map[string]bool{}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" || seen[spec] {
			continue
		}
		seen[spec] = true
		ors = append(ors, col+" = ?")
		args = append(args, spec)
		name, query, ok := strings.Cut(spec, "?")
		if !ok {
			continue
		}
		knobs := strings.Split(query, "&")
		sorted := slices.Sorted(slices.Values(knobs))
		// One knob has one order; an empty or repeated knob would let a
		// value of the same length match with another set of knobs.
		if len(knobs) < 2 || slices.Contains(knobs, "") || len(slices.Compact(sorted)) != len(knobs) {
			continue
		}
		prefix := name + "?"
		n := utf8.RuneCountInString(prefix)
		and := []string{"length(" + col + ") = ?", "substr(" + col + ", 1, ?) = ?"}
		args = append(args, utf8.RuneCountInString(spec), n, prefix)
		for _, k := range knobs {
			and = append(and, "instr('&' || substr("+col+", ?) || '&', ?) > 0")
			args = append(args, n+1, "&"+k+"&")
		}
		ors = append(ors, "("+strings.Join(and, " AND ")+")")
	}
	if len(ors) == 0 {
		return "", nil
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}
