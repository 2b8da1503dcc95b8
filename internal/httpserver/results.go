package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/charts"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/templates"
)

// Predictions against results: the pitch page's scores, the round recap,
// the round's results export and the calibration page all start from
// pitchOutcome.

// scoredPrediction is one prediction (a claim or a shark's estimate) scored
// against a pitch's accepted run.
type scoredPrediction struct {
	PitchID   int64        `json:"pitch_id"`
	Who       string       `json:"who"`
	WhoID     int64        `json:"who_id"`
	Kind      string       `json:"kind"` // "claim" or "estimate"
	Score     runner.Score `json:"score"`
	Relative  *float64     `json:"relative_interval_score,omitempty"`
	Pitch     string       `json:"pitch"`
	RunID     int64        `json:"run_id"`
	RoundN    int          `json:"round"`
	Imported  bool         `json:"imported"`
	DeviceLbl string       `json:"device"`
	// For an estimate: the scorecard version it comes from (the one current
	// when the pitch's first result existed, pitches.PredictionAt) and,
	// when the shark's card now says otherwise, the current estimate.
	Version int            `json:"scorecard_version,omitempty"`
	Now     *pitches.Range `json:"current_estimate,omitempty"`
}

// pitchOutcome is a pitch with its runs, accepted run and scored predictions,
// as the viewer may see them.
type pitchOutcome struct {
	Pitch       *pitches.Pitch
	Runs        []runner.Run       // newest first
	Accepted    *runner.Run        // the result's newest counted run; nil when no result
	Hidden      bool               // result withheld from the viewer
	Result      runner.PitchResult // the pooled result under the round's measurement; when Hidden only Has() is read (counts)
	Predictions []scoredPrediction
	Cards       []pitches.Scorecard
	// FirstResult is when a result of what the pitch predicts first
	// existed (pitchFirstResult), zero when none: predictions are read as
	// they stood then, and estimates are locked from then on.
	FirstResult time.Time
}

// outcome gathers a pitch's results for viewer.
func (s *server) outcome(ctx context.Context, vis *visibility, p *pitches.Pitch) (*pitchOutcome, error) {
	o := &pitchOutcome{Pitch: p}
	runs, err := s.runs.List(ctx, runner.Filter{PitchID: p.ID, Limit: 200})
	if err != nil {
		return nil, err
	}
	if o.FirstResult, err = s.pitchFirstResult(ctx, p.ID); err != nil {
		return nil, err
	}
	o.Runs = runs
	if o.Hidden, err = vis.resultHidden(ctx, p.ID); err != nil {
		return nil, err
	}
	if o.Result, err = vis.pitchResult(ctx, p, runs); err != nil {
		return nil, err
	}
	if o.Hidden {
		return o, nil
	}
	o.Accepted = o.Result.Latest()
	if o.Accepted == nil {
		return o, nil
	}
	cards, _, err := s.svc.VisibleScorecards(ctx, vis.viewer, p.ID)
	if err != nil {
		return nil, err
	}
	o.Cards = cards
	y := o.Result.Speedup.Value // pooled over the runs that count
	add := func(who string, whoID int64, kind string, rg pitches.Range) *scoredPrediction {
		sc, err := runner.ScorePrediction(rg.Lo, rg.Hi, y)
		if err != nil {
			return nil // a prediction that cannot be scored (zero range) is left out
		}
		o.Predictions = append(o.Predictions, scoredPrediction{PitchID: p.ID, Who: who, WhoID: whoID, Kind: kind, Score: sc,
			Pitch: p.Title, RunID: o.Accepted.ID, RoundN: p.RoundNumber, Imported: o.Result.Imported, DeviceLbl: deviceLabel(o.Accepted)})
		return &o.Predictions[len(o.Predictions)-1]
	}
	// Predictions are read as they stood when a result of the pitch's
	// variant first existed (pitches.Service.FirstResultAt): a claim filed
	// after one (a run of the variant before the pitch) is not a
	// prediction, nor is a shark's estimate given after it
	// (pitches.PredictionAt).
	first := o.FirstResult
	if first.IsZero() || p.CreatedAt.Before(first) {
		add(p.Contestant, p.ContestantID, "claim", p.Claim)
	}
	for _, c := range cards {
		hist, err := s.svc.ScorecardHistory(ctx, vis.viewer, p.ID, c.SharkID)
		if err != nil {
			return nil, fmt.Errorf("score the estimate of shark %d on pitch %d: %w", c.SharkID, p.ID, err)
		}
		pv, ok := pitches.PredictionAt(hist, first)
		if !ok {
			continue // first scored after the result: not a prediction
		}
		if sp := add(c.Shark, c.SharkID, "estimate", pv.Estimate); sp != nil {
			sp.Version = pv.Version
			if c.Estimate != pv.Estimate {
				now := c.Estimate
				sp.Now = &now
			}
		}
	}
	scores := make([]runner.Score, len(o.Predictions))
	for i := range o.Predictions {
		scores[i] = o.Predictions[i].Score
	}
	for i, rel := range runner.RelativeScores(scores) {
		o.Predictions[i].Relative = rel
	}
	return o, nil
}

