package sqlite

import (
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// variantCond is the condition, with its arguments, that column col (the
// runs' variant_key, migration 155) holds the key of one of specs: the
// runs of those variants with their knobs in any order
// (pitches.VariantKey, as pitches.SameVariant compares). With the problem
// it is a search of the runs_variant_key index, not a scan of the
// problem's runs. Empty specs are ignored; none left: no condition ("").
func variantCond(col string, specs ...string) (string, []any) {
	var keys []any
	seen := map[string]bool{}
	for _, spec := range specs {
		k := pitches.VariantKey(spec)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "", nil
	}
	return col + " IN (?" + strings.Repeat(", ?", len(keys)-1) + ")", keys
}
