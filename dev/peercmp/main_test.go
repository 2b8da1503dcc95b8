package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/result"
)

// peerOf decodes a peer document as peer.py writes it (forms per shape).
func peerOf(t *testing.T, js string) *peerDoc {
	t.Helper()
	var p peerDoc
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// Shapes are matched by M list, N and K whatever their order; each ratio
// is the peer's median over ours; the geomean is over the matched shapes
// only, and a form missing on one of them has none; an untimed shape and
// one without a peer are left out and said so.
func TestCompare(t *testing.T) {
	peer := peerOf(t, `{"device": "H", "problems": {"nvfp4_group_gemm": {"shapes": [
		{"m": [2, 3], "n": 64, "k": 128, "forms": {"b": {"median_us": 30}, "c": {"median_us": 20}}},
		{"m": [1], "n": 64, "k": 128, "forms": {"b": {"median_us": 40}, "c": {"median_us": 10}}},
		{"m": [5], "n": 64, "k": 128, "forms": {"c": {"median_us": 99}}}]}}}`)
	timed := func(m []int, us float64) result.Shape {
		return result.Shape{M: m, N: 64, K: 128, Variant: &result.Measurement{Stats: result.Stats{MedianNs: us * 1e3}}}
	}
	doc := &result.Result{Problem: "nvfp4_group_gemm", Shapes: []result.Shape{
		timed([]int{1}, 20), timed([]int{2, 3}, 10), timed([]int{7}, 10), {M: []int{5}, N: 64, K: 128}}}
	doc.Variant.Spec = "wgmma"
	lines, skipped, err := compare(doc, peer)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0].Shape != key([]int{1}, 64, 128) || lines[1].Shape != key([]int{2, 3}, 64, 128) {
		t.Fatalf("lines %+v: want M 1, M 2,3 and the geomean", lines)
	}
	g := lines[2]
	if g.Shape != "geomean" || math.Abs(g.Ours-math.Sqrt(20*10)) > 1e-9 ||
		math.Abs(g.Peers["b"]-math.Sqrt(40*30)) > 1e-9 || math.Abs(g.Peers["c"]-math.Sqrt(10*20)) > 1e-9 {
		t.Errorf("geomean %+v", g)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], "no peer") || !strings.Contains(skipped[1], "not timed") {
		t.Errorf("skipped %q", skipped)
	}
	var out bytes.Buffer
	write(&out, doc, "H", lines, skipped)
	for _, want := range []string{"| M [1] N 64 K 128 | 20.00 | 40.00 | 2.000x | 10.00 | 0.500x |", "| geomean | **14.14** |", "left out: M [7]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// A form some matched shape lacks gets no geomean.
	doc.Shapes = []result.Shape{timed([]int{1}, 20), timed([]int{5}, 10)}
	lines, _, err = compare(doc, peer)
	if err != nil {
		t.Fatal(err)
	}
	if g := lines[len(lines)-1]; len(g.Peers) != 1 || g.Peers["c"] == 0 {
		t.Errorf("geomean peers %v: want (c) only", g.Peers)
	}
	// Another problem, or no timed shape with a peer, is an error.
	doc.Problem = "nvfp4_dual_gemm"
	if _, _, err := compare(doc, peer); err == nil {
		t.Error("a problem the peer document lacks passed")
	}
	doc.Problem = "nvfp4_group_gemm"
	doc.Shapes = []result.Shape{timed([]int{9}, 1)}
	if _, _, err := compare(doc, peer); err == nil {
		t.Error("no matched shape passed")
	}
}
