package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/charts"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/templates"
)

// History per variant, shape and device fingerprint (/runs/history, its
// JSON at /runs/history.json, GET /api/runs/history): every run of a
// variant that counts as a result (succeeded, or suspect and accepted) is a
// point per shape with its interval, grouped by the device it was measured
// on (the result document's fingerprint, or an import's label) since only
// those are comparable; each point carries its kernel source hash and the
// app's build, and a changed source hash is marked.

type shapeHistoryPoint struct {
	RunID           int64           `json:"run_id"`
	Variant         string          `json:"variant"`
	CreatedAt       time.Time       `json:"created_at"`
	Speedup         runner.Interval `json:"speedup"`
	VariantMedianUs float64         `json:"variant_median_us"`
	VariantSEMUs    float64         `json:"variant_sem_us,omitempty"`
	SourceHash      string          `json:"source_hash,omitempty"`
	AppBuild        string          `json:"app_build,omitempty"`
	SourceChanged   bool            `json:"source_changed,omitempty"` // the source hash differs from the point before's
}

type shapeHistorySeries struct {
	DeviceKey  string `json:"device_key"`  // "fingerprint:<key>", "import:<label>" or "import:<label>:<key>"
	DeviceName string `json:"device_name"` // the device model, or the import's label
	// The series' suite and baseline: a speedup is the baseline's time over
	// the variant's, so against another baseline (or on another suite's
	// shapes) the same kernel reads another figure, and a series that mixed
	// them would chart a "2x" that no kernel change made.
	Suite    string              `json:"suite"`
	Baseline string              `json:"baseline"`
	Shape    string              `json:"shape"`
	Points   []shapeHistoryPoint `json:"points"` // oldest first
}

type shapeHistoryJSON struct {
	Problem  string               `json:"problem"`
	Variant  string               `json:"variant"`
	Suite    string               `json:"suite,omitempty"`
	Baseline string               `json:"baseline,omitempty"`
	Device   string               `json:"device,omitempty"`
	Pitch    int64                `json:"pitch,omitzero"`
	Series   []shapeHistorySeries `json:"series"`
	// Truncated: more runs matched than a history reads (historyLimit);
	// the oldest are left out.
	Truncated bool `json:"truncated,omitempty"`
}

// historyLimit is how many of a history's newest runs are read: a chart of
// more points than that is unreadable, and the page says what it left out.
var historyLimit = 500

// deviceKey names the device a run's result was measured on.
func deviceKey(r *runner.Run) (key, name string) {
	devName, f, fp := result.ReadHead(r.Result)
	fpKey := f.Key
	if r.Imported {
		// An imported bench document carries its fingerprint: two imports
		// under one label from different drivers are different series.
		if fp {
			return "import:" + r.Device + ":" + fpKey, r.Device
		}
		return "import:" + r.Device, r.Device
	}
	if fp {
		return "fingerprint:" + fpKey, devName
	}
	return "device:" + r.Device, r.DeviceName
}

