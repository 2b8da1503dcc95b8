package httpserver

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/templates"
)

// One variant on each device (/runs/devices, its JSON at
// /runs/devices.json, GET /api/runs/devices): a row per device (the
// history's deviceKey: a result document's fingerprint, an import's label),
// suite and baseline, with the runs there that count as results, the
// latest and the best of them, and their pooled geomean speedup under the
// result rule (runner.ResultOf). Times measured on different devices are
// not comparable; each row's speedup is over the same baseline kernel on
// that row's device, the only figure that can sit beside another device's.

// deviceRunRef is one run of a device's row.
type deviceRunRef struct {
	RunID     int64           `json:"run_id"`
	Variant   string          `json:"variant"` // as stored: the spelling given, or the catalogue's
	CreatedAt time.Time       `json:"created_at"`
	Speedup   runner.Interval `json:"speedup"` // the run's geomean speedup over its baseline on this device
}

// deviceShapeTime is one shape's median variant time in a row's latest run.
type deviceShapeTime struct {
	Label           string  `json:"label"`
	VariantMedianUs float64 `json:"variant_median_us"`
	VariantSEMUs    float64 `json:"variant_sem_us,omitempty"`
}

// deviceRow is the variant on one device, suite and baseline.
type deviceRow struct {
	DeviceKey  string `json:"device_key"`  // as the history's series: "fingerprint:<key>", "import:<label>" or "import:<label>:<key>"
	DeviceName string `json:"device_name"` // the device model, or the import's label
	Imported   bool   `json:"imported"`
	Suite      string `json:"suite"`
	Baseline   string `json:"baseline"`
	// N runs count as results here (succeeded, or suspect and accepted);
	// Pooled is their geometric mean with a 95% interval across runs
	// (n >= 2), or the one run's own interval, as a pitch's result pools.
	N      int             `json:"n"`
	Pooled runner.Interval `json:"pooled"`
	SDLog  float64         `json:"sd_log,omitempty"`
	Min    float64         `json:"min,omitempty"`
	Max    float64         `json:"max,omitempty"`
	Latest deviceRunRef    `json:"latest"`
	Best   deviceRunRef    `json:"best"` // the highest geomean speedup (the newest of equals)
	// LatestShapes are the latest run's per-shape median variant times:
	// comparable only with other runs of this row.
	LatestShapes []deviceShapeTime `json:"latest_shapes"`
}

type variantDevicesJSON struct {
	Problem  string      `json:"problem"`
	Variant  string      `json:"variant"`
	Suite    string      `json:"suite,omitempty"`
	Baseline string      `json:"baseline,omitempty"`
	Devices  []deviceRow `json:"devices"`
	// Truncated: more runs matched than are read (historyLimit, as the
	// history); the oldest are left out.
	Truncated bool `json:"truncated,omitempty"`
}

func (s *server) variantDevices(ctx context.Context, viewer *pitches.User, q url.Values) (*variantDevicesJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	out := &variantDevicesJSON{Problem: strings.TrimSpace(q.Get("problem")), Variant: strings.TrimSpace(q.Get("variant")),
		Suite: strings.TrimSpace(q.Get("suite")), Baseline: strings.TrimSpace(q.Get("baseline")), Devices: []deviceRow{}}
	if out.Problem == "" {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "problem", "a variant's devices need its problem")
	}
	if out.Variant == "" {
		return nil, pitches.Errorf(pitches.EBADREQUEST, "variant", "a variant's devices need its variant spec")
	}
	// One kernel is one variant, in any spelling (as the history looks it up).
	f := runner.Filter{Problem: out.Problem, Variant: out.Variant, Suite: out.Suite, Baseline: out.Baseline}.
		CanonicalLookup(runner.KernelsCatalog{})
	out.Variant = f.Variant
	runs, truncated, err := s.visibleResults(ctx, viewer, f)
	if err != nil {
		return nil, err
	}
	out.Truncated = truncated
	type group struct {
		row  deviceRow
		runs []runner.Run // newest first
	}
	var groups []*group
	index := map[string]*group{}
	for _, r := range runs { // newest first: a group's first run is its latest
		base := baselineName(r)
		key, name := deviceKey(r)
		k := key + "\x00" + r.Suite + "\x00" + base
		g, ok := index[k]
		if !ok {
			g = &group{row: deviceRow{DeviceKey: key, DeviceName: name, Imported: r.Imported, Suite: r.Suite, Baseline: base,
				LatestShapes: []deviceShapeTime{}}}
			for _, sh := range r.Shapes {
				g.row.LatestShapes = append(g.row.LatestShapes, deviceShapeTime{Label: sh.Label, VariantMedianUs: sh.VariantMedianUs,
					VariantSEMUs: sh.VariantSEMUs})
			}
			index[k] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, *r)
	}
	for _, g := range groups {
		m := runner.Measurement{Problem: out.Problem, Suite: g.row.Suite, Baseline: g.row.Baseline, AllowImports: true}
		res := runner.ResultOf(m, g.runs)
		if !res.Has() {
			continue
		}
		row := g.row
		row.N, row.Pooled, row.SDLog, row.Min, row.Max = res.N, res.Speedup, res.SDLog, res.Min, res.Max
		latest := res.Counted[0]
		row.Latest = deviceRunRef{RunID: latest.ID, Variant: latest.Variant, CreatedAt: latest.CreatedAt, Speedup: latest.Speedup}
		best := latest
		for _, c := range res.Counted[1:] {
			if c.Speedup.Value > best.Speedup.Value {
				best = c
			}
		}
		row.Best = deviceRunRef{RunID: best.ID, Variant: best.Variant, CreatedAt: best.CreatedAt, Speedup: best.Speedup}
		out.Devices = append(out.Devices, row)
	}
	slices.SortStableFunc(out.Devices, func(a, b deviceRow) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.DeviceName), strings.ToLower(b.DeviceName)), cmp.Compare(a.DeviceKey, b.DeviceKey),
			cmp.Compare(a.Suite, b.Suite), cmp.Compare(a.Baseline, b.Baseline))
	})
	return out, nil
}

