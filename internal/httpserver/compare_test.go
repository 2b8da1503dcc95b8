package httpserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// importOn stores an import of pitch p (0: none) from device with one
// shape per (label, baseline us, variant us) and raw samples around them,
// so every figure has an interval.
func importOn(t *testing.T, a *app, pitchID int64, device string, shapes ...[3]float64) *runner.Run {
	t.Helper()
	labels := []string{"g=8 N=4096 K=7168", "g=8 N=7168 K=2048"}
	req := &runner.ImportRequest{Device: device, Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline",
		Baseline: "baseline", PitchID: pitchID}
	for i, sh := range shapes {
		spread := func(x float64) []float64 { return []float64{x * 0.99, x, x * 1.01, x * 1.005, x * 0.995} }
		req.Shapes = append(req.Shapes, runner.ImportShape{Label: labels[i], BaselineUs: sh[1], VariantUs: sh[2],
			BaselineSamplesUs: spread(sh[1]), VariantSamplesUs: spread(sh[2])})
	}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		t.Fatalf("import document: %v", err)
	}
	run, res, err := req.ImportResult(a.users["admin"].ID)
	if err != nil {
		t.Fatalf("import result: %v", err)
	}
	stored, err := a.db.Import(context.Background(), run, res)
	if err != nil {
		t.Fatalf("store import: %v", err)
	}
	full, err := a.db.Get(context.Background(), stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

func TestCompareIDs(t *testing.T) {
	for q, want := range map[string]string{
		"ids=1,2":                           "1,2",
		"ids=3&ids=1":                       "1,3",
		"ids=3,1":                           "3,1",
		"ids=1,2,2,":                        "1,2",
		"ids=+1,+2":                         "1,2",
		"ids=1":                             "error",
		"ids=":                              "error",
		"":                                  "error",
		"ids=1,x":                           "error",
		"ids=0,1":                           "error",
		"ids=1,2,3,4,5,6,7,8,9,10,11,12,13": "error",
	} {
		vals, _ := url.ParseQuery(q)
		ids, err := compareIDs(vals)
		got := joinIDs(ids)
		if err != nil {
			got = "error"
			if pitches.ErrorField(err) != "ids" {
				t.Errorf("%q: error names %q, want ids", q, pitches.ErrorField(err))
			}
		}
		if got != want {
			t.Errorf("compareIDs(%q) = %s, want %s", q, got, want)
		}
	}
}

func TestNotComparable(t *testing.T) {
	a := &runner.Run{ID: 1, HasResult: true, Imported: true, Device: "B200", Problem: "nvfp4_group_gemm", Suite: "benchmarks"}
	b := *a
	b.ID = 2
	if why := notComparable(a, &b); why != "" {
		t.Errorf("same device, problem and suite: %q", why)
	}
	b.Problem, b.Suite = "nvfp4_dual_gemm", "tests"
	if why := notComparable(a, &b); why != "not comparable: different problem / suite" {
		t.Errorf("problem and suite differ: %q", why)
	}
	b.Device = "H100"
	if why := notComparable(a, &b); !strings.HasPrefix(why, "not comparable: different device / problem / suite (") {
		t.Errorf("everything differs: %q", why)
	}
}

func TestRatioInterval(t *testing.T) {
	iv := ratioInterval(200, 2, 100, 1)
	if iv.Value != 2 {
		t.Fatalf("ratio %v, want 2", iv.Value)
	}
	se := math.Hypot(0.01, 0.01)
	if math.Abs(iv.Lo-2*math.Exp(-1.96*se)) > 1e-12 || math.Abs(iv.Hi-2*math.Exp(1.96*se)) > 1e-12 {
		t.Errorf("interval %v", iv)
	}
	if iv := ratioInterval(200, 0, 100, 1); iv.HasInterval() || iv.Value != 2 {
		t.Errorf("without the reference's error there is no interval: %v", iv)
	}
	if iv := ratioInterval(0, 1, 100, 1); iv.Value != 0 {
		t.Errorf("no reference time: %v", iv)
	}
}

// The compare endpoint and page: the reference, a comparable run with its
// per-shape ratio and interval, an import from another device named not
// comparable, a run of a hidden pitch without figures for a shark who has
// not scored it, and bad ids refused naming the field.
func TestCompareRuns(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	measuredRound(t, a, 1)
	// Runs under no pitch come before the pitch of their variant is filed:
	// after, they would show its result early (pitches.CheckBlindRun).
	r1 := importOn(t, a, 0, "B200", [3]float64{0, 400, 300}, [3]float64{0, 200, 150})
	r2 := importOn(t, a, 0, "B200", [3]float64{0, 400, 250}, [3]float64{0, 200, 160})
	r3 := importOn(t, a, 0, "H100", [3]float64{0, 500, 450})
	p := a.pitch("alice", 1, "Three stages")
	hiddenRun := importOn(t, a, p.ID, "B200", [3]float64{0, 400, 123.4567})
	ids := fmt.Sprintf("%d,%d,%d,%d", r1.ID, r2.ID, r3.ID, hiddenRun.ID)

	var got compareJSON
	a.api("GET", "/api/runs/compare?ids="+ids, "admin", nil).wantStatus(t, http.StatusOK).decode(t, &got)
	if got.Reference != r1.ID || len(got.Runs) != 4 || !got.Runs[0].Reference {
		t.Fatalf("reference %d, runs %+v", got.Reference, got.Runs)
	}
	if c := got.Runs[1].Comparable; c == nil || !*c || got.Runs[1].NotComparable != "" {
		t.Errorf("run %d on the same device: comparable %v %q", r2.ID, c, got.Runs[1].NotComparable)
	}
	if c := got.Runs[2].Comparable; c == nil || *c || !strings.HasPrefix(got.Runs[2].NotComparable, "not comparable: different device") {
		t.Errorf("run %d on another device: comparable %v %q", r3.ID, c, got.Runs[2].NotComparable)
	}
	if len(got.Shapes) != 2 {
		t.Fatalf("shapes %+v", got.Shapes)
	}
	first := got.Shapes[0]
	if len(first.Cells) != 4 { // admins see the pitch's run too
		t.Fatalf("cells of %s: %+v", first.Label, first.Cells)
	}
	ref, c2, c3 := first.Cells[0], first.Cells[1], first.Cells[2]
	if c2.Run != r2.ID || c2.VsReference == nil || math.Abs(c2.VsReference.Value-ref.VariantMedianUs/c2.VariantMedianUs) > 1e-9 {
		t.Fatalf("run %d against the reference: %+v (reference %+v)", r2.ID, c2, ref)
	}
	if !c2.VsReference.HasInterval() || !(c2.VsReference.Lo < c2.VsReference.Value && c2.VsReference.Value < c2.VsReference.Hi) {
		t.Errorf("the ratio's interval: %+v", c2.VsReference)
	}
	if c3.VsReference != nil {
		t.Errorf("a run of another device has no ratio: %+v", c3)
	}
	if ref.VsReference != nil {
		t.Errorf("the reference has no ratio to itself: %+v", ref)
	}

	// A shark who has not scored the pitch: the pitch's run shows what was
	// asked, nothing measured.
	res := a.api("GET", "/api/runs/compare?ids="+ids, "oracle", nil).wantStatus(t, http.StatusOK)
	var blind compareJSON
	res.decode(t, &blind)
	h := blind.Runs[3]
	if !h.ResultHidden || h.Speedup != nil || h.Status != runner.StatusMeasured || h.Comparable != nil || h.DeviceName != "" {
		t.Errorf("hidden run as the shark sees it: %+v", h)
	}
	for _, sh := range blind.Shapes {
		for _, c := range sh.Cells {
			if c.Run == hiddenRun.ID {
				t.Errorf("hidden run's figures on %s: %+v", sh.Label, c)
			}
		}
	}
	wantNoJSONNumber(t, res.body, `123\.4[56]\d*`, `3\.24\d*`)
	page := a.browser().login("oracle").get("/runs/compare?ids="+ids).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "results hidden", "not comparable: different device", "data-compare-chart", "/runs/compare?ids="+ids)
	wantNotContains(t, page, "123.46", "3.24")
	adminPage := a.browser().login("admin").get("/runs/compare?ids="+ids).wantStatus(t, http.StatusOK).body
	wantContains(t, adminPage, "123.46", "reference", "against the reference")

	// Checkbox form on /runs: ids repeated reach the same comparison.
	runsPage := a.browser().login("admin").get("/runs").wantStatus(t, http.StatusOK).body
	wantContains(t, runsPage, `action="/runs/compare"`, `name="ids"`)
	rep := a.browser().login("admin").get(fmt.Sprintf("/runs/compare?ids=%d&ids=%d", r1.ID, r2.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, rep, fmt.Sprintf("/runs/compare?ids=%d,%d", r1.ID, r2.ID))

	// The reference picked: run 2's times are the ones the others are set
	// against, the permalink keeps the choice, and the chart draws run 1
	// against it and leaves the other device's run out.
	var picked compareJSON
	a.api("GET", fmt.Sprintf("/api/runs/compare?ids=%s&ref=%d", ids, r2.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &picked)
	if picked.Reference != r2.ID || !picked.Runs[1].Reference || picked.Runs[0].Reference {
		t.Fatalf("ref=%d: reference %d, runs %+v", r2.ID, picked.Reference, picked.Runs)
	}
	if c := picked.Shapes[0].Cells[0]; c.Run != r1.ID || c.VsReference == nil ||
		math.Abs(c.VsReference.Value-picked.Shapes[0].Cells[1].VariantMedianUs/c.VariantMedianUs) > 1e-9 {
		t.Fatalf("run %d against the picked reference: %+v", r1.ID, c)
	}
	refPage := a.browser().login("admin").get(fmt.Sprintf("/runs/compare?ids=%s&ref=%d", ids, r2.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, refPage, fmt.Sprintf("/runs/compare?ids=%s&amp;ref=%d", ids, r2.ID), "data-make-reference",
		fmt.Sprintf("#%d baseline (reference)", r2.ID), "(not drawn)")
	// The viewer may not see the pitch's run: it cannot be their reference.
	a.api("GET", fmt.Sprintf("/api/runs/compare?ids=%s&ref=%d", ids, hiddenRun.ID), "oracle", nil).wantError(t, http.StatusBadRequest, "bad_request", "ref")
	a.api("GET", fmt.Sprintf("/api/runs/compare?ids=%s&ref=9999", ids), "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "ref")

	// Bad input: 400 naming ids, 404 for a run that does not exist.
	a.api("GET", "/api/runs/compare?ids=1", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "ids")
	a.api("GET", "/api/runs/compare?ids=1,zz", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "ids")
	a.api("GET", fmt.Sprintf("/api/runs/compare?ids=%d,9999", r1.ID), "admin", nil).wantError(t, http.StatusNotFound, "not_found", "ids")
	a.browser().login("admin").get("/runs/compare?ids=x").wantStatus(t, http.StatusBadRequest)
}
