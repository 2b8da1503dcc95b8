// Package charts draws the app's small charts as inline SVG, server-side,
// so pages need no chart library and no script (the CSP allows none inline).
// Every function returns a complete <svg> element as a string; text in it is
// escaped here, so callers may embed it raw.
package charts

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Bar is one per-shape speedup with its 95% interval (Lo, Hi zero when
// unknown).
type Bar struct {
	Label         string
	Value, Lo, Hi float64
}

// Point is one run in a history: its speedup and interval.
type Point struct {
	Label         string // e.g. "#12 2026-11-21"
	Value, Lo, Hi float64
}

// Prediction is one speedup range drawn against a measured value.
type Prediction struct {
	Label  string // "claim (Contestant 1)", "The Pragmatic Engineer"
	Lo, Hi float64
	Hit    bool
}

// ScatterPoint is one prediction for the calibration plot: its range, the
// measured value and a label for the tooltip.
type ScatterPoint struct {
	Label            string
	Lo, Hi, Measured float64
	Hit              bool
}

const (
	width   = 640
	padL    = 56
	padR    = 16
	padT    = 16
	padB    = 64
	rowH    = 26
	barArea = 200
)

func esc(s string) string { return html.EscapeString(s) }

func f(x float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}

func ok(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// Verdict is what a speedup's 95% interval says against 1.0x.
type Verdict string

const (
	Faster  Verdict = "faster"  // the whole interval is above 1
	Slower  Verdict = "slower"  // the whole interval is below 1: a regression
	Neutral Verdict = "neutral" // the interval contains 1 (noise), or there is none
)

// VerdictOf reads a speedup's interval: a bar is a regression only when its
// interval excludes 1 from below. A same-kernel A/A run at 0.995x with an
// interval of [0.99, 1.00] is noise, not a regression; a value without an
// interval says nothing either way.
func VerdictOf(lo, hi float64) Verdict {
	switch {
	case !ok(lo) || !ok(hi):
		return Neutral
	case hi < 1:
		return Slower
	case lo > 1:
		return Faster
	}
	return Neutral
}

// labelWidth estimates a label's width in px at the charts' 11px font.
func labelWidth(s string) float64 { return 6.2 * float64(len([]rune(s))) }

// legend draws one row of swatches with their meaning at y.
func legend(sb *strings.Builder, y float64, items [][2]string) {
	x := float64(padL)
	for _, it := range items {
		cls, text := it[0], it[1]
		switch cls {
		case "one", "measured", "diag":
			fmt.Fprintf(sb, `<line class="%s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, cls, x, x+14, y-4, y-4)
		case "whisker":
			fmt.Fprintf(sb, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f"/>`, x+7, y-10, y+2, x+3, y-10, x+11, x+3, y+2, x+11)
		default:
			fmt.Fprintf(sb, `<rect class="%s" x="%.1f" y="%.1f" width="12" height="12" rx="2"/>`, cls, x, y-10)
		}
		fmt.Fprintf(sb, `<text class="legend" x="%.1f" y="%.1f">%s</text>`, x+18, y, esc(text))
		x += 18 + labelWidth(text) + 16
	}
}

// SpeedupBars draws one bar per shape on a linear axis from 0, whiskers for
// the intervals and a dashed line at 1.0 (no change), with a legend. The
// colour is the interval's verdict (VerdictOf): red only for a regression
// the interval establishes. Shape labels are written out in full: level
// under their bar when they fit, slanted with room below when they do not.
func SpeedupBars(bars []Bar) string {
	if len(bars) == 0 {
		return ""
	}
	top := 1.2
	longest := 0.0
	for _, b := range bars {
		top = math.Max(top, math.Max(b.Value, b.Hi)*1.1)
		longest = math.Max(longest, labelWidth(b.Label))
	}
	plotW := float64(width - padL - padR)
	slot := plotW / float64(len(bars))
	level := longest <= slot-6
	labelH := 22.0
	if !level {
		labelH = longest*0.5 + 16 // sin 30° of the text, and its height
	}
	const legendH = 24.0
	h := float64(padT+barArea) + labelH + legendH
	y := func(v float64) float64 { return padT + barArea*(1-v/top) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %.0f" width="100%%" xmlns="http://www.w3.org/2000/svg"><title>Speedup per shape with 95%% intervals; the dashed line is 1.0x</title>`, width, h)
	axisY(&sb, top, y)
	for i, b := range bars {
		x0 := padL + slot*float64(i) + slot*0.2
		bw := slot * 0.6
		cls := "bar-" + string(VerdictOf(b.Lo, b.Hi))
		if ok(b.Value) {
			fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %sx%s</title></rect>`,
				cls, x0, y(b.Value), bw, y(0)-y(b.Value), esc(b.Label), f(b.Value), intervalText(b.Lo, b.Hi))
		}
		if ok(b.Lo) && ok(b.Hi) {
			cx := x0 + bw/2
			fmt.Fprintf(&sb, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f"/>`,
				cx, y(b.Lo), y(b.Hi), cx-5, y(b.Lo), cx+5, cx-5, y(b.Hi), cx+5)
		}
		cx, ty := x0+bw/2, padT+barArea+14
		if level {
			fmt.Fprintf(&sb, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, cx, ty, esc(b.Label))
		} else {
			// Slanted to the right from under the bar, so the first
			// label never runs off the left edge.
			fmt.Fprintf(&sb, `<text class="tick" x="%.1f" y="%d" text-anchor="start" transform="rotate(30 %.1f %d)">%s</text>`, cx, ty, cx, ty, esc(b.Label))
		}
	}
	fmt.Fprintf(&sb, `<line class="one" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, width-padR, y(1), y(1))
	legend(&sb, h-8, [][2]string{{"bar-faster", "faster (interval above 1x)"}, {"bar-slower", "slower (interval below 1x)"},
		{"bar-neutral", "within noise or no interval"}, {"whisker", "95% interval"}})
	sb.WriteString(`</svg>`)
	return sb.String()
}

func intervalText(lo, hi float64) string {
	if !ok(lo) || !ok(hi) {
		return " (no interval)"
	}
	return " (95% interval " + f(lo) + "-" + f(hi) + "x)"
}

// History draws a variant's geomean speedups over time, oldest left, with
// interval whiskers and the 1.0 line.
func History(points []Point) string {
	return runChart("Geomean speedup of this variant on this device, run by run", "", points, nil)
}

// runChart draws speedups run by run, oldest left: interval whiskers, the
// 1.0x line, and where changed[i] (changed may be nil) a dashed marker
// before point i, explained in a legend. attr is added to the svg element.
func runChart(title, attr string, points []Point, changed []bool) string {
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
	if changed != nil {
		h += 18 // the legend
	}
	plotW := float64(width - padL - padR)
	step := plotW / float64(len(points))
	y := func(v float64) float64 { return padT + barArea*(1-v/top) }
	x := func(i int) float64 { return padL + step*(float64(i)+0.5) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg"%s><title>%s</title>`, width, h, attr, esc(title))
	axisY(&sb, top, y)
	fmt.Fprintf(&sb, `<line class="one" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, width-padR, y(1), y(1))
	for i, p := range points {
		if i > 0 && i < len(changed) && changed[i] {
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
	if changed != nil {
		legendY := float64(padT + barArea + padB + 10)
		fmt.Fprintf(&sb, `<line class="source-change" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="legend" x="%d" y="%.1f">kernel source changed</text>`,
			padL, padL+14, legendY-4, legendY-4, padL+18, legendY)
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// axisY draws horizontal grid lines with labels on a linear axis from 0 to top.
func axisY(sb *strings.Builder, top float64, y func(float64) float64) {
	stepV := niceStep(top / 4)
	for v := 0.0; v <= top+1e-9; v += stepV {
		fmt.Fprintf(sb, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%sx</text>`,
			padL, width-padR, y(v), y(v), padL-6, y(v)+4, f(v))
	}
}

func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// logRange returns a log-axis domain covering the values with some margin.
func logRange(vals []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if ok(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return 0.5, 2
	}
	lo, hi = math.Min(lo, 1)/1.25, math.Max(hi, 1)*1.25
	return lo, hi
}

// logTicks are the usual speedup ticks inside [lo, hi].
func logTicks(lo, hi float64) []float64 {
	var out []float64
	for _, t := range []float64{0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 5, 10, 20} {
		if t >= lo && t <= hi {
			out = append(out, t)
		}
	}
	return out
}

// Predictions draws each prediction's range as a horizontal band on a log
// axis and the measured speedup as a vertical line: hits in one colour,
// misses in another.
func Predictions(preds []Prediction, measured float64) string {
	if len(preds) == 0 || !ok(measured) {
		return ""
	}
	vals := []float64{measured}
	for _, p := range preds {
		vals = append(vals, p.Lo, p.Hi)
	}
	lo, hi := logRange(vals)
	labelW := 200.0
	plotL, plotR := labelW, float64(width-padR)
	x := func(v float64) float64 {
		return plotL + (plotR-plotL)*(math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo))
	}
	h := padT + rowH*len(preds) + 36 + 24
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg"><title>Predicted ranges (log axis) against the measured speedup %sx</title>`, width, h, f(measured))
	legend(&sb, float64(h-6), [][2]string{{"range-hit", "range holds the result"}, {"range-miss", "range misses it"}, {"measured", "measured"}, {"one", "1.0x"}})
	bottom := float64(padT + rowH*len(preds))
	for _, t := range logTicks(lo, hi) {
		fmt.Fprintf(&sb, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%sx</text>`,
			x(t), x(t), padT, bottom, x(t), bottom+14, f(t))
	}
	for i, p := range preds {
		cy := float64(padT + rowH*i + rowH/2)
		cls := "range-miss"
		if p.Hit {
			cls = "range-hit"
		}
		fmt.Fprintf(&sb, `<text class="label" x="%.1f" y="%.1f" text-anchor="end">%s<title>%s</title></text>`, plotL-8, cy+4, esc(short(p.Label, 30)), esc(p.Label))
		if ok(p.Lo) && ok(p.Hi) {
			w := math.Max(x(p.Hi)-x(p.Lo), 3)
			fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="10" rx="3"><title>%s: %s-%sx</title></rect>`,
				cls, x(p.Lo)-(w-(x(p.Hi)-x(p.Lo)))/2, cy-5, w, esc(p.Label), f(p.Lo), f(p.Hi))
		}
	}
	fmt.Fprintf(&sb, `<line class="measured" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/><text class="measured-label" x="%.1f" y="%.1f" text-anchor="middle">measured %sx</text>`,
		x(measured), x(measured), padT-4, bottom, x(measured), bottom+30, f(measured))
	fmt.Fprintf(&sb, `<line class="one" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/>`, x(1), x(1), padT, bottom)
	sb.WriteString(`</svg>`)
	return sb.String()
}

