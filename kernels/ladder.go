package kernels

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
)

// ladderJSON is kernels/ladder.json: the ladder's rungs on the group GEMM
// with the gain predicted before the device run and the one measured
// (docs/VARIANTS.md), which the demo files as the team's own pitches.
//
//go:embed ladder.json
var ladderJSON []byte

// LadderRung is one entry of ladder.json. Measured is nil where no paired
// measurement exists yet.
type LadderRung struct {
	Variant   string `json:"variant"` // a group-GEMM variant spec, canonical
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
// error) and checks that every rung names a variant of the group GEMM.
func Ladder() ([]LadderRung, error) {
	var rungs []LadderRung
	dec := json.NewDecoder(bytes.NewReader(ladderJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rungs); err != nil {
		return nil, fmt.Errorf("kernels: parse ladder.json: %w", err)
	}
	g, err := LookupProblem("nvfp4_group_gemm")
	if err != nil {
		return nil, err
	}
	for i, r := range rungs {
		if _, err := g.ResolveVariant(r.Variant); err != nil {
			return nil, fmt.Errorf("kernels: ladder.json rung %d: %w", i, err)
		}
		if !(r.Predicted.Lo > 0 && r.Predicted.Lo <= r.Predicted.Hi) {
			return nil, fmt.Errorf("kernels: ladder.json rung %d (%s): predicted range %v..%v", i, r.Variant, r.Predicted.Lo, r.Predicted.Hi)
		}
	}
	return rungs, nil
}
