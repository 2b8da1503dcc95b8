package httpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
)

// Runs: asking pitches who may do what (its role x action table and
// CanSeeResults), and gathering what those rules need. The runner validates
// requests against the kernel manifest and the devices.

// errNoRunner answers run endpoints on a server started without a runner.
var errNoRunner = pitches.Errorf(pitches.ECONFLICT, "", "this server runs no measurements (no runner attached)")

// runRequest is the JSON body of POST /api/runs.
type runRequest struct {
	Problem  string         `json:"problem"`
	Variant  string         `json:"variant"`
	Knobs    map[string]any `json:"knobs"`
	Baseline string         `json:"baseline"`
	Suite    string         `json:"suite"`
	Device   string         `json:"device"`
	Seed     int64          `json:"seed"`
	Pitch    int64          `json:"pitch"`
	PitchID  int64          `json:"pitch_id"` // the runner's name for it; either may be used
}

// knobQuery turns knob overrides into the query part of a variant spec,
// keys sorted so the same overrides always make the same spec.
func knobQuery(knobs map[string]any) (string, error) {
	keys := make([]string, 0, len(knobs))
	for k := range knobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := knobs[k].(type) {
		case string:
			v = x
		case float64:
			if x != math.Trunc(x) || math.IsInf(x, 0) {
				return "", pitches.Errorf(pitches.EINVALID, "knobs."+k, "knob %s must be a whole number or a string", k)
			}
			v = strconv.FormatInt(int64(x), 10)
		case bool:
			v = strconv.FormatBool(x)
		default:
			return "", pitches.Errorf(pitches.EINVALID, "knobs."+k, "knob %s must be a number, a string or true/false", k)
		}
		if strings.TrimSpace(k) == "" {
			return "", pitches.Errorf(pitches.EINVALID, "knobs", "a knob needs a name")
		}
		q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	return strings.Join(q, "&"), nil
}

// withKnobs appends knob overrides to a variant spec.
func withKnobs(variant, query string) string {
	if query == "" {
		return variant
	}
	if strings.Contains(variant, "?") {
		return variant + "&" + query
	}
	return variant + "?" + query
}

// parseKnobText reads the form's "stages=3&tile_m=64" (also accepting
// commas or spaces between pairs) into a query string.
func parseKnobText(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '&' || r == ',' || r == ' ' })
	knobs := map[string]any{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return "", pitches.Errorf(pitches.EINVALID, "knobs", "knob overrides look like stages=3&tile_m=64; %q is not key=value", f)
		}
		knobs[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return knobQuery(knobs)
}

// checkLaunch says whether u may start a run, on pitchID when non-zero
// (pitches.ActLaunchRun), and returns that pitch and its round.
func (s *server) checkLaunch(ctx context.Context, u *pitches.User, pitchID int64) (*pitches.Pitch, *pitches.Round, error) {
	if err := pitches.Can(u, pitches.ActLaunchRun, pitches.Target{}); err != nil {
		return nil, nil, err
	}
	if pitchID == 0 {
		return nil, nil, nil
	}
	p, round, err := s.pitchAndRound(ctx, pitchID)
	if err != nil {
		return nil, nil, err
	}
	if err := pitches.Can(u, pitches.ActLaunchRun, pitches.Target{Pitch: p, Round: round}); err != nil {
		return nil, nil, err
	}
	return p, round, nil
}

// pitchAndRound reads pitch pitchID and its round; a pitch that does not
// exist is an EINVALID naming pitch_id.
func (s *server) pitchAndRound(ctx context.Context, pitchID int64) (*pitches.Pitch, *pitches.Round, error) {
	p, err := s.svc.Pitch(ctx, pitchID)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return nil, nil, pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch %d does not exist", pitchID)
	}
	if err != nil {
		return nil, nil, err
	}
	round, err := s.svc.Round(ctx, p.RoundNumber)
	if err != nil {
		return nil, nil, err
	}
	return p, round, nil
}

