package kernels

import (
	"math/rand"
	"net/url"
	"strings"
	"testing"
)

// Value reads the same value as the map of every knob (values), for every
// key of every valid wgmma and fused combination and for hand-made Custom
// strings, escaped and repeated keys included.
func TestKnobsValueMatchesValues(t *testing.T) {
	var ks []Knobs
	for _, p := range Problems() {
		for _, fam := range []string{"wgmma", "fused", "baseline"} {
			ks = append(ks, p.VariantCombinations(fam)...)
		}
	}
	ks = append(ks,
		Knobs{TileM: 128, Custom: "a=1&a=2&b=x%26y&tile_m=64"},
		Knobs{Custom: "c=%zz&d=ok&e;f=1&%67=g"},
	)
	keys := []string{"a", "b", "c", "d", "e", "g", "missing"}
	for _, ks := range wgmmaKnobSpace("nvfp4_group_gemm") {
		keys = append(keys, ks.Key)
	}
	for _, ks := range wgmmaKnobSpace("nvfp4_dual_gemm") {
		keys = append(keys, ks.Key)
	}
	for k := range (Knobs{}).fieldValues() {
		keys = append(keys, k)
	}
	for i, k := range ks {
		if i%7 != 0 && i < len(ks)-2 {
			continue // a sample of the combinations: every seventh, and the hand-made ones
		}
		m := k.values()
		for _, key := range keys {
			if got := k.Value(key); got != m[key] {
				t.Fatalf("%+v: Value(%q) = %q, values has %q", k, key, got, m[key])
			}
		}
	}
}

// plainValue agrees with url.ParseQuery's Get (and its "has") on random
// unescaped queries whose keys are prefixes, suffixes and repeats of each
// other, with empty values and pairs without '='.
func TestPlainValue(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	keys := []string{"a", "ab", "b", "ba", "tile", "tile_n", "n", "x_tile", "e"}
	vals := []string{"", "1", "a", "ab=c", "tile", "x"}
	for i := range 5000 {
		var pairs []string
		for range rng.Intn(6) {
			k := keys[rng.Intn(len(keys))]
			switch rng.Intn(4) {
			case 0:
				pairs = append(pairs, k)
			default:
				pairs = append(pairs, k+"="+vals[rng.Intn(len(vals))])
			}
		}
		q := strings.Join(pairs, "&")
		want, _ := url.ParseQuery(q)
		for _, k := range keys {
			got, ok := plainValue(q, k)
			if got != want.Get(k) || ok != want.Has(k) {
				t.Fatalf("case %d: plainValue(%q, %q) = %q, %v; ParseQuery has %q, %v", i, q, k, got, ok, want.Get(k), want.Has(k))
			}
		}
	}
}
