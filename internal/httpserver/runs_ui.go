package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/charts"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
	"github.com/pitchtank/pitchtank/templates"
)

// registerRunPageRoutes mounts the run pages (inside the logged-in group).
func (s *server) registerRunPageRoutes(r chi.Router) {
	r.Get("/runs", s.handleRunsPage)
	r.Post("/runs", s.handleLaunchRun)
	s.registerTrackingPageRoutes(r)
	// The /runs page's export links, for a logged-in browser (the /api
	// ones need a token).
	r.Get("/runs.csv", s.handleAPIRunsExport("csv"))
	r.Get("/runs.json", s.handleAPIRunsExport("json"))
	r.Get("/runs/{id:[0-9]+}", s.handleRunPage)
	r.Get("/runs/{id:[0-9]+}.csv", s.handleRunCSV)
	r.Get("/runs/{id:[0-9]+}.json", s.handleRunJSON)
	r.Get("/runs/{id:[0-9]+}/events", s.handleRunEvents)
	r.Post("/runs/{id:[0-9]+}/cancel", s.handleCancelRunForm)
	r.Post("/runs/{id:[0-9]+}/requeue", s.handleRequeueRunForm)
	r.Post("/runs/{id:[0-9]+}/accept", s.handleAcceptRunForm)
	r.Post("/pitches/{id}/runs", s.handleRunPitch)
	r.Get("/calibration", s.handleCalibration)
	r.Get("/rounds/{number}/results.csv", s.handleRoundResults("csv"))
	r.Get("/rounds/{number}/results.json", s.handleRoundResults("json"))
}

func problemOptions() []templates.ProblemOption {
	var out []templates.ProblemOption
	for _, p := range kernels.Problems() {
		o := templates.ProblemOption{Name: p.Name}
		for _, v := range p.Variants() {
			o.Variants = append(o.Variants, v.Name)
		}
		for _, k := range kernels.KnobSpace(p.Name) {
			o.Knobs = append(o.Knobs, templates.KnobOption{Key: k.Key, Values: strings.Join(k.Values, ", "), Default: k.Default, Doc: k.Doc})
		}
		out = append(out, o)
	}
	return out
}

// defaultRunForm fills the /runs form with values that run on this
// server's devices: on a GPU, the benchmark suite against the bench's
// default baseline; with only the cpu device (which runs just the reference,
// paired with itself), the test suite as an A/A run, which finishes in
// seconds instead of ending with "nothing paired".
func defaultRunForm(devices []string) templates.RunForm {
	for _, d := range devices {
		if d != "cpu" {
			return templates.RunForm{Suite: "benchmarks", Device: d}
		}
	}
	return templates.RunForm{Variant: "reference", Baseline: "reference", Suite: "tests", Device: "cpu"}
}

// deviceRuns says whether a pitch's variant can run on device: the cpu
// device runs only the reference variant (runner's request rules; bench
// --device cpu times the CPU reference), every GPU runs any variant its
// architecture compiles.
func deviceRuns(device, variant string) bool {
	if device != "cpu" {
		return true
	}
	name, _, _ := strings.Cut(variant, "?")
	return name == "reference"
}

// runFilterKeys are the /runs page's exact filters (runFilter's parameters
// that it shows in its form).
var runFilterKeys = []string{"problem", "variant", "device", "status", "pitch"}