// submitRun checks the launch, fills the pitch's variant and its round's
// baseline where the request leaves them out, and queues the run.
func (s *server) submitRun(ctx context.Context, u *pitches.User, in runRequest, knobs string) (*runner.Run, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	if in.Pitch != 0 && in.PitchID != 0 && in.Pitch != in.PitchID {
		return nil, pitches.Errorf(pitches.EINVALID, "pitch", "pitch and pitch_id disagree")
	}
	if in.Pitch == 0 {
		in.Pitch = in.PitchID
	}
	if in.Pitch < 0 {
		return nil, pitches.Errorf(pitches.EINVALID, "pitch", "pitch id must be positive")
	}
	p, round, err := s.checkLaunch(ctx, u, in.Pitch)
	if err != nil {
		return nil, err
	}
	if p != nil {
		if strings.TrimSpace(in.Variant) == "" {
			if p.Variant == "" {
				return nil, pitches.Errorf(pitches.EINVALID, "variant", "the pitch names no kernel variant; give one")
			}
			in.Variant = p.Variant
		}
		// What the request leaves out comes from the round's measurement,
		// so that a pitch's run counts towards its result.
		m := runner.MeasurementOf(round)
		if strings.TrimSpace(in.Problem) == "" {
			if !m.Declared() {
				return nil, pitches.Errorf(pitches.EINVALID, "problem", "round %d declares no measurement yet (an admin sets its problem); give a problem", round.Number)
			}
			in.Problem = m.Problem
		}
		if strings.TrimSpace(in.Suite) == "" {
			in.Suite = m.Suite
		}
		if strings.TrimSpace(in.Baseline) == "" {
			in.Baseline = round.Baseline
		}
	}
	req := runner.Request{Problem: in.Problem, Suite: in.Suite, Variant: withKnobs(pitches.TrimLine(in.Variant), knobs),
		Baseline: in.Baseline, Device: in.Device, Seed: in.Seed, PitchID: in.Pitch, RequestedBy: u.ID}
	run, err := s.auditRunAs(ctx, u, "run.submit", nil)(s.runs.Submit(ctx, req))
	var knobErr *kernels.KnobError
	if knobs != "" && pitches.ErrorField(err) == "variant" && errors.As(err, &knobErr) {
		// The runner checks the whole spec; point the form at the knobs.
		return nil, pitches.Errorf(pitches.EINVALID, "knobs", "%s", pitches.ErrorMessage(err))
	}
	return run, err
}

// runFacts is what pitches' run rules need to know of run.
func runFacts(run *runner.Run) *pitches.RunFacts {
	return &pitches.RunFacts{ID: run.ID, Status: string(run.Status), RequestedBy: run.RequestedBy, Finished: run.Status.Finished(),
		Imported: run.Imported, Retryable: run.Status.Retryable(),
		Running: run.Status == runner.StatusRunning, OfPitch: run.PitchID != 0}
}

// canCancel and canRequeue decide the run page's buttons
// (pitches.ActCancelRun, pitches.ActRepeatRun).
func canCancel(u *pitches.User, run *runner.Run) bool {
	return pitches.Can(u, pitches.ActCancelRun, pitches.Target{Run: runFacts(run)}) == nil
}

func canRequeue(u *pitches.User, run *runner.Run) bool {
	return pitches.Can(u, pitches.ActRepeatRun, pitches.Target{Run: runFacts(run)}) == nil
}

// visibility caches, per request, which pitches' results the viewer may see.
type visibility struct {
	s      *server
	viewer *pitches.User
	hidden map[int64]bool
	rounds map[int]*pitches.Round
}

func (s *server) visibility(viewer *pitches.User) *visibility {
	return &visibility{s: s, viewer: viewer, hidden: map[int64]bool{}, rounds: map[int]*pitches.Round{}}
}

// resultHidden says whether the viewer may not see what is derived from
// the results of pitchID's runs (pitches.CanSeeResults: blind judging while
// the pitch's round is open). Runs of no pitch are never hidden.
func (v *visibility) resultHidden(ctx context.Context, pitchID int64) (bool, error) {
	if pitchID == 0 {
		return false, nil
	}
	if h, ok := v.hidden[pitchID]; ok {
		return h, nil
	}
	p, err := v.s.svc.Pitch(ctx, pitchID)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	round, ok := v.rounds[p.RoundNumber]
	if !ok {
		if round, err = v.s.svc.Round(ctx, p.RoundNumber); err != nil {
			return false, err
		}
		v.rounds[p.RoundNumber] = round
	}
	// The viewer's scorecards are read only where the rule depends on them,
	// so that nobody else pays for reading the cards.
	scored := false
	if pitches.ResultsDependOnScoring(v.viewer, round) {
		cards, _, err := v.s.svc.VisibleScorecards(ctx, v.viewer, pitchID)
		if err != nil {
			return false, err
		}
		for _, c := range cards {
			if c.SharkID == v.viewer.ID {
				scored = true
			}
		}
	}
	hidden := !pitches.CanSeeResults(v.viewer, round, p, scored)
	v.hidden[pitchID] = hidden
	return hidden, nil
}

