package kernels

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
)

// ladderJSON is kernels/ladder.json: the ladder's rungs with the gain
// predicted before the device run and the one measured (docs/VARIANTS.md),
// which the demo files as the team's own pitches.
//
//go:embed ladder.json
var ladderJSON []byte

// LadderProblemDefault is the problem of a rung that names none: the ladder
// began on the group GEMM, and its first rungs were written without a
// problem field.
const LadderProblemDefault = "nvfp4_group_gemm"

// LadderRung is one entry of ladder.json. Measured is nil where no paired
// measurement exists yet.
type LadderRung struct {
	Problem   string `json:"problem,omitempty"` // empty in the file means LadderProblemDefault; Ladder fills it in
	Variant   string `json:"variant"`           // a variant spec of Problem, canonical
	Title     string `json:"title"`
	Predicted struct {
		Lo float64 `json:"lo"`
		Hi float64 `json:"hi"`
	} `json:"predicted"` // speedup over baseline, geomean over the benchmarks
	Measured *float64 `json:"measured_geomean"`
	Device   string   `json:"device"`
	Date     string   `json:"date"` // YYYY-MM-DD
}

// Ladder parses the embedded ladder.json strictly (an unknown field is an
// error), fills in the default problem, and checks that every rung names a
// variant of its problem.
func Ladder() ([]LadderRung, error) {
	return parseLadder(ladderJSON)
}

func parseLadder(data []byte) ([]LadderRung, error) {
	var rungs []LadderRung
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rungs); err != nil {
		return nil, fmt.Errorf("kernels: parse ladder.json: %w", err)
	}
	for i := range rungs {
		r := &rungs[i]
		if r.Problem == "" {
			r.Problem = LadderProblemDefault
		}
		p, err := LookupProblem(r.Problem)
		if err != nil {
			return nil, fmt.Errorf("kernels: ladder.json rung %d: %w", i, err)
		}
		if _, err := p.ResolveVariant(r.Variant); err != nil {
			return nil, fmt.Errorf("kernels: ladder.json rung %d (%s): %w", i, r.Problem, err)
		}
		if !(r.Predicted.Lo > 0 && r.Predicted.Lo <= r.Predicted.Hi) {
			return nil, fmt.Errorf("kernels: ladder.json rung %d (%s): predicted range %v..%v", i, r.Variant, r.Predicted.Lo, r.Predicted.Hi)
		}
		if r.Measured != nil && !(*r.Measured > 0) {
			return nil, fmt.Errorf("kernels: ladder.json rung %d (%s): measured geomean %v must be > 0", i, r.Variant, *r.Measured)
		}
	}
	return rungs, nil
}