// devicesURL is the devices page of a variant (suite and baseline when
// given).
func devicesURL(problem, variant, suite, baseline string) string {
	q := url.Values{"problem": {problem}, "variant": {variant}}
	if suite != "" {
		q.Set("suite", suite)
	}
	if baseline != "" {
		q.Set("baseline", baseline)
	}
	return "/runs/devices?" + q.Encode()
}

// runDevicesURL is the devices page of run r's variant, suite and baseline.
func runDevicesURL(r *runner.Run) string {
	return devicesURL(r.Problem, r.Variant, r.Suite, r.Baseline)
}

func (s *server) handleAPIVariantDevices(w http.ResponseWriter, r *http.Request) {
	out, err := s.variantDevices(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleVariantDevicesPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.variantDevices(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := templates.VariantDevicesView{Problem: d.Problem, Variant: d.Variant, Suite: d.Suite, Baseline: d.Baseline,
		JSONURL: "/runs/devices.json?" + r.URL.RawQuery}
	hq := url.Values{"problem": {d.Problem}, "variant": {d.Variant}}
	if d.Suite != "" {
		hq.Set("suite", d.Suite)
	}
	if d.Baseline != "" {
		hq.Set("baseline", d.Baseline)
	}
	v.HistoryURL = "/runs/history?" + hq.Encode()
	if d.Truncated {
		v.Truncated = fmt.Sprintf("Only the newest %d runs are read; older ones are left out. Narrow it by suite or baseline, or export the runs (/api/runs.csv).", historyLimit)
	}
	for _, row := range d.Devices {
		dv := templates.DeviceRowView{Device: row.DeviceName, Imported: row.Imported, Suite: row.Suite, Baseline: row.Baseline,
			N: row.N, Pooled: speedupText(row.Pooled), Latest: deviceRunView(row.Latest), Best: deviceRunView(row.Best)}
		if row.N > 1 && row.Min > 0 {
			dv.Range = fmt.Sprintf("runs from %.4fx to %.4fx", row.Min, row.Max)
		}
		for _, sh := range row.LatestShapes {
			t := usText(sh.VariantMedianUs)
			if sh.VariantSEMUs > 0 {
				t += " ± " + usText(sh.VariantSEMUs)
			}
			dv.Shapes = append(dv.Shapes, templates.DeviceShapeTime{Label: sh.Label, Time: t})
		}
		v.Rows = append(v.Rows, dv)
	}
	s.render(w, r, http.StatusOK, templates.VariantDevicesPage(s.chrome(r, d.Variant+" on each device", "runs"), v))
}

func deviceRunView(r deviceRunRef) templates.DeviceRunView {
	return templates.DeviceRunView{ID: r.RunID, When: r.CreatedAt.UTC().Format("2006-01-02 15:04"), Speedup: speedupText(r.Speedup)}
}
