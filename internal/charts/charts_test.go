package charts

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// wellFormed parses s as XML: an inline SVG that does not parse breaks the page.
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v\n%s", err, s)
		}
	}
}

func TestChartsAreWellFormedAndEscapeLabels(t *testing.T) {
	label := `<script>alert("x")</script> & g=8`
	for name, svg := range map[string]string{
		"bars":        SpeedupBars([]Bar{{Label: label, Value: 0.764}, {Label: "b", Value: 1.2, Lo: 1.1, Hi: 1.3}}),
		"history":     History([]Point{{Label: label, Value: 0.7355}, {Label: "2", Value: 1.01, Lo: 0.99, Hi: 1.02}}),
		"predictions": Predictions([]Prediction{{Label: label, Lo: 1.5, Hi: 1.8}, {Label: "shark", Lo: 1, Hi: 1.2}}, 0.7355),
		"calibration": Calibration([]ScatterPoint{{Label: label, Lo: 1.5, Hi: 1.8, Measured: 0.7355}, {Label: "x", Lo: 0.7, Hi: 0.8, Measured: 0.75, Hit: true}}),
	} {
		if !strings.HasPrefix(svg, "<svg") {
			t.Errorf("%s: %q", name, svg)
		}
		if strings.Contains(svg, "<script") {
			t.Errorf("%s: label not escaped", name)
		}
		wellFormed(t, svg)
	}
	if SpeedupBars(nil) != "" || Predictions(nil, 1) != "" || Predictions([]Prediction{{Lo: 1, Hi: 2}}, 0) != "" {
		t.Error("empty input should draw nothing")
	}
}

// The measured line sits left of 1.0 for a slowdown, and the y = x line
// runs from bottom left to top right.
func TestPredictionGeometry(t *testing.T) {
	svg := Predictions([]Prediction{{Label: "claim", Lo: 1.5, Hi: 1.8}}, 0.7355)
	if !strings.Contains(svg, "measured 0.74x") {
		t.Errorf("measured label missing: %s", svg)
	}
	if !strings.Contains(Calibration([]ScatterPoint{{Lo: 1, Hi: 2, Measured: 1.5}}), `class="diag"`) {
		t.Error("no y = x line")
	}
}
