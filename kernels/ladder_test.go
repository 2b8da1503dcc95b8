package kernels

import (
	"strings"
	"testing"
)

// The embedded ladder names its problems: rungs written before the field
// existed default to the group GEMM, and the dual GEMM's rungs name their
// own problem and resolve there.
func TestLadderProblems(t *testing.T) {
	rungs, err := Ladder()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rungs {
		if r.Problem == "" {
			t.Errorf("%s: problem not filled in", r.Variant)
		}
		seen[r.Problem]++
		if r.Measured == nil {
			t.Errorf("%s %s: no measured geomean", r.Problem, r.Variant)
		}
	}
	if seen[LadderProblemDefault] < 8 || seen["nvfp4_dual_gemm"] < 1 {
		t.Errorf("rungs per problem %v, want >= 8 group and >= 1 dual", seen)
	}
}

// Bad ladder documents are refused with a message naming the rung and the
// cause.
func TestParseLadderRefuses(t *testing.T) {
	for doc, want := range map[string]string{
		`[{"variant":"fused","title":"t","predicted":{"lo":1,"hi":2},"measured_geomean":null,"device":"d","date":"2026-11-22","extra":1}]`:             `unknown field "extra"`,
		`[{"problem":"nvfp4_triple_gemm","variant":"fused","title":"t","predicted":{"lo":1,"hi":2},"device":"d","date":"2026-11-22"}]`:                 `unknown problem "nvfp4_triple_gemm"`,
		`[{"problem":"nvfp4_dual_gemm","variant":"baseline?launch=streams","title":"t","predicted":{"lo":1,"hi":2},"device":"d","date":"2026-11-22"}]`: `rung 0 (nvfp4_dual_gemm)`,
		`[{"variant":"fused","title":"t","predicted":{"lo":2,"hi":1},"device":"d","date":"2026-11-22"}]`:                                               `predicted range`,
		`[{"variant":"fused","title":"t","predicted":{"lo":1,"hi":2},"measured_geomean":0,"device":"d","date":"2026-11-22"}]`:                          `must be > 0`,
	} {
		_, err := parseLadder([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", doc, err, want)
		}
	}
	rungs, err := parseLadder([]byte(`[{"variant":"fused","title":"t","predicted":{"lo":1,"hi":2},"device":"d","date":"2026-11-22"}]`))
	if err != nil || len(rungs) != 1 || rungs[0].Problem != LadderProblemDefault {
		t.Errorf("default problem: %+v %v", rungs, err)
	}
}