// exportQuery is the query of the /runs page's export links for page query
// q: its filter and search, not its paging, so that they download every
// run the page lists, not just the page shown.
func exportQuery(q url.Values) string {
	out := url.Values{}
	for _, k := range append(slices.Clone(runFilterKeys), runSearchKeys...) {
		if v := q.Get(k); v != "" && k != "offset" {
			out.Set(k, v)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "?" + out.Encode()
}

func (s *server) runsView(ctx context.Context, viewer *pitches.User, q url.Values) (*templates.RunsView, error) {
	v := &templates.RunsView{Enabled: s.runs != nil, Filter: map[string]string{}, Export: exportQuery(q)}
	for _, k := range runFilterKeys {
		v.Filter[k] = q.Get(k)
	}
	if s.runs == nil {
		return v, nil
	}
	v.CanLaunch = pitches.Can(viewer, pitches.ActLaunchRun, pitches.Target{}) == nil
	v.Problems, v.Devices = problemOptions(), s.runs.Devices()
	v.Form = defaultRunForm(v.Devices)
	if isSearch(q, runSearchKeys) {
		return s.runsSearchView(ctx, viewer, q, v) // search.go
	}
	f, err := runFilter(q)
	if err != nil {
		f = runner.Filter{} // a malformed filter on a page just shows everything
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	runs, err := s.runs.List(ctx, f)
	if err != nil {
		return nil, err
	}
	vis := s.visibility(viewer)
	listed := len(runs)
	if f.Status.Measured() {
		kept := runs[:0:0]
		for _, r := range runs {
			hidden, err := vis.resultHidden(ctx, r.PitchID)
			if err != nil {
				return nil, err
			}
			if !hiddenByFilter(f, hidden) {
				kept = append(kept, r)
			}
		}
		runs = kept
	}
	if v.Runs, err = s.runRows(ctx, vis, runs); err != nil {
		return nil, err
	}
	if listed == f.Limit {
		next := url.Values{}
		for k, val := range v.Filter {
			if val != "" {
				next.Set(k, val)
			}
		}
		next.Set("before", strconv.FormatInt(runs[len(runs)-1].ID, 10))
		v.NextPage = next.Encode()
	}
	return v, nil
}

func (s *server) handleRunsPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.runsView(r.Context(), userFrom(r.Context()), r.URL.Query())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Flash = flashFrom(r)
	s.render(w, r, http.StatusOK, templates.RunsPage(s.chrome(r, "Runs", "runs"), *v))
}

// handleLaunchRun is the runs page's form.
func (s *server) handleLaunchRun(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	ctx := r.Context()
	u := userFrom(ctx)
	f := templates.RunForm{Problem: r.PostForm.Get("problem"), Variant: r.PostForm.Get("variant"), Knobs: r.PostForm.Get("knobs"),
		Suite: r.PostForm.Get("suite"), Device: r.PostForm.Get("device"), Baseline: r.PostForm.Get("baseline"), Pitch: strings.TrimSpace(r.PostForm.Get("pitch"))}
	in := runRequest{Problem: f.Problem, Variant: f.Variant, Suite: f.Suite, Device: f.Device, Baseline: f.Baseline}
	var run *runner.Run
	knobs, err := parseKnobText(f.Knobs)
	if err == nil && f.Pitch != "" {
		if in.Pitch, err = strconv.ParseInt(f.Pitch, 10, 64); err != nil || in.Pitch < 1 {
			err = pitches.Errorf(pitches.EINVALID, "pitch_id", "The pitch id must be a positive whole number.")
		}
	}
	if err == nil {
		run, err = s.submitRun(ctx, u, in, knobs)
	}
	if err != nil {
		if code := pitches.ErrorCode(err); code == pitches.EFORBIDDEN || code == pitches.EUNAUTHORIZED {
			s.renderError(w, r, err)
			return
		}
		v, verr := s.runsView(ctx, u, url.Values{})
		if verr != nil {
			s.renderError(w, r, verr)
			return
		}
		f.Err = s.formErr(r, err)
		if f.Err.Field == "pitch" {
			f.Err.Field = "pitch_id"
		}
		v.Form = f
		s.render(w, r, errorStatus(err), templates.RunsPage(s.chrome(r, "Runs", "runs"), *v))
		return
	}
	redirect(w, r, "/runs/"+strconv.FormatInt(run.ID, 10), "queued")
}

// handleRunPitch is the pitch page's "run this variant against the round's
// baseline" button.
func (s *server) handleRunPitch(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	ctx := r.Context()
	u := userFrom(ctx)
	// The round's measurement decides problem, suite and baseline
	// (submitRun fills them); the form picks only the device.
	run, err := s.submitRun(ctx, u, runRequest{Pitch: id, Device: r.PostForm.Get("device")}, "")
	if err != nil {
		if code := pitches.ErrorCode(err); code != pitches.EINVALID {
			s.renderError(w, r, err)
			return
		}
		v, verr := s.pitchView(ctx, u, id)
		if verr != nil {
			s.renderError(w, r, verr)
			return
		}
		if v.Results == nil || !v.Results.CanRun {
			// The run form is not on this page for this user (or this
			// server runs nothing): its error would not show there.
			s.renderError(w, r, err)
			return
		}
		v.Results.RunErr = s.formErr(r, err)
		s.render(w, r, errorStatus(err), templates.PitchPage(s.chrome(r, v.Pitch.Title, "rounds"), *v))
		return
	}
	redirect(w, r, "/runs/"+strconv.FormatInt(run.ID, 10), "queued")
}

// handleAcceptRunForm is the run page's "accept this suspect run" form
// (admins only; runner.Accept decides).
func (s *server) handleAcceptRunForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	if s.runs == nil {
		s.renderError(w, r, errNoRunner)
		return
	}
	ctx := r.Context()
	u := userFrom(ctx)
	if _, err := s.acceptRun(ctx, id, u, r.PostForm.Get("reason")); err != nil {
		if pitches.ErrorCode(err) != pitches.EINVALID {
			s.renderError(w, r, err)
			return
		}
		v, verr := s.runView(ctx, u, id)
		if verr != nil {
			s.renderError(w, r, verr)
			return
		}
		if !v.CanAccept {
			// No accept form on the page (the run is not an unaccepted
			// suspect run): its error would not show there.
			s.renderError(w, r, err)
			return
		}
		v.AcceptErr = pitches.ErrorMessage(err)
		s.render(w, r, errorStatus(err), templates.RunPage(s.chrome(r, "Run #"+strconv.FormatInt(id, 10), "runs"), *v))
		return
	}
	redirect(w, r, "/runs/"+strconv.FormatInt(id, 10), "accepted")
}

func (s *server) handleCancelRunForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if _, err := s.cancelRun(r.Context(), userFrom(r.Context()), id); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/runs/"+strconv.FormatInt(id, 10), "cancelled")
}

