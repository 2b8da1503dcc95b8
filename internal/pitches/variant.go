package pitches

import (
	"cmp"
	"slices"
	"strings"
)

// One pitch per variant: the rule that stops a contestant re-rolling a
// measured result. A pitch's result pools every run of the pitch (a new run
// never replaces an earlier one), but two pitches naming the same variant
// each get a result of their own: file the variant twice, have both
// measured, withdraw the worse, and the standings rank only the better.
// So, within one round, a contestant's pitch may not name a variant
// (compared by VariantKey: knob order ignored) that
//
//   - another active pitch of theirs names (edit or withdraw that one
//     instead), or
//   - a withdrawn pitch of theirs names when a run of it has a result
//     (succeeded, incorrect or suspect: the runs that lock a pitch's claim
//     and variant). Its number was seen; a fresh pitch of the same variant
//     would be a second try at it. A pitch withdrawn before any result
//     leaves its variant free.
//
// The store checks this when a pitch is filed and when its variant changes
// (an edit, a kernel upload), in the transaction that writes it. An empty
// variant ("no variant yet") takes nothing. Another round is another
// measurement: a re-pitch into a later round may name the same variant.

// SameVariant reports whether a and b name the same variant: both non-empty
// with the same VariantKey, so knob order is ignored
// ("baseline?stages=3&tile_m=64" is "baseline?tile_m=64&stages=3").
func SameVariant(a, b string) bool {
	ka := VariantKey(a)
	return ka != "" && ka == VariantKey(b)
}

// VariantKey is spec in a form that two spellings of one variant share:
// trimmed, the name before "?", then its knobs sorted by key and value
// (repeated keys kept; "name?" is "name"). Without it a contestant could
// pitch "wgmma?tile_n=auto&stages=2" and "wgmma?stages=2&tile_n=auto", have
// one kernel measured twice and withdraw the worse. It knows no catalogue,
// so it holds for free labels and kernel:<hash>?knobs alike; a default
// spelled out ("baseline?stages=1") is still another key: the web layer
// stores a known kernel's variant in the catalogue's spelling, which drops
// defaults, before the rule compares keys.
func VariantKey(spec string) string {
	name, query, _ := strings.Cut(strings.TrimSpace(spec), "?")
	var knobs []string
	for _, kv := range strings.Split(query, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		knobs = append(knobs, k+"="+v)
	}
	if len(knobs) == 0 {
		return name
	}
	slices.SortFunc(knobs, func(a, b string) int {
		ka, va, _ := strings.Cut(a, "=")
		kb, vb, _ := strings.Cut(b, "=")
		return cmp.Or(strings.Compare(ka, kb), strings.Compare(va, vb))
	})
	return name + "?" + strings.Join(knobs, "&")
}

// VariantHolder is another pitch of the same contestant in the same round
// as the store sees it when a pitch takes a variant.
type VariantHolder struct {
	PitchID     int64
	RoundNumber int
	Status      PitchStatus
	Variant     string
	MeasuredRun int64 // the newest run of the pitch with a result; 0 when none
}

// CheckVariantFree returns nil when a pitch may take variant next to
// others (the contestant's other pitches of the round), else ECONFLICT on
// field "variant" naming the pitch that holds it: an active one first, as
// the one the contestant can do something about.
func CheckVariantFree(variant string, others []VariantHolder) error {
	for _, o := range others {
		if o.Status == PitchActive && SameVariant(variant, o.Variant) {
			return Errorf(ECONFLICT, "variant", "pitch %d already pitches this variant in round %d; edit or withdraw it instead", o.PitchID, o.RoundNumber)
		}
	}
	for _, o := range others {
		if o.Status != PitchActive && o.MeasuredRun != 0 && SameVariant(variant, o.Variant) {
			return Errorf(ECONFLICT, "variant", "pitch %d pitched this variant in round %d and was withdrawn after run #%d measured it; a new pitch of it would re-roll that result (re-pitch it in a later round instead)",
				o.PitchID, o.RoundNumber, o.MeasuredRun)
		}
	}
	return nil
}