func (s *server) shapeHistory(ctx context.Context, viewer *pitches.User, q url.Values) (*shapeHistoryJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	out := &shapeHistoryJSON{Problem: strings.TrimSpace(q.Get("problem")), Variant: strings.TrimSpace(q.Get("variant")),
		Suite: strings.TrimSpace(q.Get("suite")), Baseline: strings.TrimSpace(q.Get("baseline")), Device: strings.TrimSpace(q.Get("device")),
		Series: []shapeHistorySeries{}}
	if v := strings.TrimSpace(q.Get("pitch")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "pitch", "pitch must be a positive integer")
		}
		out.Pitch = n
	}
	// A pitch's history follows it across its variants (a new kernel
	// upload is a new variant spec); otherwise the variant is the subject.
	if out.Pitch == 0 && out.Problem == "" {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "problem", "a history needs its problem (or a pitch)")
	}
	if out.Pitch == 0 && out.Variant == "" {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "variant", "a history needs its variant spec (or a pitch)")
	}
	shape := strings.TrimSpace(q.Get("shape"))
	// One kernel is one history: a built-in kernel's runs are stored in the
	// catalogue's spelling, looked up (and named in the answer) by it, with
	// the rows stored in the spelling given.
	f := runner.Filter{Problem: out.Problem, Variant: out.Variant, Suite: out.Suite, Baseline: out.Baseline,
		Device: out.Device, PitchID: out.Pitch}.CanonicalLookup(runner.KernelsCatalog{})
	out.Variant = f.Variant
	runs, truncated, err := s.visibleResults(ctx, viewer, f)
	if err != nil {
		return nil, err
	}
	out.Truncated = truncated
	var prov map[int64]provenanceRow
	if st, err := s.tracks(); err == nil {
		ids := make([]int64, len(runs))
		for i := range runs {
			ids[i] = runs[i].ID
		}
		ps, err := st.Provenances(ctx, ids)
		if err != nil {
			return nil, err
		}
		prov = map[int64]provenanceRow{}
		for id, p := range ps {
			prov[id] = provenanceRow{p.SourceHash, p.AppBuild}
		}
	}
	index := map[string]int{}
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		key, name := deviceKey(r)
		p := prov[r.ID]
		base := baselineName(r)
		for _, sh := range r.Shapes {
			if shape != "" && sh.Label != shape {
				continue
			}
			k := key + "\x00" + r.Suite + "\x00" + base + "\x00" + sh.Label
			j, ok := index[k]
			if !ok {
				j = len(out.Series)
				index[k] = j
				out.Series = append(out.Series, shapeHistorySeries{DeviceKey: key, DeviceName: name, Suite: r.Suite, Baseline: base,
					Shape: sh.Label, Points: []shapeHistoryPoint{}})
			}
			pt := shapeHistoryPoint{RunID: r.ID, Variant: r.Variant, CreatedAt: r.CreatedAt, Speedup: sh.Speedup, VariantMedianUs: sh.VariantMedianUs,
				VariantSEMUs: sh.VariantSEMUs, SourceHash: p.source, AppBuild: p.build}
			pts := out.Series[j].Points
			if n := len(pts); n > 0 && pt.SourceHash != "" && pts[n-1].SourceHash != "" && pts[n-1].SourceHash != pt.SourceHash {
				pt.SourceChanged = true
			}
			out.Series[j].Points = append(pts, pt)
		}
	}
	return out, nil
}

type provenanceRow struct{ source, build string }

// visibleResults reads the runs of f that count as results and whose
// results viewer may see, newest first, each with its result document and
// shapes (Get: deviceKey reads the document), at most historyLimit of the
// newest runs f matches; truncated says more matched. The history and the
// devices view walk the same runs.
func (s *server) visibleResults(ctx context.Context, viewer *pitches.User, f runner.Filter) (out []*runner.Run, truncated bool, err error) {
	f.Limit = historyLimit + 1
	runs, err := s.runs.List(ctx, f)
	if err != nil {
		return nil, false, err
	}
	if len(runs) > historyLimit { // newest first: the oldest one goes
		runs, truncated = runs[:historyLimit], true
	}
	vis := s.visibility(viewer)
	for i := range runs {
		r := &runs[i]
		if !r.Counts() {
			continue
		}
		if hidden, err := vis.resultHidden(ctx, r.PitchID); err != nil {
			return nil, false, err
		} else if hidden {
			continue
		}
		full, err := s.runs.Get(ctx, r.ID)
		if err != nil {
			return nil, false, err
		}
		out = append(out, full)
	}
	return out, truncated, nil
}

// baselineName is r's baseline spec, bench's default spelled out: "" and
// "baseline" are the same kernel, one series.
func baselineName(r *runner.Run) string {
	if r.Baseline == "" {
		return "baseline"
	}
	return r.Baseline
}

// historyCSVHeader: one row per point, with its series (device, suite,
// baseline, shape), as a spreadsheet or a notebook wants it.
var historyCSVHeader = []string{"device_key", "device_name", "suite", "baseline", "shape", "run_id", "variant", "created_at",
	"speedup", "speedup_lo", "speedup_hi", "variant_median_us", "variant_sem_us", "source_hash", "app_build", "source_changed"}

