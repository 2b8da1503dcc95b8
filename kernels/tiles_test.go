package kernels_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// tile_m=auto and tile_n=auto parse, name themselves canonically, stand for
// the declared sizes the other knobs allow, and are refused where none fits.
func TestTileAutoKnobs(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "baseline?tile_m=auto")
	if v.Name != "baseline?tile_m=auto" || v.Knobs.TileM != kernels.TileAuto || v.Defines()["TILE_M"] != "auto" {
		t.Errorf("%q TileM %d defines %v", v.Name, v.Knobs.TileM, v.Defines())
	}
	names := func(vs []kernels.Variant) string {
		var s []string
		for _, c := range vs {
			s = append(s, c.Name)
		}
		return strings.Join(s, " ")
	}
	for spec, want := range map[string]string{
		"baseline?tile_m=auto":                     "baseline?tile_m=64 baseline",
		"baseline?tile_n=auto&swap_ab=true":        "baseline?tile_n=64&swap_ab=true baseline?swap_ab=true",
		"baseline?tile_m=auto&tile_n=256":          "baseline?tile_m=64&tile_n=256",
		"baseline?tile_m=auto&tile_n=auto":         "baseline?tile_m=64&tile_n=64 baseline?tile_m=64 baseline?tile_m=64&tile_n=256 baseline?tile_n=64 baseline",
		"baseline?tile_m=64&tile_n=auto":           "baseline?tile_m=64&tile_n=64 baseline?tile_m=64 baseline?tile_m=64&tile_n=256",
		"baseline?tile_m=auto&epilogue=tma":        "baseline?tile_m=64&epilogue=tma baseline?epilogue=tma",
		"baseline?tile_m=auto&launch=grouped":      "baseline?tile_m=64&launch=grouped baseline?launch=grouped",
		"baseline?tile_n=auto&stages=4&tile_k=128": "baseline?tile_n=64&tile_k=128&stages=4 baseline?tile_k=128&stages=4 ",
	} {
		got := names(resolve(t, g, spec).Candidates())
		if strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("%s: candidates %q, want %q", spec, got, want)
		}
	}
	if c := resolve(t, g, "baseline?tile_m=64").Candidates(); len(c) != 1 || c[0].Name != "baseline?tile_m=64" {
		t.Errorf("a concrete variant is its own candidate: %v", c)
	}
	if c := resolve(t, g, "baseline?epilogue=tma&tile_m=auto").Candidates(); c[0].MinArch != 90 {
		t.Errorf("tma candidates need sm_90: %d", c[0].MinArch)
	}
	// The dual GEMM: 128x128 and x256 tiles need too many accumulators.
	d := problem(t, "nvfp4_dual_gemm")
	if got := names(resolve(t, d, "baseline?tile_m=auto&tile_n=auto").Candidates()); got != "baseline?tile_n=64 baseline baseline?tile_m=128&tile_n=64" {
		t.Errorf("dual auto candidates %q", got)
	}
	var ke *kernels.KnobError
	if _, err := d.ResolveVariant("baseline?tile_m=auto&tile_n=256"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "no declared tile size") {
		t.Errorf("dual auto x 256: %v", err)
	}
	if _, err := g.ResolveVariant("baseline?tile_k=auto"); !errors.As(err, &ke) || ke.Knob != "tile_k" {
		t.Errorf("tile_k=auto: %v", err)
	}
	// The fused family declares no auto tile.
	if _, err := g.ResolveVariant("fused?tile_m=auto"); !errors.As(err, &ke) {
		t.Errorf("fused tile_m=auto: %v", err)
	}
}

// An auto variant's plan is its resolved candidate's plan, named in
// Plan.Resolved; a plan made without the device's SM count takes the
// family's default tile.
func TestTileAutoPlan(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	v := resolve(t, g, "baseline?tile_m=auto&tile_n=auto&launch=grouped")
	for _, s := range g.Benchmarks {
		pl, err := v.Plan(s, h100)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := v.Resolve(s, h100)
		if err != nil || pl.Resolved != cv.Name {
			t.Fatalf("%v: plan runs %q, Resolve says %q (%v)", s, pl.Resolved, cv.Name, err)
		}
		want, err := cv.Plan(s, h100)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Launches[0].Grid != want.Launches[0].Grid || pl.Launches[0].SharedBytes != want.Launches[0].SharedBytes || want.Resolved != "" {
			t.Errorf("%v: auto plan %+v, concrete %+v", s, pl.Launches[0], want.Launches[0])
		}
	}
	cv, err := v.Resolve(g.Benchmarks[0], kernels.Limits{})
	if err != nil || cv.Knobs.TileM != 128 || cv.Knobs.TileN != 128 {
		t.Errorf("no device: %q %v", cv.Name, err)
	}
	d := problem(t, "nvfp4_dual_gemm")
	if cv, _ := resolve(t, d, "baseline?tile_m=auto&tile_n=auto").Resolve(d.Benchmarks[0], kernels.Limits{}); cv.Knobs.TileM != 64 || cv.Knobs.TileN != 128 {
		t.Errorf("dual, no device: %q", cv.Name)
	}
	if _, err := v.Resolve(kernels.Shape{M: []int{1}, N: 100, K: 128}, h100); err == nil {
		t.Error("a bad shape resolved")
	}
}