func (s *server) handleRequeueRunForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	run, err := s.requeueRun(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/runs/"+strconv.FormatInt(run.ID, 10), "requeued")
}

// benchDoc is the part of a `web bench` result document the run page shows
// (docs/bench-result.md); decoded leniently, since the runner validated it.
type benchDoc struct {
	Device struct {
		Name              string `json:"name"`
		UUID              string `json:"uuid"`
		Arch              string `json:"arch"`
		ComputeCapability string `json:"compute_capability"`
	} `json:"device"`
	Fingerprint struct {
		Key    string `json:"key"`
		Driver string `json:"driver_version"`
		NVRTC  string `json:"nvrtc_version"`
	} `json:"fingerprint"`
	Mode     string     `json:"mode"`
	Variant  *benchSpec `json:"variant"`
	Baseline *benchSpec `json:"baseline"`
}

type benchSpec struct {
	Spec           string               `json:"spec"`
	Name           string               `json:"name"`
	SourceHash     string               `json:"source_hash"`
	CompileOptions []string             `json:"compile_options"`
	Knobs          map[string]any       `json:"knobs"`
	Kernels        []result.KernelAttrs `json:"kernels"`
}

// runPageDoc adds what the modules table needs to benchDoc: each shape's
// launch plans (schema 3), without the shapes' samples.
type runPageDoc struct {
	benchDoc
	Shapes []struct {
		Index  int                 `json:"index"`
		Launch []result.LaunchPlan `json:"launch"`
	} `json:"shapes"`
}

// modulesRan lists the modules an auto variant ran, per shape (schema 3
// documents; none otherwise): which cubin each shape's median came from.
func modulesRan(d *runPageDoc) []templates.ModuleRow {
	var r result.Result
	if d.Variant != nil {
		r.Variant = result.Build{Name: d.Variant.Name, Kernels: d.Variant.Kernels}
	}
	for _, sh := range d.Shapes {
		r.Shapes = append(r.Shapes, result.Shape{Index: sh.Index, Launch: sh.Launch})
	}
	var rows []templates.ModuleRow
	for _, u := range result.ModulesRan(&r) {
		rows = append(rows, templates.ModuleRow{Shapes: result.JoinInts(u.Shapes), Module: u.Module, Cubin: u.ShortKey(), Resources: u.Resources()})
	}
	return rows
}

// importDoc is the part of an import document the run page shows.
type importDoc struct {
	Note string `json:"note"`
}

