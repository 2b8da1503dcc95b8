package demo_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/kernels"
)

func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.BcryptCost = 4 // bcrypt.MinCost: the demo hashes ten passwords
	t.Cleanup(func() { db.Close() })
	return db
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestLoadDemoTournament(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if empty, err := demo.IsEmpty(ctx, db); err != nil || !empty {
		t.Fatalf("fresh db: empty=%v err=%v", empty, err)
	}
	logins, err := demo.Load(ctx, db)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	users := map[string]*pitches.User{}
	for _, l := range logins {
		u, err := db.Authenticate(ctx, l.Login, l.Password)
		if err != nil {
			t.Fatalf("log in as %s with the printed demo password: %v", l.Login, err)
		}
		if u.Role != l.Role || u.DisplayName != l.DisplayName {
			t.Errorf("%s: %+v", l.Login, u)
		}
		users[l.Login] = u
	}
	if users["oracle"].DisplayName != "The Performance Oracle" || users["pragmatist"].DisplayName != "The Pragmatic Engineer" {
		t.Errorf("sharks' names wrong")
	}

	rounds, err := db.Rounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]pitches.RoundStatus{1: pitches.RoundClosed, 2: pitches.RoundClosed, 5: pitches.RoundJudging, 6: pitches.RoundClosed, 7: pitches.RoundClosed}
	if len(rounds) != 5 {
		t.Fatalf("%d rounds, want 5 (1, 2, 5, 6, 7)", len(rounds))
	}
	for _, r := range rounds {
		if want[r.Number] != r.Status {
			t.Errorf("round %d is %s, want %s", r.Number, r.Status, want[r.Number])
		}
	}
	if cur, _ := db.CurrentRound(ctx); cur.Number != 5 {
		t.Errorf("current round %d, want 5", cur.Number)
	}

	// Round 1: the Pragmatic Engineer's cards, computed and typed totals; unanimous winner.
	r1, _ := db.Pitches(ctx, 1)
	r1Want := map[string][3]float64{ // computed, typed, claim lo
		"Pipeline Stages":     {7.85, 8.05, 1.5},
		"Tile Size Tuning":    {5.75, 5.85, 1.8},
		"TMA Store Epilogue":  {6.75, 6.95, 1.12},
		"Warp Specialization": {5.25, 5.35, 1.25},
	}
	if len(r1) != 4 {
		t.Fatalf("round 1 has %d pitches", len(r1))
	}
	for _, p := range r1 {
		w, ok := r1Want[p.Title]
		if !ok || p.Claim.Lo != w[2] || p.Variant == "" {
			t.Errorf("round 1 pitch %+v", p)
			continue
		}
		cards, hidden, err := db.VisibleScorecards(ctx, nil, p.ID)
		if err != nil || hidden != 0 || len(cards) != 1 {
			t.Fatalf("%s: %d cards (%d hidden), %v", p.Title, len(cards), hidden, err)
		}
		c := cards[0]
		if c.SharkID != users["pragmatist"].ID || !near(c.Total, w[0]) || c.TypedTotal == nil || *c.TypedTotal != w[1] {
			t.Errorf("%s: total %.2f typed %v, want %.2f and %.2f", p.Title, c.Total, c.TypedTotal, w[0], w[1])
		}
	}
	st, _ := db.Standings(ctx, nil, 1)
	if st.Pitches[0].Title != "Pipeline Stages" || st.WinnerID != st.Pitches[0].PitchID || st.Pitches[0].Votes != 2 || st.DecidedBy != pitches.DecidedByVotes {
		t.Errorf("round 1 standings %+v", st)
	}

	// Round 2: the Oracle's personal weights, re-pitch links, withdrawals, his vote.
	if w, _ := db.PersonalWeights(ctx, users["oracle"].ID, 2); w["kernel_evidence"] != 25 || w["pitch_quality"] != 0 {
		t.Errorf("oracle's round-2 weights %v", w)
	}
	r2, _ := db.Pitches(ctx, 2)
	totals := []float64{5.10, 8.75, 6.50, 5.40}
	typed := []float64{4.2, 8.7, 6.5, 5.3}
	withdrawn := []bool{true, false, false, true}
	if len(r2) != 4 {
		t.Fatalf("round 2 has %d pitches", len(r2))
	}
	for i, p := range r2 {
		if p.RepitchOf != r1[i].ID {
			t.Errorf("%s re-pitches %d, want %s (%d)", p.Title, p.RepitchOf, r1[i].Title, r1[i].ID)
		}
		if (p.Status == pitches.PitchWithdrawn) != withdrawn[i] {
			t.Errorf("%s status %s", p.Title, p.Status)
		}
		cards, _, _ := db.VisibleScorecards(ctx, nil, p.ID)
		if len(cards) != 1 || !near(cards[0].Total, totals[i]) || *cards[0].TypedTotal != typed[i] || cards[0].Weights["speedup"] != 35 {
			t.Errorf("%s: oracle's card %+v, want total %.2f typed %.1f", p.Title, cards, totals[i], typed[i])
		}
	}
	orig, _ := db.Pitch(ctx, r1[1].ID)
	if len(orig.RepitchedBy) != 1 || orig.RepitchedBy[0] != r2[1].ID {
		t.Errorf("round-1 tile pitch RepitchedBy %v", orig.RepitchedBy)
	}
	st, _ = db.Standings(ctx, nil, 2)
	if st.WinnerID != r2[1].ID {
		t.Errorf("round 2 winner %d, want Tile Size Tuning %d", st.WinnerID, r2[1].ID)
	}

	// Round 5: judging; the Pragmatist voted for C; the Oracle can still score and vote.
	r5, _ := db.Pitches(ctx, 5)
	if len(r5) != 3 || r5[2].Variant != "baseline?launch=streams" {
		t.Fatalf("round 5 pitches %+v", r5)
	}
	votes, _ := db.VisibleVotes(ctx, users["admin"], 5)
	if len(votes) != 1 || votes[0].SharkID != users["pragmatist"].ID || votes[0].PitchID != r5[2].ID {
		t.Errorf("round 5 votes %+v, want the Pragmatist's for C", votes)
	}
	if vs, _ := db.VisibleVotes(ctx, users["oracle"], 5); len(vs) != 0 {
		t.Errorf("oracle sees round-5 votes before voting")
	}
	scores := map[string]float64{"speedup": 7, "feasibility": 8, "risk": 8, "pitch_quality": 7}
	if _, err := db.SubmitScorecard(ctx, users["oracle"], r5[2].ID, pitches.ScorecardInput{Scores: scores, Estimate: pitches.Range{Lo: 2, Hi: 4}}); err != nil {
		t.Errorf("oracle scoring round 5: %v", err)
	}
	if _, err := db.CastVote(ctx, users["oracle"], 5, pitches.VoteInput{PitchID: r5[1].ID, Justification: "try it"}); err != nil {
		t.Errorf("oracle voting in round 5: %v", err)
	}

	// A second load is refused and changes nothing.
	before, _ := db.Users(ctx)
	if _, err := demo.Load(ctx, db); pitches.ErrorCode(err) != pitches.ECONFLICT {
		t.Errorf("second load: %v, want conflict", err)
	}
	after, _ := db.Users(ctx)
	if len(before) != len(after) {
		t.Errorf("second load created users")
	}
}