// The model reproduces the H100 medians it was calibrated on (sequential
// launches, docs/VARIANTS.md: baseline and baseline?tile_m=64 on the four
// group benchmark shapes, the dual baseline on dual shape 1) and, within
// 10%, the grouped launch's medians it was not fitted on.
func TestTileModelCalibration(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	d := problem(t, "nvfp4_dual_gemm")
	for _, tc := range []struct {
		p        *kernels.Problem
		spec     string
		measured []float64
		tol      float64
	}{
		{g, "baseline", []float64{1807.2, 550.0, 263.5, 108.3}, 0.06},
		{g, "baseline?tile_m=64", []float64{1289.1, 517.6, 191.7, 95.6}, 0.03},
		{g, "baseline?launch=grouped", []float64{545.7, 308.1, 130.8, 55.6}, 0.10},
		{d, "baseline", []float64{317.63}, 0.01},
	} {
		k := resolve(t, tc.p, tc.spec).Knobs
		for i, want := range tc.measured {
			got := kernels.BaselineCostUS(tc.p.Name, tc.p.Benchmarks[i], k, h100)
			if math.Abs(got/want-1) > tc.tol {
				t.Errorf("%s %s shape %d: model %.1f us, measured %.1f (more than %.0f%% apart)", tc.p.Name, tc.spec, i, got, want, 100*tc.tol)
			}
		}
	}
}

// The model's choices on the benchmark shapes (H100 limits), the table of
// docs/KNOBS.md. Sequential launches run one group at a time, so a group's
// tiles rarely fill 132 SMs and the tile with the shortest lone-block time
// that still fits one wave wins (64x64); one pool of all groups' tiles
// (grouped, streams) fills the SMs, and the larger tiles' lower cost per
// output wins there.
func TestTileAutoChoices(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	d := problem(t, "nvfp4_dual_gemm")
	for _, tc := range []struct {
		p    *kernels.Problem
		spec string
		want []string // TileMxTileN per benchmark shape
	}{
		{g, "baseline?tile_m=auto", []string{"64x128", "64x128", "64x128", "64x128"}},
		{g, "baseline?tile_n=auto", []string{"128x64", "128x64", "128x64", "128x64"}},
		{g, "baseline?tile_m=auto&tile_n=auto", []string{"64x64", "64x64", "64x128", "64x64"}},
		{g, "baseline?tile_m=auto&tile_n=auto&swap_ab=true", []string{"64x64", "64x64", "64x128", "64x64"}},
		{g, "baseline?tile_m=auto&tile_n=auto&launch=grouped", []string{"64x128", "64x128", "64x64", "128x128"}},
		{g, "baseline?tile_m=auto&tile_n=auto&launch=streams", []string{"64x128", "64x128", "64x64", "128x128"}},
		{d, "baseline?tile_m=auto&tile_n=auto", []string{"128x64", "128x64", "128x64", "64x64"}},
		{d, "baseline?tile_n=auto", []string{"64x64", "64x128", "64x64", "64x64"}},
	} {
		v := resolve(t, tc.p, tc.spec)
		for i, s := range tc.p.Benchmarks {
			cv, err := v.Resolve(s, h100)
			if err != nil {
				t.Fatal(err)
			}
			got := fmtTile(cv.Knobs)
			if got != tc.want[i] {
				t.Errorf("%s %s on %v: picks %s, want %s", tc.p.Name, tc.spec, s, got, tc.want[i])
			}
			// The pick is the cheapest candidate.
			best := kernels.BaselineCostUS(tc.p.Name, s, cv.Knobs, h100)
			for _, c := range v.Candidates() {
				if us := kernels.BaselineCostUS(tc.p.Name, s, c.Knobs, h100); us < best {
					t.Errorf("%s on %v: %s costs %.1f, below the pick's %.1f", tc.spec, s, c.Name, us, best)
				}
			}
		}
	}
}

func fmtTile(k kernels.Knobs) string {
	return strings.Join([]string{itoa(k.TileM), itoa(k.TileN)}, "x")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// The launch model: a launch of at most one tile per SM takes one
// lone-block time; twice as many tiles on the same SMs take 2 / 1.25 of
// it (two blocks share an SM's 1.25x throughput); more SMs do not help one
// tile; swap_ab=true makes a one-token group's tiles cheaper.
func TestTileModelLaunches(t *testing.T) {
	g := problem(t, "nvfp4_group_gemm")
	k := resolve(t, g, "baseline?tile_m=64").Knobs
	one := kernels.Shape{M: []int{64}, N: 64 * 128, K: 2048}   // 64 tiles of 64x128
	two := kernels.Shape{M: []int{128}, N: 128 * 132, K: 2048} // 2 x 132 tiles
	few := kernels.Limits{SMs: 132}
	lone := kernels.BaselineCostUS(g.Name, one, k, few) - 4
	if want := 8 * (0.02578*192 + 8.06e-5*64*128); math.Abs(lone-want) > 1e-6 {
		t.Errorf("one wave of lone blocks: %.3f us, want %.3f", lone, want)
	}
	// 264 tiles on 132 SMs, two per SM.
	if got := kernels.BaselineCostUS(g.Name, two, k, few) - 4; math.Abs(got-lone*2/1.25) > 1e-6 {
		t.Errorf("two blocks per SM: %.3f us, want %.3f", got, lone*2/1.25)
	}
	if a, b := kernels.BaselineCostUS(g.Name, one, k, few), kernels.BaselineCostUS(g.Name, one, k, kernels.Limits{SMs: 1000}); a != b {
		t.Errorf("more SMs than tiles changed the time: %.1f vs %.1f", a, b)
	}
	m1 := kernels.Shape{M: []int{1}, N: 4096, K: 4096}
	ks := k
	ks.SwapAB = true
	if a, b := kernels.BaselineCostUS(g.Name, m1, k, few), kernels.BaselineCostUS(g.Name, m1, ks, few); b >= a {
		t.Errorf("M=1: swapped %.1f us, not below unswapped %.1f", b, a)
	}
}