func (s *server) runView(ctx context.Context, viewer *pitches.User, id int64) (*templates.RunView, error) {
	rj, err := s.loadRun(ctx, viewer, id, true)
	if err != nil {
		return nil, err
	}
	run := rj.Run
	row, err := s.runRow(ctx, s.visibility(viewer), run, map[int64]string{})
	if err != nil {
		return nil, err
	}
	v := &templates.RunView{Run: row, Hidden: rj.ResultHidden, Live: !run.Status.Finished(), Log: run.Log, Stderr: run.Stderr,
		CanCancel: canCancel(viewer, run), CanRequeue: canRequeue(viewer, run), RequestedBy: "—", Terms: termRows(rj.Terms)}
	v.Tracking = runTrackingRows(rj)
	if v.Tracking.HistoryURL != "" {
		v.Tracking.DevicesURL = runDevicesURL(run)
	}
	if run.Seed != 0 {
		v.Seed = strconv.FormatInt(run.Seed, 10)
	}
	if !run.StartedAt.IsZero() {
		v.Started = run.StartedAt.UTC().Format("2006-01-02 15:04:05")
	}
	if !run.FinishedAt.IsZero() {
		v.Finished = run.FinishedAt.UTC().Format("2006-01-02 15:04:05")
	}
	if run.RequestedBy != 0 {
		if u, err := s.svc.UserByID(ctx, run.RequestedBy); err == nil {
			v.RequestedBy = u.DisplayName
		}
	}
	v.Progress = templates.ProgressView{Phase: string(run.Status), Shape: "—", Samples: "—", Median: "—"}
	if rj.ResultHidden {
		v.Log, v.Stderr = "", ""
		if run.Status.Measured() {
			// An incorrect or suspect run's reason quotes its figures.
			v.Run.Reason = ""
		}
	}
	if run.Status == runner.StatusSuspect && !run.Accepted() && pitches.Can(viewer, pitches.ActAcceptRun, pitches.Target{}) == nil {
		var round *pitches.Round
		if run.PitchID != 0 {
			if _, r, err := s.pitchAndRound(ctx, run.PitchID); err == nil {
				round = r
			}
		}
		v.CanAccept = pitches.Can(viewer, pitches.ActAcceptRun, pitches.Target{Round: round}) == nil
	}
	if run.Accepted() {
		by := "an admin"
		if u, err := s.svc.UserByID(ctx, run.AcceptedBy); err == nil {
			by = u.DisplayName
		}
		v.Accepted = fmt.Sprintf("Accepted as a result by %s on %s: %s", by, run.AcceptedAt.UTC().Format("2006-01-02 15:04"), run.AcceptReason)
	}
	if !run.HasResult {
		return v, nil
	}
	v.HasResult = true
	v.Correct, v.Flags = run.Correct, run.Flags
	v.Geomean = speedupText(run.Speedup)
	if !(run.Speedup.Value > 0) {
		v.Geomean = "— (nothing paired: no baseline)"
	}
	var bars []charts.Bar
	notReported := 0
	noise := runner.VariantRelSEM(run)
	for _, sh := range run.Shapes {
		row := templates.ShapeRow{Label: sh.Label, Baseline: usText(sh.BaselineMedianUs), Variant: usText(sh.VariantMedianUs),
			Speedup: "—", Interval: "—", FloorFrac: "—", Correct: sh.Correct, Noise: "—", Flags: sh.Flags}
		if slices.Contains(sh.Flags, "correctness_not_reported") {
			row.CorrectText = "not reported"
			notReported++
		}
		if sh.Speedup.Value > 0 {
			row.Speedup = fmt.Sprintf("%.3fx", sh.Speedup.Value)
			row.Slower = sh.Speedup.Value < 1
			bars = append(bars, charts.Bar{Label: sh.Label, Value: sh.Speedup.Value, Lo: sh.Speedup.Lo, Hi: sh.Speedup.Hi})
		}
		if sh.Speedup.HasInterval() {
			row.Interval = fmt.Sprintf("[%.3f, %.3f]", sh.Speedup.Lo, sh.Speedup.Hi)
		}
		if sh.FractionOfFloor > 0 {
			row.FloorFrac = fmt.Sprintf("%.1f%%", 100*sh.FractionOfFloor)
		}
		if rs, ok := noise[sh.Index]; ok {
			row.Noise = fmt.Sprintf("%.2f%%", 100*rs) // the document's SEM/mean (noise.go)
		}
		v.Shapes = append(v.Shapes, row)
	}
	v.BarsSVG = charts.SpeedupBars(bars)
	if notReported > 0 && !run.Correct {
		v.CorrectText = fmt.Sprintf("correctness not reported for %d of %d shapes", notReported, len(run.Shapes))
	}
	if run.Imported {
		v.ImportNote = run.Note
		var d importDoc
		if v.ImportNote == "" && json.Unmarshal(run.Result, &d) == nil {
			v.ImportNote = d.Note
		}
	}
	// A run measured here, or an import of a full bench document: the
	// document's fingerprint and builds.
	if !run.Imported || isBenchDoc(run.Result) {
		var d runPageDoc
		if json.Unmarshal(run.Result, &d) == nil {
			add := func(k, val string) {
				if val != "" {
					v.Fingerprint = append(v.Fingerprint, templates.KV{K: k, V: val})
				}
			}
			add("Device", d.Device.Name)
			add("UUID", d.Device.UUID)
			add("Compute capability", d.Device.ComputeCapability)
			add("Arch", d.Device.Arch)
			add("Driver", d.Fingerprint.Driver)
			add("NVRTC", d.Fingerprint.NVRTC)
			add("Fingerprint key", d.Fingerprint.Key)
			add("Mode", d.Mode)
			for _, b := range []struct {
				role string
				spec *benchSpec
			}{{"variant", d.Variant}, {"baseline", d.Baseline}} {
				if b.spec == nil {
					continue
				}
				knobs, _ := json.Marshal(b.spec.Knobs)
				v.Builds = append(v.Builds, templates.BuildRow{Role: b.role, Spec: b.spec.Spec, SourceHash: b.spec.SourceHash,
					Options: strings.Join(b.spec.CompileOptions, " "), Knobs: string(knobs)})
			}
			v.Modules = modulesRan(&d)
		}
	}
	// History: this variant against this baseline on this device, oldest
	// first: the runs that count as results (succeeded, or suspect and
	// accepted by an admin, as on /runs/history), so that an accepted run
	// is on its own chart.
	hist, err := s.runs.List(ctx, runner.Filter{Problem: run.Problem, Variant: run.Variant, Baseline: run.Baseline, Device: run.Device,
		Suite: run.Suite, Limit: 60})
	if err != nil {
		return nil, err
	}
	// Only runs with the same fingerprint (device model, driver, NVRTC;
	// measurement.md rule 10) are comparable: others are left out of the
	// chart, named in the note, and flag this run.
	var pts []charts.Point
	var mismatched []string
	vis := s.visibility(viewer)
	for i := len(hist) - 1; i >= 0; i-- {
		h := hist[i]
		if !h.Counts() {
			continue
		}
		// Another pitch may share the variant: its run stays out of the
		// chart while its result is hidden from this viewer.
		if hidden, err := vis.resultHidden(ctx, h.PitchID); err != nil {
			return nil, err
		} else if hidden {
			continue
		}
		if h.ID != run.ID {
			full, err := s.runs.Get(ctx, h.ID)
			if err != nil {
				return nil, err
			}
			if ok, why := runner.Comparable(run, full); !ok {
				mismatched = append(mismatched, fmt.Sprintf("#%d (%s)", h.ID, why))
				continue
			}
		}
		if h.Speedup.Value > 0 {
			pts = append(pts, charts.Point{Label: "#" + strconv.FormatInt(h.ID, 10) + " " + h.CreatedAt.UTC().Format("01-02 15:04"),
				Value: h.Speedup.Value, Lo: h.Speedup.Lo, Hi: h.Speedup.Hi})
		}
	}
	if len(pts) > 0 {
		v.HistorySVG = charts.History(pts)
		v.HistoryNote = fmt.Sprintf("%d run(s) of %s that count as results (succeeded, or suspect and accepted) against %s on %s (suite %s).",
			len(pts), run.Variant, row.Baseline, deviceLabel(run), run.Suite)
	}
	if len(mismatched) > 0 {
		v.Flags = append(append([]string(nil), v.Flags...), "fingerprint_mismatch")
		v.HistoryNote += " Not comparable (another fingerprint), left out: " + strings.Join(mismatched, "; ") + "."
	}
	return v, nil
}

