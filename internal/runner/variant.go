package runner

import (
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// One kernel, one variant string: runs store a built-in kernel's variant
// in the catalogue's spelling (Submit, Import), and lookups by variant
// (List, the history, regression thresholds) look that spelling up, so
// that "baseline?stages=1" is "baseline" and "wgmma?stages=2&tile_n=128"
// is "wgmma?tile_n=128&stages=2" wherever runs are grouped.

// VariantSpelling is spec as runs of problem store it: the catalogue's
// spelling (Catalog.CanonicalVariant: defaults dropped, knobs in the
// kernel's order) where spec names a built-in kernel of problem with knobs
// it has; else spec trimmed. Free labels (imports of kernels measured
// elsewhere), submitted kernels (kernel:<hash>[?knobs], resolved against
// their own manifest, not the catalogue), specs with knobs the kernel does
// not have, and any spec of an unknown problem keep their spelling.
func VariantSpelling(cat Catalog, problem, spec string) string {
	spec = strings.TrimSpace(spec)
	if spec == "" || problem == "" {
		return spec
	}
	if _, _, ok := pitches.ParseKernelVariant(spec); ok {
		return spec
	}
	canon, err := cat.CanonicalVariant(problem, spec)
	if err != nil || canon == "" {
		return spec
	}
	return canon
}

// SameVariantOf reports whether a and b are one variant of problem: the
// same once each is in VariantSpelling, knob order ignored
// (pitches.SameVariant), so that a spelling stored before runs were
// spelled canonically (a default spelled out, knobs reordered) matches.
func SameVariantOf(cat Catalog, problem, a, b string) bool {
	return pitches.SameVariant(a, b) || pitches.SameVariant(VariantSpelling(cat, problem, a), VariantSpelling(cat, problem, b))
}

// CanonicalLookup is f looking up the catalogue's spelling of its variant
// (VariantSpelling) where f names a problem and its variant spells a
// built-in kernel of it otherwise, with the spelling given kept in
// VariantAsTyped so that rows stored in it are found too; else f.
func (f Filter) CanonicalLookup(cat Catalog) Filter {
	if f.Problem == "" || f.Variant == "" {
		return f
	}
	typed := strings.TrimSpace(f.Variant)
	canon := VariantSpelling(cat, f.Problem, typed)
	if canon == typed {
		return f
	}
	f.Variant, f.VariantAsTyped = canon, typed
	return f
}