// redact keeps of a run only what says what was asked and where it stands
// (for a viewer who may not see its results). It lists what stays rather
// than what goes, so a field added to runner.Run later is withheld until
// someone decides it may be shown: the result document, shapes, speedup,
// flags, the child's log and stderr (their last lines carry the geomean),
// the failure or suspect reason (it quotes figures) and an acceptance's
// written reason all go.
func redact(run *runner.Run) {
	*run = runner.Run{ID: run.ID, Problem: run.Problem, Suite: run.Suite, Variant: run.Variant, Baseline: run.Baseline,
		Device: run.Device, Seed: run.Seed, RequestedBy: run.RequestedBy, PitchID: run.PitchID, RequeueOf: run.RequeueOf,
		Imported: run.Imported, Status: hiddenStatus(run.Status), CreatedAt: run.CreatedAt, StartedAt: run.StartedAt, FinishedAt: run.FinishedAt}
}

// hiddenStatus is the status a viewer from whom the result is hidden sees:
// succeeded, incorrect and suspect all show as measured.
func hiddenStatus(s runner.Status) runner.Status {
	if s.Measured() {
		return runner.StatusMeasured
	}
	return s
}

// hiddenByFilter reports whether a run must be left out of a list filtered
// by status f.Status for a viewer from whom its result is hidden: listing
// "suspect" runs would otherwise tell the outcome the row no longer shows.
func hiddenByFilter(f runner.Filter, hidden bool) bool {
	return hidden && f.Status.Measured()
}

// pitchResult applies the result rule (runner.ResultOf) to a pitch's runs
// (newest first) under its round's measurement.
func (v *visibility) pitchResult(ctx context.Context, p *pitches.Pitch, runs []runner.Run) (runner.PitchResult, error) {
	round, err := v.round(ctx, p.RoundNumber)
	if err != nil {
		return runner.PitchResult{}, err
	}
	return runner.ResultOf(runner.MeasurementForPitch(round, p), runs), nil
}

// round reads round n once per request.
func (v *visibility) round(ctx context.Context, n int) (*pitches.Round, error) {
	if r, ok := v.rounds[n]; ok {
		return r, nil
	}
	r, err := v.s.svc.Round(ctx, n)
	if err != nil {
		return nil, err
	}
	v.rounds[n] = r
	return r, nil
}

// resultTerms evaluates the viewer-visible deal terms of pitch p on its
// result: the pooled speedup, the newest counted run's shapes, the other
// counted runs as repeats (runner.PitchResult.TermsRun).
func (s *server) resultTerms(ctx context.Context, viewer *pitches.User, p *pitches.Pitch, pr *runner.PitchResult) ([]termResult, error) {
	latest := pr.Latest()
	if latest == nil {
		return nil, nil
	}
	full, err := s.runs.Get(ctx, latest.ID)
	if err != nil {
		return nil, err
	}
	run, repeats := pr.TermsRun(full)
	return s.pitchTerms(ctx, viewer, p, run, repeats)
}

// resultText is a pitch's result: "0.7355x" for one run (with its
// interval when known), "1.2010x [1.18, 1.22] over 3 runs" for several.
func resultText(pr *runner.PitchResult) string {
	t := speedupText(pr.Speedup)
	if pr.N > 1 {
		t += fmt.Sprintf(" over %d runs", pr.N)
	}
	if pr.N == 1 && pr.Imported {
		t += " (" + deviceLabel(&pr.Counted[0]) + ")"
	}
	return t
}

// resultSource says where a result was measured.
func resultSource(pr *runner.PitchResult) string {
	if pr.N == 1 {
		return deviceLabel(&pr.Counted[0])
	}
	src := fmt.Sprintf("%d runs pooled", pr.N)
	if pr.Imported {
		src += ", some imported"
	}
	return src
}