// isBenchDoc reports whether doc is a `web bench` result document (an
// import of bare times is not).
func isBenchDoc(doc []byte) bool {
	var head struct {
		SchemaVersion int `json:"schema_version"`
	}
	return json.Unmarshal(doc, &head) == nil && head.SchemaVersion > 0
}

// usText prints a time given in microseconds: GPU kernel times in µs with
// two decimals, as bench reports them (123.46 µs); longer times (the CPU
// reference takes seconds) in ms or s with three significant digits,
// 5.64 s rather than "5642860.94 µs".
func usText(x float64) string {
	if !(x > 0) {
		return "—"
	}
	if x < 1e3 {
		return strconv.FormatFloat(x, 'f', 2, 64) + " µs"
	}
	unit := "ms"
	x /= 1e3
	if x >= 1e3 {
		x, unit = x/1e3, "s"
	}
	prec := 2
	switch {
	case x >= 100:
		prec = 0
	case x >= 10:
		prec = 1
	}
	return strconv.FormatFloat(x, 'f', prec, 64) + " " + unit
}

func (s *server) handleRunPage(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such run."))
		return
	}
	v, err := s.runView(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Flash = flashFrom(r)
	if key := r.URL.Query().Get("ok"); (key == "queued" || key == "requeued") && !v.Live {
		// The redirect after queueing says "Run queued."; once the run
		// has finished (a reload, a bookmark) that is no longer news.
		v.Flash = ""
	}
	s.render(w, r, http.StatusOK, templates.RunPage(s.chrome(r, "Run #"+strconv.FormatInt(id, 10), "runs"), *v))
}
