package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/charts"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
	"github.com/pitchtank/pitchtank/templates"
)

// Runs compared side by side (/runs/compare?ids=1,2 and
// /api/runs/compare?ids=...): per shape, each run's variant time and
// speedup over its own baseline, and each run's time against the reference
// (ref=<id>, one of the ids with a result the viewer may see; by default
// the first such run) with an interval where the two runs are comparable: same problem, same suite, and the same device
// (runner.Comparable: device model, driver and NVRTC, or the same import
// label). A run whose result the viewer may not see (blind judging) shows
// what was asked and nothing measured.

// maxCompare is the most runs one comparison takes.
const maxCompare = 12

// compareIDs reads ids from the query: "ids=1,2,3", or ids repeated (the
// runs tables' checkboxes send ids=3&ids=1). 2 to maxCompare distinct
// positive ids, in the order given by "ids=3,1"; the checkboxes' repeated
// ids (newest first, as the tables list runs) are put oldest first, so the
// reference is the oldest run picked.
func compareIDs(q url.Values) ([]int64, error) {
	var ids []int64
	for _, v := range q["ids"] {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil || n < 1 {
				return nil, pitches.Errorf(pitches.EBADREQUEST, "ids", "ids must be run ids (positive integers) separated by commas, not %q", part)
			}
			if !slices.Contains(ids, n) {
				ids = append(ids, n)
			}
		}
	}
	if len(q["ids"]) > 1 {
		slices.Sort(ids)
	}
	if len(ids) < 2 {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "ids", "pick at least two runs to compare (ids=1,2)")
	}
	if len(ids) > maxCompare {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "ids", "at most %d runs can be compared at once, not %d", maxCompare, len(ids))
	}
	return ids, nil
}

// compareRunJSON is one compared run.
type compareRunJSON struct {
	ID           int64            `json:"id"`
	Problem      string           `json:"problem"`
	Suite        string           `json:"suite"`
	Variant      string           `json:"variant"`
	Baseline     string           `json:"baseline"`
	Device       string           `json:"device"`
	DeviceLabel  string           `json:"device_label"`
	DeviceName   string           `json:"device_name,omitempty"`
	PitchID      int64            `json:"pitch_id,omitzero"`
	Status       runner.Status    `json:"status"`
	CreatedAt    time.Time        `json:"created_at"`
	ResultHidden bool             `json:"result_hidden,omitempty"`
	HasResult    bool             `json:"has_result"`
	Speedup      *runner.Interval `json:"speedup,omitempty"`
	// Reference marks the run the others are set against; Comparable and
	// NotComparable say how this run stands against it (absent for the
	// reference itself, hidden runs and runs without a result).
	Reference     bool   `json:"reference,omitempty"`
	Comparable    *bool  `json:"comparable,omitempty"`
	NotComparable string `json:"not_comparable,omitempty"`

	run *runner.Run
}

// compareCell is one run's figures on one shape.
type compareCell struct {
	Run             int64           `json:"run"`
	VariantMedianUs float64         `json:"variant_median_us"`
	VariantSEMUs    float64         `json:"variant_sem_us,omitempty"`
	Speedup         runner.Interval `json:"speedup"` // over the run's own baseline
	Correct         bool            `json:"correct"`
	// VsReference is the reference run's variant time over this run's
	// (above 1: this run is faster), with an approximate 95% interval; only
	// where the runs are comparable.
	VsReference *runner.Interval `json:"vs_reference,omitempty"`
}

type compareShapeJSON struct {
	Label string        `json:"label"`
	Cells []compareCell `json:"cells"` // one per visible run with this shape, in the runs' order
}

type compareJSON struct {
	IDs       []int64            `json:"ids"`
	Reference int64              `json:"reference,omitzero"` // 0 when no run has a visible result
	refChosen bool               // ref= named the reference (the permalink keeps it)
	Runs      []compareRunJSON   `json:"runs"`
	Shapes    []compareShapeJSON `json:"shapes"`
}

// notComparable and ratioInterval are tracking's (shared with the
// regression thresholds).
var (
	notComparable = tracking.NotComparable
	ratioInterval = tracking.RatioInterval
)

