package charts

import (
	"fmt"
	"math"
	"strings"
)

// Group is one shape of a comparison: one bar per series (a run), in the
// order of the series. A bar with Value zero is drawn as "no figure".
type Group struct {
	Label string
	Bars  []Bar
}

// seriesClasses colour the series of a grouped chart, in turn.
var seriesClasses = []string{"series-0", "series-1", "series-2", "series-3", "series-4", "series-5"}

// SeriesClass is the CSS class of series i (the page's table uses the same
// colours for its column heads).
func SeriesClass(i int) string { return seriesClasses[i%len(seriesClasses)] }

// Grouped draws one group of bars per shape, one bar per series, on a linear
// axis from 0 with interval whiskers and the dashed 1.0x line, and a legend
// naming the series. Runs compared side by side use it: the bars are each
// run's time against a reference run's. A bar of value 0 is not drawn.
func Grouped(series []string, groups []Group) string {
	if len(groups) == 0 || len(series) == 0 {
		return ""
	}
	top := 1.2
	for _, g := range groups {
		for _, b := range g.Bars {
			if ok(b.Value) {
				top = math.Max(top, math.Max(b.Value, b.Hi)*1.1)
			}
		}
	}
	plotW := float64(width - padL - padR)
	slot := plotW / float64(len(groups))
	bw := slot * 0.8 / float64(len(series))
	const labelH, legendRow = 60.0, 18.0
	legendH := legendRow * float64((len(series)+2)/3)
	h := float64(padT+barArea) + labelH + legendH + 8
	y := func(v float64) float64 { return padT + barArea*(1-v/top) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %.0f" width="100%%" xmlns="http://www.w3.org/2000/svg" data-compare-chart><title>Time per shape of each run against the reference run (its time over the run's), with 95%% intervals; the dashed line is 1.0x, the reference</title>`, width, h)
	axisY(&sb, top, y)
	for gi, g := range groups {
		x0 := padL + slot*float64(gi) + slot*0.1
		for bi, b := range g.Bars {
			if bi >= len(series) {
				break
			}
			x := x0 + bw*float64(bi)
			if ok(b.Value) {
				fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s, %s: %sx%s</title></rect>`,
					SeriesClass(bi), x, y(b.Value), bw*0.9, y(0)-y(b.Value), esc(series[bi]), esc(g.Label), f(b.Value), intervalText(b.Lo, b.Hi))
			}
			if ok(b.Lo) && ok(b.Hi) {
				cx := x + bw*0.45
				fmt.Fprintf(&sb, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f"/>`,
					cx, y(b.Lo), y(b.Hi), cx-3, y(b.Lo), cx+3, cx-3, y(b.Hi), cx+3)
			}
		}
		cx, ty := x0+slot*0.4, padT+barArea+14
		fmt.Fprintf(&sb, `<text class="tick" x="%.1f" y="%d" text-anchor="start" transform="rotate(20 %.1f %d)">%s</text>`, cx, ty, cx, ty, esc(short(g.Label, 28)))
	}
	fmt.Fprintf(&sb, `<line class="one" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, width-padR, y(1), y(1))
	for i, name := range series {
		row, col := i/3, i%3
		ly := float64(padT+barArea) + labelH + legendRow*float64(row) + 12
		lx := float64(padL) + float64(col)*(plotW/3)
		fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="12" height="12" rx="2"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
			SeriesClass(i), lx, ly-10, lx+18, ly, esc(short(name, 30)))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// TimelinePoint is one run on a shape's history: its speedup with the
// interval, and whether the kernel source changed since the point before.
type TimelinePoint struct {
	Point
	SourceChange bool
}

// Timeline draws a shape's speedups run by run, oldest left, with interval
// whiskers, the 1.0x line, and a dashed vertical marker before each point
// whose kernel source differs from the previous one's.
func Timeline(title string, points []TimelinePoint) string {
	pts := make([]Point, len(points))
	changed := make([]bool, len(points))
	for i, p := range points {
		pts[i], changed[i] = p.Point, p.SourceChange
	}
	return runChart(title, " data-timeline", pts, changed)
}