// handleShapeHistoryCSV is the history as CSV (/runs/history.csv with a
// session, /api/runs/history.csv with a token): the same points as the
// JSON, under the same parameters and visibility.
func (s *server) handleShapeHistoryCSV(w http.ResponseWriter, r *http.Request) {
	h, err := s.shapeHistory(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		if isAPI(r) {
			s.apiError(w, r, err)
		} else {
			s.renderError(w, r, err)
		}
		return
	}
	var buf bytes.Buffer
	cw := newCSVWriter(&buf) // neutralises formula cells (csvsafe.go)
	_ = cw.Write(historyCSVHeader)
	for _, se := range h.Series {
		for _, p := range se.Points {
			_ = cw.Write([]string{se.DeviceKey, se.DeviceName, se.Suite, se.Baseline, se.Shape, strconv.FormatInt(p.RunID, 10), p.Variant,
				csvTime(p.CreatedAt), csvFloat(p.Speedup.Value), csvFloat(p.Speedup.Lo), csvFloat(p.Speedup.Hi), csvFloat(p.VariantMedianUs),
				csvFloat(p.VariantSEMUs), p.SourceHash, p.AppBuild, strconv.FormatBool(p.SourceChanged)})
		}
	}
	cw.Flush()
	name := "history.csv"
	if h.Pitch != 0 {
		name = "history-pitch-" + strconv.FormatInt(h.Pitch, 10) + ".csv"
	}
	writeDownload(w, name, "csv", buf.Bytes())
}

func (s *server) handleAPIShapeHistory(w http.ResponseWriter, r *http.Request) {
	out, err := s.shapeHistory(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleShapeHistoryPage(w http.ResponseWriter, r *http.Request) {
	h, err := s.shapeHistory(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := templates.ShapeHistoryView{Problem: h.Problem, Variant: h.Variant, Suite: h.Suite, Baseline: h.Baseline, Device: h.Device, Pitch: h.Pitch,
		Shape: strings.TrimSpace(r.URL.Query().Get("shape")), JSONURL: "/runs/history.json?" + r.URL.RawQuery, CSVURL: "/runs/history.csv?" + r.URL.RawQuery}
	if h.Pitch == 0 {
		v.DevicesURL = devicesURL(h.Problem, h.Variant, h.Suite, h.Baseline)
	}
	if h.Truncated {
		v.Truncated = fmt.Sprintf("Only the newest %d runs are shown; older ones are left out. Narrow the history by suite, baseline, device or shape, or export the runs (/api/runs.csv).", historyLimit)
	}
	for _, se := range h.Series {
		sv := templates.HistorySeriesView{Device: se.DeviceName, Shape: se.Shape, Suite: se.Suite, Baseline: se.Baseline}
		var pts []charts.TimelinePoint
		for _, p := range se.Points {
			label := "#" + strconv.FormatInt(p.RunID, 10) + " " + p.CreatedAt.UTC().Format("01-02 15:04")
			pts = append(pts, charts.TimelinePoint{Point: charts.Point{Label: label, Value: p.Speedup.Value, Lo: p.Speedup.Lo, Hi: p.Speedup.Hi},
				SourceChange: p.SourceChanged})
			sv.Rows = append(sv.Rows, templates.HistoryPointRow{RunID: p.RunID, Variant: p.Variant, When: p.CreatedAt.UTC().Format("2006-01-02 15:04"),
				Speedup: speedupText(p.Speedup), Time: usText(p.VariantMedianUs), Source: shortHash(p.SourceHash), Build: shortHash(p.AppBuild),
				Changed: p.SourceChanged})
		}
		sv.ChartSVG = charts.Timeline(fmt.Sprintf("Speedup of %s over %s on %s, run by run", se.Shape, se.Baseline, se.DeviceName), pts)
		v.Series = append(v.Series, sv)
	}
	title := "History of " + h.Variant
	if h.Pitch != 0 {
		title = fmt.Sprintf("History of pitch #%d", h.Pitch)
	}
	s.render(w, r, http.StatusOK, templates.ShapeHistoryPage(s.chrome(r, title, "runs"), v))
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// historyURL is the history page of run r's variant on its device.
func historyURL(r *runner.Run) string {
	q := url.Values{"problem": {r.Problem}, "variant": {r.Variant}, "suite": {r.Suite}, "device": {r.Device}}
	if r.Baseline != "" {
		q.Set("baseline", r.Baseline)
	}
	return "/runs/history?" + q.Encode()
}
