package charts

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
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

// Red means a regression the interval establishes; noise inside its
// interval is neutral, and so is a value without an interval.
func TestSpeedupBarsColourByInterval(t *testing.T) {
	svg := SpeedupBars([]Bar{
		{Label: "A/A noise", Value: 0.995, Lo: 0.99, Hi: 1.004},
		{Label: "regression", Value: 0.74, Lo: 0.70, Hi: 0.78},
		{Label: "win", Value: 1.3, Lo: 1.2, Hi: 1.4},
		{Label: "no interval", Value: 0.8},
	})
	wellFormed(t, svg)
	for label, class := range map[string]string{"A/A noise": "bar-neutral", "regression": "bar-slower", "win": "bar-faster", "no interval": "bar-neutral"} {
		re := regexp.MustCompile(`<rect class="([a-z-]+)"[^>]*><title>` + regexp.QuoteMeta(label) + `:`)
		m := re.FindStringSubmatch(svg)
		if m == nil || m[1] != class {
			t.Errorf("%s drawn as %v, want %s", label, m, class)
		}
	}
	for _, want := range []string{"faster (interval above 1x)", "slower (interval below 1x)", "within noise or no interval", "95% interval"} {
		if !strings.Contains(svg, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
}

// Shape labels are written in full, level when they fit, slanted rightwards
// (never off the left edge) with room below when they do not.
func TestSpeedupBarsLabelsReadable(t *testing.T) {
	four := SpeedupBars([]Bar{{Label: "g=8 N=4096 K=7168", Value: 1}, {Label: "g=8 N=7168 K=2048", Value: 1}, {Label: "g=2 N=3072 K=4096", Value: 1}, {Label: "g=2 N=4096 K=1536", Value: 1}})
	if !strings.Contains(four, `text-anchor="middle">g=8 N=4096 K=7168</text>`) || strings.Contains(four, "…") {
		t.Fatalf("four shapes: labels not level and whole:\n%s", four)
	}
	var many []Bar
	for i := 0; i < 12; i++ {
		many = append(many, Bar{Label: "m=128 n=7168 k=16384 l=1 #" + strings.Repeat("x", i%3), Value: 1.1})
	}
	svg := SpeedupBars(many)
	if strings.Contains(svg, "…") || !strings.Contains(svg, `text-anchor="start" transform="rotate(30`) {
		t.Fatalf("twelve long labels: not whole or not slanted rightwards")
	}
	var w, h float64
	if _, err := fmt.Sscanf(svg[strings.Index(svg, `viewBox="`)+len(`viewBox="`):], "0 0 %g %g", &w, &h); err != nil {
		t.Fatal(err)
	}
	// Bars end at padT+barArea; the slanted labels need about half their
	// width below that, plus the legend.
	if need := float64(padT+barArea) + labelWidth(many[0].Label)*0.5; h < need {
		t.Fatalf("chart height %g leaves no room for slanted labels (need %g)", h, need)
	}
}

func TestRecapChart(t *testing.T) {
	svg := Recap([]RecapRow{
		{Label: "Pipeline Stages", Lo: 1.5, Hi: 1.8, Measured: 0.7355},
		{Label: "Tiles", Lo: 1.1, Hi: 1.3, Measured: 1.2},
		{Label: "Not run yet", Lo: 1.2, Hi: 1.4},
	})
	wellFormed(t, svg)
	for _, want := range []string{`class="range-miss"`, `class="range-hit"`, `class="range-open"`, "measured 0.74x", "claim held", "claim missed"} {
		if !strings.Contains(svg, want) {
			t.Errorf("recap chart lacks %q", want)
		}
	}
	if Recap([]RecapRow{{Label: "x", Lo: 1, Hi: 2}}) != "" {
		t.Errorf("a recap with nothing measured draws a chart")
	}
}
