package httpserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// The calibration page lists each predictor's latest predictions, not all
// of them; the drill-down (?who=ID) lists every one.
func TestCalibrationDrillDown(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	const n = 12
	var ps []*pitches.Pitch
	for i := range n {
		ps = append(ps, a.pitch("alice", 1, fmt.Sprintf("Idea number %02d", i)))
	}
	for _, p := range ps {
		importAt(t, a, p, 120, 100, nil)
	}
	a.status(1, pitches.RoundJudging)
	a.status(1, pitches.RoundClosed)

	b := a.browser().login("vera")
	cal := b.get("/calibration").wantStatus(t, http.StatusOK).body
	alice := strconv.FormatInt(a.users["alice"].ID, 10)
	wantContains(t, cal, fmt.Sprintf("the latest %d of %d predictions", 10, n), `href="/calibration?who=`+alice+`"`,
		"Idea number 11", "Idea number 02")
	wantNotContains(t, cal, "Idea number 01 (round", "Idea number 00 (round")

	all := b.get("/calibration?who="+alice).wantStatus(t, http.StatusOK).body
	for i := range n {
		wantContains(t, all, fmt.Sprintf("Idea number %02d (round 1)", i))
	}
	if strings.Index(all, "Idea number 11") > strings.Index(all, "Idea number 00") {
		t.Error("the drill-down does not list the latest prediction first")
	}
	b.get("/calibration?who=x").wantStatus(t, http.StatusUnprocessableEntity)
	b.get("/calibration?who=999999").wantStatus(t, http.StatusNotFound)
}
