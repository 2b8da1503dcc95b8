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
// run's speedup over its own baseline.
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
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %.0f" width="100%%" xmlns="http://www.w3.org/2000/svg" data-compare-chart><title>Speedup per shape of each run over its baseline, with 95%% intervals; the dashed line is 1.0x</title>`, width, h)
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
	if len(points) == 0 {
		return ""
	}
	top := 1.2
	for _, p := range points {
		if ok(p.Value) {
			top = math.Max(top, math.Max(p.Value, p.Hi)*1.1)
		}
	}
	h := padT + barArea + padB
	plotW := float64(width - padL - padR)
	step := plotW / float64(len(points))
	y := func(v float64) float64 { return padT + barArea*(1-v/top) }
	x := func(i int) float64 { return padL + step*(float64(i)+0.5) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg" data-timeline><title>%s</title>`, width, h+18, esc(title))
	axisY(&sb, top, y)
	fmt.Fprintf(&sb, `<line class="one" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, width-padR, y(1), y(1))
	for i, p := range points {
		if p.SourceChange && i > 0 {
			mx := x(i) - step/2
			fmt.Fprintf(&sb, `<line class="source-change" x1="%.1f" x2="%.1f" y1="%d" y2="%d" data-source-change><title>kernel source changed before %s</title></line>`,
				mx, mx, padT, padT+barArea, esc(p.Label))
		}
	}
	var path strings.Builder
	for i, p := range points {
		if !ok(p.Value) {
			continue
		}
		if path.Len() == 0 {
			fmt.Fprintf(&path, "M%.1f %.1f", x(i), y(p.Value))
		} else {
			fmt.Fprintf(&path, "L%.1f %.1f", x(i), y(p.Value))
		}
	}
	if path.Len() > 0 {
		fmt.Fprintf(&sb, `<path class="line" d="%s"/>`, path.String())
	}
	for i, p := range points {
		if ok(p.Lo) && ok(p.Hi) {
			fmt.Fprintf(&sb, `<path class="whisker" d="M%.1f %.1fV%.1f"/>`, x(i), y(p.Lo), y(p.Hi))
		}
		if ok(p.Value) {
			fmt.Fprintf(&sb, `<circle class="dot" cx="%.1f" cy="%.1f" r="4"><title>%s: %sx%s</title></circle>`, x(i), y(p.Value), esc(p.Label), f(p.Value), intervalText(p.Lo, p.Hi))
		}
		fmt.Fprintf(&sb, `<text class="tick" x="%.1f" y="%d" text-anchor="end" transform="rotate(-30 %.1f %d)">%s</text>`,
			x(i), padT+barArea+14, x(i), padT+barArea+14, esc(short(p.Label, 18)))
	}
	legendY := float64(h + 10)
	fmt.Fprintf(&sb, `<line class="source-change" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="legend" x="%d" y="%.1f">kernel source changed</text>`,
		padL, padL+14, legendY-4, legendY-4, padL+18, legendY)
	sb.WriteString(`</svg>`)
	return sb.String()
}
