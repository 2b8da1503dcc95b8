package kernels

import "testing"

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