// compareRef reads the chosen reference (ref=<id>, one of ids); 0 when
// none is chosen.
func compareRef(q url.Values, ids []int64) (int64, error) {
	v := strings.TrimSpace(q.Get("ref"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !slices.Contains(ids, n) {
		return 0, pitches.Errorf(pitches.EBADREQUEST, "ref", "ref must be one of the compared run ids (%s), not %q", joinIDs(ids), v)
	}
	return n, nil
}

// compareRuns builds the comparison of ids for viewer, against run refID
// (0: the first run with a result the viewer may see).
func (s *server) compareRuns(ctx context.Context, viewer *pitches.User, ids []int64, refID int64) (*compareJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	vis := s.visibility(viewer)
	out := &compareJSON{IDs: ids, Runs: []compareRunJSON{}, Shapes: []compareShapeJSON{}}
	var ref *runner.Run
	for _, id := range ids {
		run, err := s.runs.Get(ctx, id)
		if pitches.ErrorCode(err) == pitches.ENOTFOUND {
			return nil, pitches.Errorf(pitches.ENOTFOUND, "ids", "there is no run %d", id)
		}
		if err != nil {
			return nil, err
		}
		hidden, err := vis.resultHidden(ctx, run.PitchID)
		if err != nil {
			return nil, err
		}
		if hidden {
			redact(run)
		}
		c := compareRunJSON{ID: run.ID, Problem: run.Problem, Suite: run.Suite, Variant: run.Variant, Baseline: run.Baseline,
			Device: run.Device, DeviceLabel: deviceLabel(run), DeviceName: run.DeviceName, PitchID: run.PitchID, Status: run.Status,
			CreatedAt: run.CreatedAt, ResultHidden: hidden, HasResult: run.HasResult, run: run}
		if run.HasResult && !hidden {
			if run.Speedup.Value > 0 {
				sp := run.Speedup
				c.Speedup = &sp
			}
			if ref == nil && (refID == 0 || refID == run.ID) {
				ref = run
			}
		}
		out.Runs = append(out.Runs, c)
	}
	out.refChosen = refID != 0
	if refID != 0 && (ref == nil || ref.ID != refID) {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "ref", "run %d has no result you may see: it cannot be the reference", refID)
	}
	for i := range out.Runs {
		c := &out.Runs[i]
		switch {
		case ref == nil || !c.HasResult || c.ResultHidden:
		case c.ID == ref.ID:
			c.Reference = true
			out.Reference = ref.ID
		default:
			why := notComparable(ref, c.run)
			okc := why == ""
			c.Comparable, c.NotComparable = &okc, why
		}
	}
	// Shapes in the order they first appear; a cell per visible run.
	index := map[string]int{}
	for _, c := range out.Runs {
		if c.ResultHidden || !c.HasResult {
			continue
		}
		for _, sh := range c.run.Shapes {
			i, seen := index[sh.Label]
			if !seen {
				i = len(out.Shapes)
				index[sh.Label] = i
				out.Shapes = append(out.Shapes, compareShapeJSON{Label: sh.Label, Cells: []compareCell{}})
			}
			cell := compareCell{Run: c.ID, VariantMedianUs: sh.VariantMedianUs, VariantSEMUs: sh.VariantSEMUs, Speedup: sh.Speedup, Correct: sh.Correct}
			if c.Comparable != nil && *c.Comparable {
				if rs := shapeOf(ref, sh.Label); rs != nil {
					iv := ratioInterval(rs.VariantMedianUs, rs.VariantSEMUs, sh.VariantMedianUs, sh.VariantSEMUs)
					if iv.Value > 0 {
						cell.VsReference = &iv
					}
				}
			}
			out.Shapes[i].Cells = append(out.Shapes[i].Cells, cell)
		}
	}
	return out, nil
}

func shapeOf(r *runner.Run, label string) *runner.Shape {
	for i := range r.Shapes {
		if r.Shapes[i].Label == label {
			return &r.Shapes[i]
		}
	}
	return nil
}

func (s *server) handleAPICompareRuns(w http.ResponseWriter, r *http.Request) {
	ids, err := compareIDs(r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ref, err := compareRef(r.URL.Query(), ids)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out, err := s.compareRuns(r.Context(), userFrom(r.Context()), ids, ref)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// compareView turns a comparison into the page's view.
func compareView(c *compareJSON) templates.CompareView {
	v := templates.CompareView{Permalink: "/runs/compare?ids=" + joinIDs(c.IDs)}
	if c.refChosen {
		v.Permalink += "&ref=" + strconv.FormatInt(c.Reference, 10)
	}
	col := map[int64]int{}
	incorrect := map[int64]bool{} // runs whose shapes report failed checks (an import may not report any)
	var series []string
	for _, r := range c.Runs {
		row := templates.CompareRun{ID: r.ID, Variant: r.Variant, Baseline: r.Baseline, Problem: r.Problem, Suite: r.Suite,
			Device: r.DeviceLabel, Status: string(r.Status), PitchID: r.PitchID, Hidden: r.ResultHidden, Reference: r.Reference,
			Created: r.CreatedAt.UTC().Format("2006-01-02 15:04"), Speedup: "—"}
		if r.Baseline == "" {
			row.Baseline = "(default)"
		}
		if r.DeviceName != "" {
			row.Device += " (" + r.DeviceName + ")"
		}
		switch {
		case r.ResultHidden:
			row.Note = "results hidden"
		case !r.HasResult:
			row.Note = "no result"
		case r.Reference:
			row.Note = "reference"
		case r.NotComparable != "":
			row.Note = r.NotComparable
		default:
			row.Note = "comparable"
		}
		if r.Speedup != nil {
			row.Speedup = speedupText(*r.Speedup)
		}
		if r.HasResult && !r.ResultHidden {
			incorrect[r.ID] = r.Status == runner.StatusIncorrect
			row.Series = charts.SeriesClass(len(series))
			col[r.ID] = len(series)
			label := fmt.Sprintf("#%d %s", r.ID, r.Variant)
			switch {
			case r.Reference:
				label += " (reference)"
			case r.Comparable == nil || !*r.Comparable:
				label += " (not drawn)"
			}
			series = append(series, label)
			if !r.Reference {
				row.MakeReference = "/runs/compare?ids=" + joinIDs(c.IDs) + "&ref=" + strconv.FormatInt(r.ID, 10)
			}
		}
		v.Runs = append(v.Runs, row)
	}
	v.Columns = len(series)
	var groups []charts.Group
	for _, sh := range c.Shapes {
		row := templates.CompareShapeRow{Label: sh.Label, Cells: make([]templates.CompareCell, len(series))}
		g := charts.Group{Label: sh.Label, Bars: make([]charts.Bar, len(series))}
		for _, cell := range sh.Cells {
			i := col[cell.Run]
			tc := templates.CompareCell{Present: true, Time: usText(cell.VariantMedianUs), Speedup: speedupText(cell.Speedup),
				Incorrect: incorrect[cell.Run] && !cell.Correct}
			if cell.VariantSEMUs > 0 {
				tc.Time += " ± " + usText(cell.VariantSEMUs)
			}
			if cell.VsReference != nil {
				tc.VsReference = speedupText(*cell.VsReference)
			}
			row.Cells[i] = tc
			// The chart sets each run's time against the reference's (the
			// reference at 1x): each run's speedup over its own baseline
			// would draw a kernel as 2x faster for a slower baseline, and
			// runs on other devices or suites are not drawn at all.
			switch {
			case cell.Run == c.Reference:
				g.Bars[i] = charts.Bar{Label: sh.Label, Value: 1}
			case cell.VsReference != nil:
				g.Bars[i] = charts.Bar{Label: sh.Label, Value: cell.VsReference.Value, Lo: cell.VsReference.Lo, Hi: cell.VsReference.Hi}
			}
		}
		v.Shapes = append(v.Shapes, row)
		groups = append(groups, g)
	}
	v.ChartSVG = charts.Grouped(series, groups)
	return v
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func (s *server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	ids, err := compareIDs(r.URL.Query())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	ref, err := compareRef(r.URL.Query(), ids)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	c, err := s.compareRuns(r.Context(), userFrom(r.Context()), ids, ref)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.ComparePage(s.chrome(r, "Compare runs "+joinIDs(ids), "runs"), compareView(c)))
}
