package charts

import (
	"strings"
	"testing"
)

func TestGrouped(t *testing.T) {
	svg := Grouped([]string{"#1 <a>", "#2 b"}, []Group{
		{Label: "g=8", Bars: []Bar{{Value: 1.5, Lo: 1.4, Hi: 1.6}, {Value: 0.8}}},
		{Label: "g=4", Bars: []Bar{{Value: 2}, {}}},
	})
	if strings.Count(svg, `<rect class="series-0"`) != 3 || strings.Count(svg, `<rect class="series-1"`) != 2 {
		t.Errorf("bars and legend swatches per series:\n%s", svg)
	}
	if strings.Count(svg, `class="whisker"`) != 1 {
		t.Errorf("one interval, one whisker:\n%s", svg)
	}
	if strings.Contains(svg, "<a>") || !strings.Contains(svg, "#1 &lt;a&gt;") {
		t.Errorf("labels are escaped:\n%s", svg)
	}
	if Grouped(nil, nil) != "" || Grouped([]string{"x"}, nil) != "" {
		t.Error("nothing to draw should draw nothing")
	}
}

func TestTimelineMarksSourceChanges(t *testing.T) {
	pts := []TimelinePoint{
		{Point: Point{Label: "#1", Value: 1.2, Lo: 1.1, Hi: 1.3}},
		{Point: Point{Label: "#2", Value: 1.25}},
		{Point: Point{Label: "#3", Value: 1.6}, SourceChange: true},
		{Point: Point{Label: "#4", Value: 1.58}},
	}
	svg := Timeline("speedup of g=8", pts)
	if n := strings.Count(svg, "data-source-change"); n != 1 {
		t.Errorf("source-change markers: %d, want 1\n%s", n, svg)
	}
	if !strings.Contains(svg, "kernel source changed before #3") || strings.Count(svg, `<circle class="dot"`) != 4 {
		t.Errorf("marker or points missing:\n%s", svg)
	}
	// A change flagged on the first point has nothing before it to mark.
	if strings.Contains(Timeline("x", []TimelinePoint{{Point: Point{Label: "#1", Value: 1}, SourceChange: true}}), "data-source-change") {
		t.Error("the first point got a marker")
	}
	if Timeline("x", nil) != "" {
		t.Error("no points should draw nothing")
	}
}
