package httpserver

import (
	"slices"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/charts"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

// maxScatterPoints bounds a calibration scatter: past it, the latest
// predictions are drawn (issue 13: at 100x the demo the page weighed
// megabytes, most of it points and rows nobody reads at once).
const maxScatterPoints = 300

// latestPoints keeps the last maxScatterPoints points (the calibration
// lists predictions in round order, so the last are the latest).
func latestPoints(points []charts.ScatterPoint) []charts.ScatterPoint {
	if len(points) > maxScatterPoints {
		return points[len(points)-maxScatterPoints:]
	}
	return points
}

// boundCalibration makes the calibration page a summary per person with a
// drill-down: with who empty, each predictor's row keeps its latest
// templates.CalibrationShown predictions (the summary figures count them
// all); with who a predictor's id, only that predictor's rows remain, with
// every prediction, latest first.
func boundCalibration(v *templates.CalibrationView, who string) error {
	var id int64
	if who != "" {
		n, err := strconv.ParseInt(who, 10, 64)
		if err != nil || n < 1 {
			return pitches.Errorf(pitches.EINVALID, "who", "who must be a predictor's id, a positive whole number.")
		}
		id = n
	}
	found := false
	for gi := range v.Groups {
		g := &v.Groups[gi]
		if id != 0 {
			g.Rows = slices.DeleteFunc(g.Rows, func(r templates.CalRow) bool { return r.WhoID != id })
		}
		for ri := range g.Rows {
			r := &g.Rows[ri]
			ps := slices.Clone(r.Predictions)
			slices.Reverse(ps)
			if id == 0 && len(ps) > templates.CalibrationShown {
				ps = ps[:templates.CalibrationShown]
			}
			r.Predictions = ps
			if id != 0 {
				found = true
				v.Who = r.Name
			}
		}
	}
	if id != 0 && !found {
		return pitches.Errorf(pitches.ENOTFOUND, "who", "Predictor %d has no scored predictions you may see.", id)
	}
	return nil
}