// Calibration draws a log-log scatter of predicted midpoint (x, with the
// range as a horizontal error bar) against measured speedup (y), with the
// y = x line: points right of the line were optimistic.
func Calibration(points []ScatterPoint) string {
	if len(points) == 0 {
		return ""
	}
	var vals []float64
	for _, p := range points {
		vals = append(vals, p.Lo, p.Hi, p.Measured)
	}
	lo, hi := logRange(vals)
	const size = 480
	pl, pt := 64.0, 16.0
	plot := float64(size) - pl - 64
	sx := func(v float64) float64 { return pl + plot*(math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo)) }
	sy := func(v float64) float64 { return pt + plot*(1-(math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo))) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart scatter" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg"><title>Predicted midpoint against measured speedup, log-log, with the y = x line</title>`, size, size)
	for _, t := range logTicks(lo, hi) {
		fmt.Fprintf(&sb, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%sx</text>`,
			sx(t), sx(t), pt, pt+plot, sx(t), pt+plot+14, f(t))
		fmt.Fprintf(&sb, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="end">%sx</text>`,
			pl, pl+plot, sy(t), sy(t), pl-4, sy(t)+4, f(t))
	}
	fmt.Fprintf(&sb, `<line class="diag" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, sx(lo), sy(lo), sx(hi), sy(hi))
	fmt.Fprintf(&sb, `<text class="axis-label" x="%.1f" y="%.1f" text-anchor="middle">predicted (midpoint, range)</text>`, pl+plot/2, pt+plot+32)
	calLegend(&sb, float64(size-8), pl)
	fmt.Fprintf(&sb, `<text class="axis-label" x="12" y="%.1f" text-anchor="middle" transform="rotate(-90 12 %.1f)">measured</text>`, pt+plot/2, pt+plot/2)
	for _, p := range points {
		if !ok(p.Lo) || !ok(p.Hi) || !ok(p.Measured) {
			continue
		}
		mid := math.Sqrt(p.Lo * p.Hi)
		cls := "dot-miss"
		if p.Hit {
			cls = "dot-hit"
		}
		fmt.Fprintf(&sb, `<path class="whisker" d="M%.1f %.1fH%.1f"/>`, sx(p.Lo), sy(p.Measured), sx(p.Hi))
		fmt.Fprintf(&sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="4"><title>%s: predicted %s-%sx, measured %sx</title></circle>`,
			cls, sx(mid), sy(p.Measured), esc(p.Label), f(p.Lo), f(p.Hi), f(p.Measured))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// calLegend is the calibration scatter's legend, from x = left.
func calLegend(sb *strings.Builder, y, left float64) {
	x := left
	for _, it := range [][2]string{{"dot-hit", "hit"}, {"dot-miss", "miss"}, {"diag", "predicted = measured"}} {
		if it[0] == "diag" {
			fmt.Fprintf(sb, `<line class="diag" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x+14, y-4, y-4)
		} else {
			fmt.Fprintf(sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="4"/>`, it[0], x+6, y-4)
		}
		fmt.Fprintf(sb, `<text class="legend" x="%.1f" y="%.1f">%s</text>`, x+18, y, it[1])
		x += 18 + labelWidth(it[1]) + 16
	}
}

// RecapRow is one pitch on the round page's chart: its claimed range and
// its measured speedup (0: not measured yet).
type RecapRow struct {
	Label    string
	Lo, Hi   float64
	Measured float64
}

// Recap draws the round's pitches, one row each on a shared log axis: the
// claimed range as a band (green when the measurement falls inside, red when
// outside, grey while unmeasured) and the measured speedup as a black tick.
func Recap(rows []RecapRow) string {
	var vals []float64
	any := false
	for _, r := range rows {
		vals = append(vals, r.Lo, r.Hi, r.Measured)
		any = any || ok(r.Measured)
	}
	if len(rows) == 0 || !any {
		return ""
	}
	lo, hi := logRange(vals)
	labelW := 220.0
	plotL, plotR := labelW, float64(width-padR)
	x := func(v float64) float64 {
		return plotL + (plotR-plotL)*(math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo))
	}
	bottom := float64(padT + rowH*len(rows))
	h := int(bottom) + 24 + 26
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg"><title>Claimed range against measured speedup for each pitch of the round (log axis)</title>`, width, h)
	for _, t := range logTicks(lo, hi) {
		fmt.Fprintf(&sb, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%sx</text>`,
			x(t), x(t), padT, bottom, x(t), bottom+14, f(t))
	}
	fmt.Fprintf(&sb, `<line class="one" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/>`, x(1), x(1), padT, bottom)
	for i, r := range rows {
		cy := float64(padT + rowH*i + rowH/2)
		fmt.Fprintf(&sb, `<text class="label" x="%.1f" y="%.1f" text-anchor="end">%s<title>%s</title></text>`, plotL-8, cy+4, esc(short(r.Label, 34)), esc(r.Label))
		cls := "range-open"
		if ok(r.Measured) {
			cls = "range-miss"
			if r.Measured >= r.Lo && r.Measured <= r.Hi {
				cls = "range-hit"
			}
		}
		if ok(r.Lo) && ok(r.Hi) {
			w := math.Max(x(r.Hi)-x(r.Lo), 3)
			fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="10" rx="3"><title>%s: claimed %s-%sx</title></rect>`,
				cls, x(r.Lo)-(w-(x(r.Hi)-x(r.Lo)))/2, cy-5, w, esc(r.Label), f(r.Lo), f(r.Hi))
		}
		if ok(r.Measured) {
			fmt.Fprintf(&sb, `<line class="measured" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>%s: measured %sx</title></line>`,
				x(r.Measured), x(r.Measured), cy-9, cy+9, esc(r.Label), f(r.Measured))
		}
	}
	legend(&sb, float64(h-6), [][2]string{{"range-hit", "claim held"}, {"range-miss", "claim missed"}, {"range-open", "not measured yet"}, {"measured", "measured"}, {"one", "1.0x"}})
	sb.WriteString(`</svg>`)
	return sb.String()
}

func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
