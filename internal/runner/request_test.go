package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
)

func TestSubmitRejectsBadRequests(t *testing.T) {
	r := newRunner(t, runner.Config{Devices: []string{"0", "1", "cpu"}, Command: standIn(t, map[int64]string{}, "")})
	gpu := func(mod func(*runner.Request)) runner.Request {
		req := runner.Request{Problem: groupProblem, Suite: "benchmarks", Variant: "baseline?stages=3", Baseline: "baseline", Device: "0"}
		mod(&req)
		return req
	}
	cases := []struct {
		name     string
		req      runner.Request
		field    string
		contains string
	}{
		{"no problem", gpu(func(r *runner.Request) { r.Problem = "" }), "problem", "required"},
		{"unknown problem", gpu(func(r *runner.Request) { r.Problem = "fp8_gemm" }), "problem", "nvfp4_group_gemm"},
		{"unknown suite", gpu(func(r *runner.Request) { r.Suite = "all" }), "suite", "unknown suite"},
		{"no variant", gpu(func(r *runner.Request) { r.Variant = " " }), "variant", "required"},
		{"unknown variant", gpu(func(r *runner.Request) { r.Variant = "warp_specialized" }), "variant", "unknown variant"},
		{"knob out of range", gpu(func(r *runner.Request) { r.Variant = "baseline?stages=9" }), "variant", "stages"},
		{"unknown knob", gpu(func(r *runner.Request) { r.Variant = "baseline?pipelining=on" }), "variant", "unknown knob"},
		{"bad baseline", gpu(func(r *runner.Request) { r.Baseline = "baseline?tile_n=48" }), "baseline", "tile_n"},
		{"no device", gpu(func(r *runner.Request) { r.Device = "" }), "device", "required"},
		{"missing device", gpu(func(r *runner.Request) { r.Device = "2" }), "device", "does not exist"},
		{"reference on a GPU", gpu(func(r *runner.Request) { r.Variant = "reference" }), "variant", "reference"},
		{"knob variant on the CPU", gpu(func(r *runner.Request) { r.Device = "cpu" }), "variant", "cpu"},
		{"negative seed", gpu(func(r *runner.Request) { r.Seed = -1 }), "seed", ">= 0"},
		{"no such pitch", gpu(func(r *runner.Request) { r.PitchID = 5 }), "pitch_id", "does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Submit(context.Background(), tc.req)
			if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != tc.field {
				t.Fatalf("err = %v; want EINVALID on %q", err, tc.field)
			}
			if !strings.Contains(pitches.ErrorMessage(err), tc.contains) {
				t.Fatalf("message %q does not say %q", pitches.ErrorMessage(err), tc.contains)
			}
		})
	}
	runs, err := r.List(context.Background(), runner.Filter{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("bad requests queued %d runs (%v)", len(runs), err)
	}
}

func TestNewRejectsBadDevices(t *testing.T) {
	for _, devs := range [][]string{{"gpu0"}, {"-1"}, {"01"}, {"0", "0"}} {
		if _, err := runner.New(runner.Config{Store: openDB(t, t.TempDir()+"/db"), Catalog: runner.KernelsCatalog{}, Devices: devs}); err == nil {
			t.Errorf("devices %q accepted", devs)
		}
	}
}

// A knob's error reaches the caller as a *kernels.KnobError, so the web
// form can point at its knobs field without reading the message.
func TestKnobErrorsStayTyped(t *testing.T) {
	r := newRunner(t, runner.Config{Devices: []string{"0", "cpu"}, Command: standIn(t, map[int64]string{}, "")})
	for variant, knob := range map[string]string{"baseline?stages=9": "stages", "baseline?pipelining=on": "pipelining"} {
		_, err := r.Submit(context.Background(), runner.Request{Problem: groupProblem, Suite: "benchmarks", Variant: variant, Baseline: "baseline", Device: "0"})
		var ke *kernels.KnobError
		if !errors.As(err, &ke) || ke.Knob != knob || pitches.ErrorField(err) != "variant" {
			t.Errorf("%s: err = %v (%T), want a knob error about %s on the variant", variant, err, errors.Unwrap(err), knob)
		}
	}
	_, err := r.Submit(context.Background(), runner.Request{Problem: groupProblem, Suite: "benchmarks", Variant: "warp_specialized", Baseline: "baseline", Device: "0"})
	var ke *kernels.KnobError
	if err == nil || errors.As(err, &ke) {
		t.Errorf("unknown variant: err = %v, want an error that is not a knob's", err)
	}
	m := pitches.KernelManifest{Name: "clear", Knobs: []pitches.KernelKnob{{Key: "unroll", Values: []string{"1", "2"}}}}
	for query, knob := range map[string]string{"unroll=3": "unroll", "stages=2": "stages", "%zz": "%zz"} {
		err := runner.CheckKernelKnobs(m, query)
		if !errors.As(err, &ke) || ke.Knob != knob {
			t.Errorf("submitted kernel, %s: err = %v, want a knob error about %s", query, err, knob)
		}
	}
}