// measurementText says a round's measurement in words.
func measurementText(m runner.Measurement) string {
	if !m.Declared() {
		return "not declared yet (an admin sets the round's problem, suite, baseline and device class); no run counts until then"
	}
	base := m.Baseline
	if base == "" {
		base = "baseline (bench's default)"
	}
	s := fmt.Sprintf("%s, suite %s, against %s", m.Problem, m.Suite, base)
	if m.DeviceClass != "" {
		s += fmt.Sprintf(", on a device matching %q", m.DeviceClass)
	} else {
		s += ", on any device"
	}
	if m.AllowImports {
		s += "; imported runs count"
	} else {
		s += "; imported runs do not count"
	}
	return s
}

// pooledText says how a result pools its runs.
func pooledText(pr *runner.PitchResult) string {
	if pr.N < 2 {
		if pr.N == 1 && pr.Imported {
			return "One run, imported: " + deviceLabel(&pr.Counted[0]) + "."
		}
		return "One run; another run of the round's measurement adds to the result, it never replaces it."
	}
	s := fmt.Sprintf("Geometric mean of %d runs, 95%% interval across runs; run-to-run variation %.1f%% (sd of log speedups), range %.4fx-%.4fx.",
		pr.N, 100*pr.SDLog, pr.Min, pr.Max)
	if pr.Imported {
		s += " Some runs are imported (measured elsewhere)."
	}
	return s
}

// deviceLabel says where a run was measured, marking imports as such.
func deviceLabel(r *runner.Run) string {
	switch {
	case r.Imported:
		return "imported: " + r.Device + ", measured elsewhere"
	case r.Device == "cpu":
		return "cpu"
	}
	return "device " + r.Device
}

// speedupText is "0.7355x" with the interval when known.
func speedupText(iv runner.Interval) string {
	if !(iv.Value > 0) {
		return "—"
	}
	s := fmt.Sprintf("%.4fx", iv.Value)
	if iv.HasInterval() {
		s += fmt.Sprintf(" [%.4f, %.4f]", iv.Lo, iv.Hi)
	}
	return s
}

// termsOf converts a vote's deal terms to the runner's.
func termsOf(t pitches.DealTerms) runner.Terms {
	return runner.Terms{MinGeomean: t.MinGeomean, MaxRegression: t.MaxRegression, MaxVariation: t.MaxVariation, Correct: t.Correct}
}

// repeatsOf are the comparable succeeded runs of run's configuration, for
// the run-to-run variation term, leaving out runs whose results vis hides
// (they may measure another pitch with the same variant). run must come
// from Get.
func (s *server) repeatsOf(ctx context.Context, vis *visibility, run *runner.Run) ([]runner.Run, error) {
	list, err := s.runs.List(ctx, runner.Filter{Problem: run.Problem, Variant: run.Variant, Baseline: run.Baseline,
		Device: run.Device, Suite: run.Suite, Status: runner.StatusSucceeded, Limit: 20})
	if err != nil {
		return nil, err
	}
	var out []runner.Run
	for _, o := range list {
		if o.ID == run.ID {
			continue
		}
		if hidden, err := vis.resultHidden(ctx, o.PitchID); err != nil {
			return nil, err
		} else if hidden {
			continue
		}
		full, err := s.runs.Get(ctx, o.ID)
		if err != nil {
			return nil, err
		}
		if ok, _ := runner.Comparable(run, full); ok {
			out = append(out, *full)
		}
	}
	return out, nil
}

// pitchTerms evaluates the deal terms of the votes for a pitch that the
// viewer may see, on run (from Get); repeats are the runs its variation is
// measured against (nil: the comparable runs of its configuration).
func (s *server) pitchTerms(ctx context.Context, viewer *pitches.User, p *pitches.Pitch, run *runner.Run, repeats []runner.Run) ([]termResult, error) {
	votes, err := s.svc.VisibleVotes(ctx, viewer, p.RoundNumber)
	if err != nil {
		return nil, err
	}
	loaded := repeats != nil
	var out []termResult
	for _, v := range votes {
		if v.PitchID != p.ID || v.Terms.Empty() {
			continue
		}
		if !loaded {
			if repeats, err = s.repeatsOf(ctx, s.visibility(viewer), run); err != nil {
				return nil, err
			}
			loaded = true
		}
		for _, tr := range runner.EvaluateTerms(termsOf(v.Terms), run, repeats) {
			out = append(out, termResult{Shark: v.Shark, TermResult: tr})
		}
	}
	return out, nil
}

// termResult is a deal term evaluated on a run, with the shark who set it.
type termResult struct {
	Shark string `json:"shark"`
	runner.TermResult
}