func predictionRow(p scoredPrediction) templates.PredictionRow {
	rg := rangeStr(p.Score.Lo, p.Score.Hi)
	if p.Now != nil {
		rg += " (before the result; now " + rangeStr(p.Now.Lo, p.Now.Hi) + ")"
	}
	return templates.PredictionRow{
		Who: p.Who, Kind: p.Kind, Range: rg,
		IntervalScore: fmt.Sprintf("%.2f", p.Score.IntervalScore),
		AbsLogError:   fmt.Sprintf("%.3f", p.Score.AbsLogError),
		SignedLogErr:  fmt.Sprintf("%+.3f", p.Score.SignedLogErr),
		Hit:           p.Score.Hit, Sentence: p.Score.Sentence,
	}
}

func rangeStr(lo, hi float64) string {
	if lo == hi {
		return fmtNum(lo) + "x"
	}
	return fmtNum(lo) + "-" + fmtNum(hi) + "x"
}

func (s *server) runRows(ctx context.Context, vis *visibility, runs []runner.Run) ([]templates.RunRow, error) {
	titles := map[int64]string{}
	out := make([]templates.RunRow, 0, len(runs))
	for i := range runs {
		row, err := s.runRow(ctx, vis, &runs[i], titles)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

func (s *server) runRow(ctx context.Context, vis *visibility, r *runner.Run, titles map[int64]string) (templates.RunRow, error) {
	hidden, err := vis.resultHidden(ctx, r.PitchID)
	if err != nil {
		return templates.RunRow{}, err
	}
	s.addTitles(ctx, titles, r.PitchID)
	row := templates.RunRow{ID: r.ID, Problem: r.Problem, Suite: r.Suite, Variant: r.Variant, Baseline: r.Baseline, Device: r.Device,
		Status: string(r.Status), Imported: r.Imported, PitchID: r.PitchID, PitchTitle: titles[r.PitchID],
		Created: r.CreatedAt.UTC().Format("2006-01-02 15:04"), Speedup: "—", Hidden: hidden, DeviceLabel: deviceLabel(r)}
	if row.Baseline == "" {
		row.Baseline = "(default)"
	}
	if !hidden {
		row.Reason = r.Reason // a failed, incorrect or suspect run's reason quotes figures
	} else {
		row.Status = string(hiddenStatus(r.Status))
	}
	if r.HasResult && !hidden {
		row.Speedup = speedupText(r.Speedup)
		if !(r.Speedup.Value > 0) {
			row.Speedup = "no baseline"
		}
	}
	return row, nil
}

// pitchResults builds the pitch page's "Measured" section, and says when a
// result of what the pitch predicts first existed (pitchOutcome.FirstResult;
// zero when none or when the server measures nothing).
func (s *server) pitchResults(ctx context.Context, viewer *pitches.User, p *pitches.Pitch, round *pitches.Round) (*templates.PitchResults, time.Time, error) {
	if s.runs == nil {
		return nil, time.Time{}, nil
	}
	vis := s.visibility(viewer)
	o, err := s.outcome(ctx, vis, p)
	if err != nil {
		return nil, time.Time{}, err
	}
	res := &templates.PitchResults{Enabled: true, Hidden: o.Hidden, Devices: s.runs.Devices(), Baseline: round.Baseline,
		Measurement: measurementText(runner.MeasurementOf(round))}
	for _, po := range problemOptions() {
		res.Problems = append(res.Problems, po.Name)
	}
	launch := pitches.Can(viewer, pitches.ActLaunchRun, pitches.Target{Pitch: p, Round: round})
	if pitches.ErrorCode(launch) == pitches.ECONFLICT && p.Variant != "" {
		// Someone who could run it otherwise: say why not (the round is closed).
		res.CannotRun = pitches.ErrorMessage(launch) + " (the Runs page)."
	}
	if launch == nil && p.Variant != "" {
		// Offer only the devices that can run this variant; with none,
		// say why instead of a button that always fails.
		var usable []string
		for _, d := range res.Devices {
			if deviceRuns(d, p.Variant) {
				usable = append(usable, d)
			}
		}
		if len(usable) > 0 {
			res.CanRun, res.Devices = true, usable
		} else {
			res.CannotRun = "This server cannot run " + p.Variant + ": its only device is the CPU, which runs just the reference kernel (no GPU is attached). " +
				"Run it on a server with a GPU, or import a result measured elsewhere (docs/runs-import.md)."
		}
	}
	// The store locks estimates once a result of what the pitch predicts
	// exists (any status with a result, on the pitch or of its variant
	// elsewhere: pitches.Service.FirstResultAt); the page must say so, or a
	// card filed then is silently not a prediction.
	res.Locked = !o.FirstResult.IsZero()
	if o.Hidden {
		return res, o.FirstResult, nil
	}
	if res.Runs, err = s.runRows(ctx, vis, o.Runs); err != nil {
		return nil, time.Time{}, err
	}
	for _, x := range o.Result.NotCounted {
		res.NotCounted = append(res.NotCounted, templates.ExcludedRow{RunID: x.Run.ID, Text: x.Why})
	}
	for _, x := range o.Result.Other {
		res.Other = append(res.Other, templates.ExcludedRow{RunID: x.Run.ID, Text: x.Why})
	}
	if o.Accepted == nil {
		return res, o.FirstResult, nil
	}
	a := o.Accepted
	res.AcceptedID = a.ID
	res.Accepted = resultText(&o.Result)
	res.Pooled = pooledText(&o.Result)
	for _, r := range o.Result.Counted {
		res.Counted = append(res.Counted, templates.ExcludedRow{RunID: r.ID, Text: speedupText(r.Speedup) + ", " + deviceLabel(&r)})
	}
	var cps []charts.Prediction
	for _, sp := range o.Predictions {
		res.Predictions = append(res.Predictions, predictionRow(sp))
		label := sp.Who
		if sp.Kind == "claim" {
			label = "claim: " + sp.Who
		}
		cps = append(cps, charts.Prediction{Label: label, Lo: sp.Score.Lo, Hi: sp.Score.Hi, Hit: sp.Score.Hit})
	}
	res.ChartSVG = charts.Predictions(cps, o.Result.Speedup.Value)
	terms, err := s.resultTerms(ctx, viewer, p, &o.Result)
	if err != nil {
		return nil, time.Time{}, err
	}
	res.Terms = termRows(terms)
	return res, o.FirstResult, nil
}

func termRows(ts []termResult) []templates.TermRow {
	out := make([]templates.TermRow, 0, len(ts))
	for _, t := range ts {
		out = append(out, templates.TermRow{Who: t.Shark, Text: t.Text, Met: t.Met})
	}
	return out
}

// roundRecap builds the round page's table of predictions against results.
func (s *server) roundRecap(ctx context.Context, viewer *pitches.User, ps []pitches.Pitch) (*templates.RecapView, error) {
	if s.runs == nil {
		return nil, nil
	}
	vis := s.visibility(viewer)
	v := &templates.RecapView{}
	// The chart: every pitch whose result the viewer may see, measured or
	// not yet (hidden ones are left out, as from the table).
	var chartRows []charts.RecapRow
	defer func() { v.ChartSVG = charts.Recap(chartRows) }()
	for i := range ps {
		p := &ps[i]
		o, err := s.outcome(ctx, vis, p)
		if err != nil {
			return nil, err
		}
		if o.Hidden {
			if o.Result.Has() {
				v.Hidden++
			}
			continue
		}
		if p.Status == pitches.PitchActive || o.Accepted != nil {
			cr := charts.RecapRow{Label: p.Title, Lo: p.Claim.Lo, Hi: p.Claim.Hi}
			if o.Accepted != nil {
				cr.Measured = o.Result.Speedup.Value
			}
			chartRows = append(chartRows, cr)
		}
		if o.Accepted == nil {
			continue
		}
		a := o.Accepted
		row := templates.RecapRow{PitchID: p.ID, Title: p.Title, Claim: rangeStr(p.Claim.Lo, p.Claim.Hi),
			Measured: resultText(&o.Result), Sentence: runner.Sentence(p.Claim.Lo, p.Claim.Hi, o.Result.Speedup.Value),
			RunID: a.ID, Source: resultSource(&o.Result)}
		var ests []string
		for _, sp := range o.Predictions {
			if sp.Kind == "estimate" { // as scored: the estimate before the result
				ests = append(ests, sp.Who+" "+rangeStr(sp.Score.Lo, sp.Score.Hi))
			}
		}
		row.Estimates = strings.Join(ests, "; ")
		if row.Estimates == "" {
			row.Estimates = "—"
		}
		terms, err := s.resultTerms(ctx, viewer, p, &o.Result)
		if err != nil {
			return nil, err
		}
		if len(terms) > 0 {
			evaluated := make([]runner.TermResult, len(terms))
			for i, t := range terms {
				evaluated[i] = t.TermResult
			}
			met, notMet := runner.TermsMet(evaluated)
			row.Terms = fmt.Sprintf("%d of %d terms met", met, len(terms))
			if len(notMet) > 0 {
				row.Terms += ": " + strings.Join(notMet, "; ")
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

// allOutcomes gathers every pitch with a result the viewer may see, over
// all rounds, and counts the ones withheld.
func (s *server) allOutcomes(ctx context.Context, viewer *pitches.User) ([]*pitchOutcome, int, error) {
	rounds, err := s.svc.Rounds(ctx)
	if err != nil {
		return nil, 0, err
	}
	vis := s.visibility(viewer)
	var out []*pitchOutcome
	hidden := 0
	for _, r := range rounds {
		ps, err := s.svc.Pitches(ctx, r.Number)
		if err != nil {
			return nil, 0, err
		}
		for i := range ps {
			o, err := s.outcome(ctx, vis, &ps[i])
			if err != nil {
				return nil, 0, err
			}
			if o.Hidden {
				if o.Result.Has() {
					hidden++
				}
				continue
			}
			if o.Accepted != nil && len(o.Predictions) > 0 {
				out = append(out, o)
			}
		}
	}
	return out, hidden, nil
}

// calibration computes the calibration page: per predictor, coverage
// against the nominal 80%, mean signed log error, mean interval score and
// mean relative interval score, and the log-log scatter.
func (s *server) calibration(ctx context.Context, viewer *pitches.User) (*templates.CalibrationView, error) {
	v := &templates.CalibrationView{}
	if s.runs == nil {
		return v, nil
	}
	outs, hidden, err := s.allOutcomes(ctx, viewer)
	if err != nil {
		return nil, err
	}
	v.Pitches, v.Hidden = len(outs), hidden
	for _, g := range []struct{ title, kind string }{{"Sharks", "estimate"}, {"Contestants", "claim"}} {
		byWho := map[int64][]scoredPrediction{}
		var order []int64
		for _, o := range outs {
			for _, p := range o.Predictions {
				if p.Kind != g.kind {
					continue
				}
				if _, ok := byWho[p.WhoID]; !ok {
					order = append(order, p.WhoID)
				}
				byWho[p.WhoID] = append(byWho[p.WhoID], p)
			}
		}
		group := templates.CalGroup{Title: g.title}
		var points []charts.ScatterPoint
		var records []pitches.PredictorRecord
		for _, id := range order {
			ps := byWho[id]
			scores := make([]runner.Score, len(ps))
			relative := make([]*float64, len(ps))
			row := templates.CalRow{Name: ps[0].Who, WhoID: id, N: len(ps)}
			for i, p := range ps {
				scores[i], relative[i] = p.Score, p.Relative
				pr := predictionRow(p)
				pr.Who = p.Pitch + " (round " + strconv.Itoa(p.RoundN) + ")"
				row.Predictions = append(row.Predictions, pr)
				points = append(points, charts.ScatterPoint{Label: p.Who + ", " + p.Pitch, Lo: p.Score.Lo, Hi: p.Score.Hi, Measured: p.Score.Measured, Hit: p.Score.Hit})
			}
			c := runner.Calibrate(scores, relative)
			row.Hits = c.Hits
			row.Coverage = fmt.Sprintf("%.0f%% (%d of %d; nominal 80%%)", 100*c.Coverage, c.Hits, c.N)
			row.MeanSigned = fmt.Sprintf("%+.3f", c.MeanSignedLogErr)
			row.MeanIS = fmt.Sprintf("%.2f", c.MeanIntervalScore)
			row.MeanRelIS = "—"
			if c.NRelative > 0 {
				row.MeanRelIS = fmt.Sprintf("%+.2f", c.MeanRelative)
			}
			group.Rows = append(group.Rows, row)
			records = append(records, pitches.PredictorRecord{Name: row.Name, N: c.N, Hits: c.Hits, MeanIS: c.MeanIntervalScore})
		}
		group.SVG = charts.Calibration(latestPoints(points))
		if len(records) > 0 {
			group.Trust = pitches.TrustSentence(g.title, records)
		}
		v.Groups = append(v.Groups, group)
	}
	return v, nil
}

func (s *server) handleCalibration(w http.ResponseWriter, r *http.Request) {
	v, err := s.calibration(r.Context(), userFrom(r.Context()))
	if err == nil {
		err = boundCalibration(v, r.URL.Query().Get("who"))
	}
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.CalibrationPage(s.chrome(r, "Calibration", "calibration"), *v))
}

// roundResult is one row of a round's results export.
// resultJSON is a pitch's pooled result in the exports (runner.PitchResult
// without the runs themselves: their ids).
type resultJSON struct {
	Speedup     runner.Interval    `json:"speedup"`
	N           int                `json:"n"`
	SDLog       float64            `json:"sd_log,omitempty"`
	Min         float64            `json:"min,omitempty"`
	Max         float64            `json:"max,omitempty"`
	Imported    bool               `json:"imported"`
	Runs        []int64            `json:"runs"`
	Devices     []string           `json:"devices"` // each counted run's device, in the order of Runs
	Measurement runner.Measurement `json:"measurement"`
}

type roundResult struct {
	Pitch    int64              `json:"pitch_id"`
	Title    string             `json:"title"`
	Run      *runJSON           `json:"run,omitempty"`
	Measured float64            `json:"measured_speedup,omitempty"`
	Result   *resultJSON        `json:"result,omitempty"`
	Hidden   bool               `json:"result_hidden,omitempty"`
	Scores   []scoredPrediction `json:"predictions"`
	Sentence string             `json:"recap,omitempty"`
}

// handleRoundResults exports a round's results (pages and API): each pitch
// with its accepted run and every prediction scored against it.
func (s *server) handleRoundResults(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := roundParam(r)
		if err != nil {
			s.errorFor(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
			return
		}
		if s.runs == nil {
			s.errorFor(w, r, errNoRunner)
			return
		}
		ctx := r.Context()
		viewer := userFrom(ctx)
		if _, err := s.svc.Round(ctx, n); err != nil {
			s.errorFor(w, r, err)
			return
		}
		ps, err := s.svc.Pitches(ctx, n)
		if err != nil {
			s.errorFor(w, r, err)
			return
		}
		vis := s.visibility(viewer)
		out := []roundResult{}
		for i := range ps {
			o, err := s.outcome(ctx, vis, &ps[i])
			if err != nil {
				s.errorFor(w, r, err)
				return
			}
			rr := roundResult{Pitch: ps[i].ID, Title: ps[i].Title, Hidden: o.Hidden, Scores: o.Predictions}
			if rr.Scores == nil {
				rr.Scores = []scoredPrediction{}
			}
			if o.Accepted != nil {
				a := o.Accepted
				rr.Run = &runJSON{Run: a, DeviceLabel: deviceLabel(a)}
				rr.Measured = o.Result.Speedup.Value // pooled over the runs that count
				rr.Sentence = runner.Sentence(ps[i].Claim.Lo, ps[i].Claim.Hi, rr.Measured)
				rr.Result = &resultJSON{Speedup: o.Result.Speedup, N: o.Result.N, SDLog: o.Result.SDLog, Min: o.Result.Min, Max: o.Result.Max,
					Imported: o.Result.Imported, Measurement: o.Result.Measurement}
				for _, c := range o.Result.Counted {
					rr.Result.Runs = append(rr.Result.Runs, c.ID)
					rr.Result.Devices = append(rr.Result.Devices, runDevice(&c))
				}
			}
			out = append(out, rr)
		}
		var buf bytes.Buffer
		name := "round-" + strconv.Itoa(n) + "-results." + format
		if format == "json" {
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				s.errorFor(w, r, fmt.Errorf("export round results: %w", err))
				return
			}
			if isAPI(r) && !strings.HasSuffix(r.URL.Path, ".json") {
				writeJSON(w, http.StatusOK, out)
				return
			}
			writeDownload(w, name, format, buf.Bytes())
			return
		}
		cw := newCSVWriter(&buf) // neutralises formula cells (csvsafe.go)
		// The measured speedup is pooled over every run that counts: the
		// row names them all and the pool's interval, and run_id / device
		// are the newest of them (the one the JSON's "run" is).
		_ = cw.Write([]string{"round", "pitch_id", "pitch", "run_id", "device", "imported", "measured_speedup",
			"measured_lo", "measured_hi", "n_runs", "run_ids", "devices", "predictor", "kind",
			"lo", "hi", "interval_score", "abs_log_error", "signed_log_error", "hit", "relative_interval_score", "recap"})
		for _, rr := range out {
			if rr.Run == nil || rr.Result == nil {
				continue
			}
			pool := pooledColumns(rr.Result)
			for _, p := range rr.Scores {
				rel := ""
				if p.Relative != nil {
					rel = strconv.FormatFloat(*p.Relative, 'f', 4, 64)
				}
				row := []string{strconv.Itoa(n), strconv.FormatInt(rr.Pitch, 10), rr.Title, strconv.FormatInt(rr.Run.ID, 10),
					rr.Run.Device, strconv.FormatBool(rr.Run.Imported), strconv.FormatFloat(rr.Measured, 'f', 4, 64)}
				row = append(row, pool...)
				_ = cw.Write(append(row, p.Who, p.Kind,
					fmtNum(p.Score.Lo), fmtNum(p.Score.Hi), strconv.FormatFloat(p.Score.IntervalScore, 'f', 4, 64),
					strconv.FormatFloat(p.Score.AbsLogError, 'f', 4, 64), strconv.FormatFloat(p.Score.SignedLogErr, 'f', 4, 64),
					strconv.FormatBool(p.Score.Hit), rel, p.Score.Sentence))
			}
		}
		cw.Flush()
		writeDownload(w, name, format, buf.Bytes())
	}
}

// runDevice names the device a run measured on: its device model, or the
// import's label, or the server's device name when neither is known yet.
func runDevice(r *runner.Run) string {
	if r.DeviceName != "" {
		return r.DeviceName
	}
	return r.Device
}

// pooledColumns are a result's pool in the results CSV: its interval, how
// many runs it pools, their ids and devices (space-separated, newest first).
func pooledColumns(res *resultJSON) []string {
	ids := make([]string, len(res.Runs))
	for i, id := range res.Runs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	return []string{fmtNum(res.Speedup.Lo), fmtNum(res.Speedup.Hi), strconv.Itoa(res.N), strings.Join(ids, " "), strings.Join(res.Devices, " | ")}
}