// Round 1's B200 measurement of Pipeline Stages is an imported run of that
// pitch: geomean 0.7355 over 373->488, 372->462, 173->249, 156->228 us, and
// the Pragmatic Engineer's vote carries the deal terms of his justification.
func TestDemoImportedRun(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := demo.Load(ctx, db); err != nil {
		t.Fatal(err)
	}
	yes := true
	runs, err := db.List(ctx, runner.Filter{Imported: &yes, WithShapes: true})
	if err != nil {
		t.Fatal(err)
	}
	var b200 []runner.Run
	for _, r := range runs {
		if r.Device == "B200" {
			b200 = append(b200, r)
		}
	}
	if len(b200) != 1 {
		t.Fatalf("imported B200 runs: %d of %d imports", len(b200), len(runs))
	}
	run := b200[0]
	p, err := db.Pitch(ctx, run.PitchID)
	if err != nil || p.Title != "Pipeline Stages" || p.RoundNumber != 1 {
		t.Fatalf("pitch of the import: %+v %v", p, err)
	}
	if run.Device != "B200" || run.Status != runner.StatusSucceeded || math.Abs(run.Speedup.Value-0.7355) > 5e-5 || len(run.Shapes) != 4 {
		t.Fatalf("imported run %+v", run)
	}
	want := []float64{0.764, 0.805, 0.695, 0.684}
	for i, s := range run.Shapes {
		if math.Abs(s.Speedup.Value-want[i]) > 5e-4 {
			t.Errorf("shape %d speedup %.4f, want %.3f", i, s.Speedup.Value, want[i])
		}
	}
	votes, err := db.VisibleVotes(ctx, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	withTerms := 0
	for _, v := range votes {
		if !v.Terms.Empty() {
			withTerms++
			if v.Terms.MinGeomean == nil || *v.Terms.MinGeomean != 1.4 || v.Terms.MaxVariation == nil || *v.Terms.MaxVariation != 0.05 {
				t.Errorf("terms %+v", v.Terms)
			}
		}
	}
	if withTerms != 1 {
		t.Errorf("%d votes with deal terms, want 1", withTerms)
	}
}

// The team's own ladder (round 6): one pitch of the "team" contestant per
// rung of kernels/ladder.json, its claim the range predicted before the
// runs, and one imported H100 run per pitch carrying the result documents'
// per-shape medians (internal/demo/ladder_h100.json).
func TestDemoLadderRound(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := demo.Load(ctx, db); err != nil {
		t.Fatal(err)
	}
	team, err := db.Authenticate(ctx, "team", "demo-team")
	if err != nil || team.DisplayName != "The pitchtank team" || team.Role != pitches.RoleContestant {
		t.Fatalf("team account: %+v %v", team, err)
	}
	round, err := db.Round(ctx, 6)
	if err != nil || round.Status != pitches.RoundClosed || len(round.Criteria) != 4 || round.Criteria[0].Weight != 40 {
		t.Fatalf("round 6: %+v %v", round, err)
	}
	round7, err := db.Round(ctx, 7)
	if err != nil || round7.Status != pitches.RoundClosed || round7.Measurement.Problem != "nvfp4_dual_gemm" {
		t.Fatalf("round 7: %+v %v", round7, err)
	}
	rounds := map[int]*pitches.Round{6: round, 7: round7}
	rungs, err := kernels.Ladder()
	if err != nil {
		t.Fatal(err)
	}
	data := readLadderData(t, "ladder_h100.json").Rungs
	h200 := readLadderData(t, "ladder_h200.json")
	h200Seen := 0
	// Round 6 holds the group GEMM's rungs, round 7 the dual GEMM's.
	all, err := db.Pitches(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	dual, err := db.Pitches(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, dual...)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	var ps []pitches.Pitch // the ladder's; the submitted kernel's pitch is TestDemoSubmittedKernel's
	for _, p := range all {
		if _, _, ok := pitches.ParseKernelVariant(p.Variant); !ok {
			ps = append(ps, p)
		}
	}
	if len(ps) != len(rungs) || len(all) != len(rungs)+1 {
		t.Fatalf("rounds 6 and 7 have %d pitches, ladder.json %d rungs", len(ps), len(rungs))
	}
	roundOf := map[string]int{"nvfp4_group_gemm": 6, "nvfp4_dual_gemm": 7}
	hits := 0
	for i, p := range ps {
		r := rungs[i]
		if p.ContestantID != team.ID || p.RoundNumber != roundOf[r.Problem] || p.Title != r.Title || p.Variant != r.Variant || p.Body == "" ||
			p.Claim.Lo != r.Predicted.Lo || p.Claim.Hi != r.Predicted.Hi {
			t.Errorf("pitch %d %+v does not match rung %+v", i, p, r)
			continue
		}
		runs, err := db.List(ctx, runner.Filter{PitchID: p.ID, WithShapes: true})
		// The H100 run, and one more where ladder_h200.json measured the
		// rung again (imported after it: newest first).
		again := h200.Rungs[r.Problem+" "+r.Variant]
		want := 1
		if again != nil {
			want = 2
		}
		if err != nil || len(runs) != want {
			t.Errorf("%s: %d runs, want %d (%v)", p.Title, len(runs), want, err)
			continue
		}
		if again != nil {
			checkH200Run(t, p, rounds[p.RoundNumber], h200.Device, again, runs)
			runs = runs[1:]
			h200Seen++
		}
		run := runs[0]
		// A shape over 10x makes the run suspect; the demo's admin accepts it
		// with a written reason.
		if !run.Imported || (run.Status != runner.StatusSucceeded && !run.Accepted()) || run.Problem != r.Problem || run.Suite != runner.SuiteBenchmarks ||
			run.Device != "NVIDIA H100 80GB HBM3 (pitchtank ladder, 2026-11-22..28)" || run.Variant != r.Variant || run.Baseline != "baseline" {
			t.Errorf("%s: run %+v", p.Title, run)
		}
		if run.Status == runner.StatusSuspect && !strings.Contains(run.AcceptReason, "not a skipped computation") {
			t.Errorf("%s: accepted without the demo's reason: %q", p.Title, run.AcceptReason)
		}
		m := data[r.Problem+" "+r.Variant]
		if m == nil || len(run.Shapes) != len(m.Shapes) || len(m.Shapes) != 4 {
			t.Errorf("%s: %d shapes, data %+v", p.Title, len(run.Shapes), m)
			continue
		}
		fromMedians := checkImportedShapes(t, p.Title, &run, m)
		// The import divides the medians; kernels/ladder.json records bench's
		// paired geomean (the geometric mean of the per-round ratios, rounded
		// to 4 places), the same documents' headline. The two estimators
		// agree to 1e-3 where the timing distributions are tight; the stream
		// launch's (rel SEM 0.2%) differ by 0.57%, so the comparison with
		// ladder.json allows 1% and the one with the medians is exact.
		if math.Abs(run.Speedup.Value-fromMedians) > 1e-9 {
			t.Errorf("%s: imported geomean %.6f, medians give %.6f", p.Title, run.Speedup.Value, fromMedians)
		}
		if r.Measured == nil || math.Abs(m.PairedGeomean-*r.Measured) > 5e-5 {
			t.Errorf("%s: ladder.json measured %v, document's paired geomean %.4f", p.Title, r.Measured, m.PairedGeomean)
			continue
		}
		diff := math.Abs(run.Speedup.Value - *r.Measured)
		t.Logf("%-40s claim %.2f-%.2f  ladder.json %.4f  import %.4f  |diff| %.4f", r.Problem+" "+r.Variant, r.Predicted.Lo, r.Predicted.Hi, *r.Measured, run.Speedup.Value, diff)
		if diff > 0.01**r.Measured {
			t.Errorf("%s: imported geomean %.4f vs ladder.json %.4f", p.Title, run.Speedup.Value, *r.Measured)
		}
		// The calibration page scores a pitch's claim as its contestant's
		// prediction against its accepted run: the team's claims score.
		sc, err := runner.ScorePrediction(p.Claim.Lo, p.Claim.Hi, run.Speedup.Value)
		if err != nil {
			t.Errorf("%s: claim cannot be scored: %v", p.Title, err)
			continue
		}
		// The import recomputes the geomean from the shapes (within 1% of
		// bench's, checked above), so a measurement that close to an end of
		// the claim may score either way: skip the comparison there.
		nearEnd := math.Abs(*r.Measured-r.Predicted.Lo) < 0.01**r.Measured || math.Abs(*r.Measured-r.Predicted.Hi) < 0.01**r.Measured
		if !nearEnd && sc.Hit != (*r.Measured >= r.Predicted.Lo && *r.Measured <= r.Predicted.Hi) {
			t.Errorf("%s: hit %v for %.4f in %.2f-%.2f", p.Title, sc.Hit, run.Speedup.Value, r.Predicted.Lo, r.Predicted.Hi)
		}
		if sc.Hit {
			hits++
		}
	}
	t.Logf("the team's claims: %d of %d inside the measured geomean", hits, len(ps))
	if h200Seen != len(h200.Rungs) || h200Seen == 0 {
		t.Errorf("%d rungs have an H200 run, ladder_h200.json measures %d", h200Seen, len(h200.Rungs))
	}
	// Round 5 stays the current round: the ladder's round is closed.
	if cur, _ := db.CurrentRound(ctx); cur.Number != 5 {
		t.Errorf("current round %d, want 5", cur.Number)
	}
}

type ladderMeas struct {
	Problem       string  `json:"problem"`
	Variant       string  `json:"variant"`
	PairedGeomean float64 `json:"paired_geomean"`
	Shapes        []struct {
		Label      string  `json:"label"`
		BaselineUs float64 `json:"baseline_us"`
		VariantUs  float64 `json:"variant_us"`
	} `json:"shapes"`
}

// ladderFile is one of the ladder measurement files, its rungs keyed by
// problem and variant.
type ladderFile struct {
	Device string
	Rungs  map[string]*ladderMeas
}

// readLadderData reads an embedded data file from the package directory.
func readLadderData(t *testing.T, name string) ladderFile {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Device string        `json:"device"`
		Rungs  []*ladderMeas `json:"rungs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := ladderFile{Device: doc.Device, Rungs: map[string]*ladderMeas{}}
	for _, m := range doc.Rungs {
		out.Rungs[m.Problem+" "+m.Variant] = m
	}
	return out
}

// checkH200Run checks the newest of a ladder pitch's runs (newest first):
// the rung's H200 measurement m, imported with its device label and
// medians, and listed beside the pitch's result under round's
// measurement, never counted in it.
func checkH200Run(t *testing.T, p pitches.Pitch, round *pitches.Round, device string, m *ladderMeas, runs []runner.Run) {
	t.Helper()
	run := runs[0]
	if !run.Imported || run.Device != device || !strings.Contains(device, "H200") || run.Problem != m.Problem ||
		run.Variant != m.Variant || run.Baseline != "baseline" || run.Suite != runner.SuiteBenchmarks ||
		(run.Status != runner.StatusSucceeded && !run.Accepted()) || len(run.Shapes) != len(m.Shapes) {
		t.Errorf("%s: H200 run %+v", p.Title, run)
		return
	}
	if want := checkImportedShapes(t, p.Title+" (H200)", &run, m); math.Abs(run.Speedup.Value-want) > 1e-9 {
		t.Errorf("%s: H200 geomean %.6f, medians give %.6f", p.Title, run.Speedup.Value, want)
	}
	res := runner.ResultOf(runner.MeasurementOf(round), runs)
	if res.CountsRun(run.ID) {
		t.Errorf("%s: the H200 run counts in a round measured on the H100", p.Title)
	}
	// The group rung differs from the round's measurement only by its
	// device; the dual rungs first by their problem.
	want := "device"
	if m.Problem != round.Measurement.Problem {
		want = "problem"
	}
	found := false
	for _, x := range res.Other {
		found = found || (x.Run.ID == run.ID && x.Field == want)
	}
	if !found {
		t.Errorf("%s: H200 run not listed beside the result by %s: %+v", p.Title, want, res.Other)
	}
}

// checkImportedShapes checks that run's shapes carry m's labels and
// medians, each correct, and returns the geomean of m's median ratios
// (what the import computes).
func checkImportedShapes(t *testing.T, title string, run *runner.Run, m *ladderMeas) float64 {
	t.Helper()
	logs := 0.0
	for j, s := range run.Shapes {
		w := m.Shapes[j]
		if s.Label != w.Label || s.BaselineMedianUs != w.BaselineUs || s.VariantMedianUs != w.VariantUs || !s.Correct {
			t.Errorf("%s shape %d: %+v, want %+v", title, j, s, w)
		}
		logs += math.Log(w.BaselineUs / w.VariantUs)
	}
	return math.Exp(logs / float64(len(m.Shapes)))
}
