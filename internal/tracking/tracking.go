// Package tracking follows runs over time: when a run finishes it records
// what the run measured and with what (the kernel source hash and the
// app's build), checks it against the regression thresholds (a percentage
// bound against a pinned baseline run, or a z-score boundary over the
// run's own recent comparable history: zscore.go; per round or per
// variant) and
// publishes the events webhooks and mail take (internal/notify).
//
// It sees finished runs by wrapping the runner's Store (WrapStore): every
// successful MarkSucceeded, MarkMeasured and Import is a finished run, every
// MarkFailed and MarkCancelled a failed one.
package tracking

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Threshold is a regression bound on runs of the pitches of Round (when
// set), or runs of Variant of Problem (in any spelling of it: applies). Of
// Kind KindPercent (the default), a run slower than BaselineRun by more
// than Percent on a shape raises an alert; of KindZScore, a run above the
// Z standard deviations boundary of its latest Window earlier comparable
// runs on a shape (EvaluateZScore).
type Threshold struct {
	ID          int64     `json:"id"`
	Round       int       `json:"round,omitzero"`
	Problem     string    `json:"problem,omitempty"`
	Variant     string    `json:"variant,omitempty"`
	Kind        string    `json:"kind"`
	BaselineRun int64     `json:"baseline_run,omitzero"` // percent only
	Percent     float64   `json:"percent,omitzero"`      // percent only
	Window      int       `json:"window,omitzero"`       // zscore only
	Z           float64   `json:"z,omitzero"`            // zscore only
	CreatedBy   int64     `json:"created_by,omitzero"`
	CreatedAt   time.Time `json:"created_at"`
}

// Scope is the threshold's reach in words: "round 3" or "variant
// baseline?stages=3 of nvfp4_group_gemm".
func (t Threshold) Scope() string {
	if t.Round > 0 {
		return fmt.Sprintf("round %d", t.Round)
	}
	return fmt.Sprintf("variant %s of %s", t.Variant, t.Problem)
}

// SameAs reports whether t is the bound o already is: the same scope (round,
// or problem and variant), kind, baseline run and percent, window and z,
// compared exactly (the web layer trims problem and variant before storing
// them; case counts; an empty kind is a percent one). Two such thresholds
// would raise the same alert twice on every run they cover. Another
// percent, baseline run, window or z is another bound (5% and 10% warn at
// two levels, z=3 and z=5 too). The store's unique index (migrations 154
// and 157) is this rule.
func (t Threshold) SameAs(o Threshold) bool {
	return t.Round == o.Round && t.Problem == o.Problem && t.Variant == o.Variant && t.KindOrDefault() == o.KindOrDefault() &&
		t.BaselineRun == o.BaselineRun && t.Percent == o.Percent && t.Window == o.Window && t.Z == o.Z
}

// DuplicateError refuses a new threshold that stored threshold o already
// is (SameAs): a conflict naming the round, or the variant.
func DuplicateError(o Threshold) error {
	field := "variant"
	if o.Round > 0 {
		field = "round"
	}
	if o.KindOrDefault() == KindZScore {
		return pitches.Errorf(pitches.ECONFLICT, field, "threshold %d already checks %s at z=%s over its last %d comparable runs; delete it first, or pick another z or window",
			o.ID, o.Scope(), strconv.FormatFloat(o.Z, 'g', -1, 64), o.Window)
	}
	return pitches.Errorf(pitches.ECONFLICT, field, "threshold %d already checks %s against run %d at %s%%; delete it first, or pick another percent or baseline run",
		o.ID, o.Scope(), o.BaselineRun, strconv.FormatFloat(o.Percent, 'g', -1, 64))
}

// ShapeRegression is one shape over the bound: the baseline run's variant
// time over this run's, with its interval, and the two times. Paired is
// the same shape's speedup over each run's own baseline kernel, this run's
// over the baseline run's: near 1 while the times fell apart, the baseline
// kernel slowed as much as the variant did (a slower machine, a hotter
// card), which the alert says.
//
// A zscore threshold's shape has no baseline run: Ratio is the history's
// mean time over this run's, MeanUs that mean (the geometric mean of the
// history's times: the mean of their logs), SD the standard deviation of
// the log times the boundary used (relative: 0.02 is about 2%), BoundaryUs
// the time at mean + z*SD, and ZScore how many SDs this run's log time is
// above the mean.
type ShapeRegression struct {
	Label      string          `json:"label"`
	Ratio      runner.Interval `json:"ratio"`
	BaselineUs float64         `json:"baseline_run_us,omitempty"`
	RunUs      float64         `json:"run_us"`
	Paired     float64         `json:"paired_ratio,omitempty"`
	MeanUs     float64         `json:"mean_us,omitempty"`
	SD         float64         `json:"sd,omitempty"`
	BoundaryUs float64         `json:"boundary_us,omitempty"`
	ZScore     float64         `json:"z_score,omitempty"`
}

// CheckBaselineRun checks that base can be the baseline run of th: a run
// with a result that stands (succeeded, or suspect and accepted by an admin:
// against an incorrect kernel's or an unaccepted implausible figure every
// honest run would read as a regression), of th's problem; for a round's
// threshold, a run of the round's measurement (problem, suite, baseline,
// device class, imports) once it declares one, in a round that is not closed (no run of its
// pitches is measured again, so the bound would never be checked). round
// is th's round (nil for a variant's threshold). The error names
// baseline_run, or round.
func CheckBaselineRun(th Threshold, base *runner.Run, round *pitches.Round) error {
	if !(base.Status == runner.StatusSucceeded || base.Accepted()) || !base.HasResult {
		why := string(base.Status)
		if base.Status == runner.StatusSuspect {
			why = "suspect and not accepted by an admin"
		}
		return pitches.Errorf(pitches.EINVALID, "baseline_run", "run %d does not count as a result (%s): a threshold needs a correct run to compare with", base.ID, why)
	}
	if round == nil {
		if base.Problem != th.Problem {
			return pitches.Errorf(pitches.EINVALID, "baseline_run", "run %d measures %s, not %s", base.ID, base.Problem, th.Problem)
		}
		return nil
	}
	if round.Status == pitches.RoundClosed {
		return pitches.Errorf(pitches.EINVALID, "round", "round %d is closed: no run of its pitches is measured again, so the threshold would never be checked", round.Number)
	}
	// A round that declares no measurement yet has nothing to match.
	if m := runner.MeasurementOf(round); !m.Declared() {
		return nil
	} else if field, why := m.Mismatch(base); field != "" {
		return pitches.Errorf(pitches.EINVALID, "baseline_run", "run %d is not round %d's measurement: %s", base.ID, round.Number, why)
	}
	return nil
}

// Alert is a regression found on a finished run. A zscore threshold's
// alert has no baseline run nor percent (0) but its Window and Z, and
// History: how many runs its reference had.
type Alert struct {
	ID          int64             `json:"id"`
	RunID       int64             `json:"run_id"`
	ThresholdID int64             `json:"threshold_id"`
	Kind        string            `json:"kind"`
	BaselineRun int64             `json:"baseline_run"`
	Percent     float64           `json:"percent"`
	Window      int               `json:"window,omitzero"`
	Z           float64           `json:"z,omitzero"`
	History     int               `json:"history,omitzero"`
	Scope       string            `json:"scope"`
	Shapes      []ShapeRegression `json:"shapes"`
	Summary     string            `json:"summary"`
	CreatedAt   time.Time         `json:"created_at"`
	Dismissed   *Dismissal        `json:"dismissed,omitempty"` // nil while the alert is active
}

// Provenance is what a finished run measured and with what.
type Provenance struct {
	RunID      int64     `json:"run_id"`
	SourceHash string    `json:"source_hash"` // the variant's kernel source hash; "" when the result does not say
	AppBuild   string    `json:"app_build"`   // the VCS revision of the server that stored the result
	RecordedAt time.Time `json:"recorded_at"`
}

// Store keeps thresholds, alerts and provenance (internal/sqlite).
type Store interface {
	Thresholds(ctx context.Context) ([]Threshold, error)
	AddAlert(ctx context.Context, a Alert) (*Alert, error)
	SetProvenance(ctx context.Context, p Provenance) error
}

// RunReader reads runs (runner.Store's Get and List): a run with its
// document and shapes, and a zscore threshold's candidate history.
type RunReader interface {
	Get(ctx context.Context, id int64) (*runner.Run, error)
	List(ctx context.Context, f runner.Filter) ([]runner.Run, error)
}

// PitchReader finds a pitch's round (pitches.Service's Pitch).
type PitchReader interface {
	Pitch(ctx context.Context, id int64) (*pitches.Pitch, error)
}

// Config is what a Tracker works with. Store, Runs and Pitches are
// required; Notifier nil sends nothing.
type Config struct {
	Store    Store
	Runs     RunReader
	Pitches  PitchReader
	Notifier *notify.Notifier
	Build    string // the app's build; default AppBuild()
	Logger   *slog.Logger
	Now      func() time.Time
}

// Tracker reacts to finished runs and round changes.
type Tracker struct {
	cfg Config
	log *slog.Logger
}

// New returns a Tracker over cfg.
func New(cfg Config) *Tracker {
	if cfg.Build == "" {
		cfg.Build = AppBuild()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Tracker{cfg: cfg, log: cfg.Logger}
}

// Notifier is the tracker's notifier (nil when none).
func (t *Tracker) Notifier() *notify.Notifier {
	if t == nil {
		return nil
	}
	return t.cfg.Notifier
}

// AppBuild is this binary's VCS revision from Go's build info, with
// "-dirty" when the tree had changes; the module version when there is no
// revision; "unknown" when the binary carries no build info.
func AppBuild() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		if v := bi.Main.Version; v != "" {
			return v
		}
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// SourceHash is the kernel source hash a run measured: the variant's
// source_hash in a bench result document, else the content hash a
// submitted kernel's spec names ("kernel:<hash>?..."), else "".
func SourceHash(r *runner.Run) string {
	var doc struct {
		Variant *struct {
			SourceHash string `json:"source_hash"`
		} `json:"variant"`
	}
	if len(r.Result) > 0 && json.Unmarshal(r.Result, &doc) == nil && doc.Variant != nil && doc.Variant.SourceHash != "" {
		return doc.Variant.SourceHash
	}
	if rest, ok := strings.CutPrefix(r.Variant, "kernel:"); ok {
		h, _, _ := strings.Cut(rest, "?")
		return h
	}
	return ""
}

// NotComparable names how run b differs from a: "" when their times can be
// set side by side, else "not comparable: different device / problem /
// suite" (the parts that differ; the device's detail in brackets). Both
// runs must come from Get.
func NotComparable(a, b *runner.Run) string {
	var parts []string
	detail := ""
	if ok, why := runner.Comparable(a, b); !ok {
		parts = append(parts, "device")
		detail = " (" + why + ")"
	}
	if a.Problem != b.Problem {
		parts = append(parts, "problem")
	}
	if a.Suite != b.Suite {
		parts = append(parts, "suite")
	}
	if len(parts) == 0 {
		return ""
	}
	return "not comparable: different " + strings.Join(parts, " / ") + detail
}

// RatioInterval is ref/x with an approximate 95% interval from the two
// medians' standard errors (independent runs: their relative errors add in
// quadrature on the log scale). Without both errors it has no interval;
// without both times it is zero.
func RatioInterval(refMed, refSEM, med, sem float64) runner.Interval {
	if !(refMed > 0) || !(med > 0) {
		return runner.Interval{}
	}
	iv := runner.Interval{Value: refMed / med}
	if refSEM > 0 && sem > 0 {
		se := math.Hypot(refSEM/refMed, sem/med)
		iv.Lo, iv.Hi = iv.Value*math.Exp(-1.96*se), iv.Value*math.Exp(1.96*se)
	}
	return iv
}

// Evaluate checks run against threshold th with its baseline run base
// (both from Get). It returns the alert when some shape is slower than the
// baseline run's by more than th.Percent: its variant time more than
// Percent% above the baseline run's, i.e. the ratio base/run, upper end of
// its interval (the value itself without one), below 1/(1 + Percent/100)
// (a 5% bound fires at 5% more time, as a latency bound does in Bencher).
// A run that cannot be compared (no result, the baseline run itself,
// another device, problem or suite) raises nothing; skip says why.
func Evaluate(th Threshold, base, run *runner.Run) (alert *Alert, skip string) {
	switch {
	case run.ID == base.ID:
		return nil, "the baseline run itself"
	case !run.HasResult || !base.HasResult:
		return nil, "no result"
	}
	if why := NotComparable(base, run); why != "" {
		return nil, why
	}
	bound := 1 / (1 + th.Percent/100)
	a := &Alert{RunID: run.ID, ThresholdID: th.ID, Kind: KindPercent, BaselineRun: base.ID, Percent: th.Percent, Scope: th.Scope(), Shapes: []ShapeRegression{}}
	compared := 0
	for _, sh := range run.Shapes {
		var b *runner.Shape
		for i := range base.Shapes {
			if base.Shapes[i].Label == sh.Label {
				b = &base.Shapes[i]
			}
		}
		if b == nil {
			continue
		}
		iv := RatioInterval(b.VariantMedianUs, b.VariantSEMUs, sh.VariantMedianUs, sh.VariantSEMUs)
		if !(iv.Value > 0) {
			continue
		}
		compared++
		upper := iv.Value
		if iv.HasInterval() {
			upper = iv.Hi
		}
		if upper < bound {
			reg := ShapeRegression{Label: sh.Label, Ratio: iv, BaselineUs: b.VariantMedianUs, RunUs: sh.VariantMedianUs}
			if sh.Speedup.Value > 0 && b.Speedup.Value > 0 {
				reg.Paired = sh.Speedup.Value / b.Speedup.Value
			}
			a.Shapes = append(a.Shapes, reg)
		}
	}
	if compared == 0 {
		return nil, "no shape in common with the baseline run"
	}
	if len(a.Shapes) == 0 {
		return nil, ""
	}
	worst := a.Shapes[0]
	for _, s := range a.Shapes[1:] {
		if s.Ratio.Value < worst.Ratio.Value {
			worst = s
		}
	}
	a.Summary = fmt.Sprintf("run #%d is more than %s%% slower than baseline run #%d on %d of %d shapes (%s); worst: %s at %s of the baseline run's speed",
		run.ID, trimFloat(th.Percent), base.ID, len(a.Shapes), compared, th.Scope(), worst.Label, ratioText(worst.Ratio))
	if worst.Paired >= bound {
		a.Summary += fmt.Sprintf("; its speedup over its own baseline kernel held (%.3fx the baseline run's): the baseline kernel slowed as much, so check the machine before the kernel", worst.Paired)
	}
	return a, ""
}

func trimFloat(x float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}

func ratioText(iv runner.Interval) string {
	s := fmt.Sprintf("%.3fx", iv.Value)
	if iv.HasInterval() {
		s += fmt.Sprintf(" [%.3f, %.3f]", iv.Lo, iv.Hi)
	}
	return s
}

// applies says whether th covers run (round: the run's pitch is in it;
// variant: the run's variant is th's, knob order ignored and a built-in
// kernel in any spelling, runner.SameVariantOf, so that thresholds and runs
// stored before runs were stored in the catalogue's spelling still meet).
func (t *Tracker) applies(th Threshold, run *runner.Run, roundOf func() int) bool {
	if th.Round > 0 {
		return run.PitchID != 0 && roundOf() == th.Round
	}
	return th.Problem == run.Problem && runner.SameVariantOf(runner.KernelsCatalog{}, run.Problem, th.Variant, run.Variant)
}

// RunFinished is called once a run's result is stored: it records the
// run's provenance, checks every threshold that covers it, stores the
// alerts, and publishes run.finished and one regression.found per alert.
// Errors are logged: the run is stored whatever happens here.
func (t *Tracker) RunFinished(ctx context.Context, id int64) []Alert {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	run, err := t.cfg.Runs.Get(ctx, id)
	if err != nil {
		t.log.Error("tracking: read finished run", slog.Int64("run", id), slog.Any("err", err))
		return nil
	}
	prov := Provenance{RunID: id, SourceHash: SourceHash(run), AppBuild: t.cfg.Build, RecordedAt: t.cfg.Now().UTC()}
	if err := t.cfg.Store.SetProvenance(ctx, prov); err != nil {
		t.log.Error("tracking: record provenance", slog.Int64("run", id), slog.Any("err", err))
	}
	alerts := t.checkThresholds(ctx, run)
	t.audit(ctx, run, len(alerts))
	n := t.cfg.Notifier
	n.Publish(n.NewEvent(notify.EventRunFinished, runEvent(run, &prov, len(alerts))))
	for i := range alerts {
		n.Publish(n.NewEvent(notify.EventRegression, alerts[i]))
	}
	return alerts
}

func (t *Tracker) checkThresholds(ctx context.Context, run *runner.Run) []Alert {
	if !run.HasResult {
		return nil
	}
	ths, err := t.cfg.Store.Thresholds(ctx)
	if err != nil {
		t.log.Error("tracking: list thresholds", slog.Any("err", err))
		return nil
	}
	round := -1
	roundOf := func() int {
		if round < 0 {
			round = 0
			if p, err := t.cfg.Pitches.Pitch(ctx, run.PitchID); err == nil {
				round = p.RoundNumber
			}
		}
		return round
	}
	var out []Alert
	for _, th := range ths {
		if !t.applies(th, run, roundOf) {
			continue
		}
		var a *Alert
		if th.KindOrDefault() == KindZScore {
			hist, err := t.history(ctx, th, run)
			if err != nil {
				t.log.Error("tracking: read the run's history", slog.Int64("run", run.ID), slog.Int64("threshold", th.ID), slog.Any("err", err))
				continue
			}
			a, _ = EvaluateZScore(th, run, hist)
		} else {
			base, err := t.cfg.Runs.Get(ctx, th.BaselineRun)
			if err != nil {
				t.log.Error("tracking: read baseline run", slog.Int64("run", th.BaselineRun), slog.Any("err", err))
				continue
			}
			a, _ = Evaluate(th, base, run)
		}
		if a == nil {
			continue
		}
		a.CreatedAt = t.cfg.Now().UTC()
		stored, err := t.cfg.Store.AddAlert(ctx, *a)
		if err != nil {
			t.log.Error("tracking: store alert", slog.Int64("run", run.ID), slog.Any("err", err))
			continue
		}
		out = append(out, *stored)
	}
	return out
}

// RunFailed is called once a run failed or was cancelled: run.failed.
func (t *Tracker) RunFailed(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	run, err := t.cfg.Runs.Get(ctx, id)
	if err != nil {
		t.log.Error("tracking: read failed run", slog.Int64("run", id), slog.Any("err", err))
		return
	}
	t.audit(ctx, run, 0)
	n := t.cfg.Notifier
	n.Publish(n.NewEvent(notify.EventRunFailed, runEvent(run, nil, 0)))
}

// auditor is the store's audit log, where it keeps one (sqlite does).
type auditor interface {
	AppendAudit(ctx context.Context, e pitches.AuditEntry) error
}

// audit records a run's end as the system's state change: "run.finish"
// (with its result's summary and the alerts it raised) or "run.fail".
func (t *Tracker) audit(ctx context.Context, run *runner.Run, alerts int) {
	a, ok := t.cfg.Store.(auditor)
	if !ok {
		return
	}
	action := "run.finish"
	after := map[string]any{"status": run.Status, "reason": run.Reason}
	if run.HasResult {
		after["speedup"], after["correct"], after["regressions"] = run.Speedup, run.Correct, alerts
	} else {
		action = "run.fail"
	}
	if run.Imported {
		return // the import itself is the person's change, recorded by the web layer
	}
	was := runner.StatusQueued
	if !run.StartedAt.IsZero() {
		was = runner.StatusRunning
	}
	before, _ := json.Marshal(map[string]any{"status": was})
	doc, _ := json.Marshal(after)
	if err := a.AppendAudit(ctx, pitches.AuditEntry{Action: action, Target: fmt.Sprintf("run %d", run.ID), Before: before, After: doc}); err != nil {
		t.log.Error("tracking: audit run end", slog.Int64("run", run.ID), slog.Any("err", err))
	}
}

// RoundStatus publishes round.status for a round that moved from one
// status to another.
func (t *Tracker) RoundStatus(r *pitches.Round, from pitches.RoundStatus) {
	if t == nil || r == nil {
		return
	}
	n := t.cfg.Notifier
	n.Publish(n.NewEvent(notify.EventRoundStatus, map[string]any{"round": r.Number, "title": r.Title, "from": from, "status": r.Status}))
}

// runEvent is a run as events carry it.
func runEvent(r *runner.Run, p *Provenance, alerts int) map[string]any {
	m := map[string]any{"run_id": r.ID, "problem": r.Problem, "suite": r.Suite, "variant": r.Variant, "baseline": r.Baseline,
		"device": r.Device, "device_name": r.DeviceName, "pitch_id": r.PitchID, "imported": r.Imported, "status": r.Status,
		"reason": r.Reason, "finished_at": r.FinishedAt}
	if r.HasResult {
		m["speedup"], m["correct"] = r.Speedup, r.Correct
		m["regressions"] = alerts
	}
	if p != nil {
		m["source_hash"], m["app_build"] = p.SourceHash, p.AppBuild
	}
	return m
}
