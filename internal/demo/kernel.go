package demo

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// The demo's submitted kernel: the team pitches examples/kernels/clear (a
// copy is embedded here; TestDemoKernelIsTheExample keeps it identical) in
// round 6 through the same upload path as the web app (the submission
// checker, then the store), and imports its measurement from
// kernel_clear.json when that file holds one.
//
// kernel_clear.json is filled from a GPU run of the example against the
// baseline (`bash dev/gpucall/kernels.sh bench`, document g_clear.json):
// either {"device": ..., "note": ..., "document": <the web bench document>}
// or bare per-shape times {"device", "note", "shapes": [...]} as in
// docs/runs-import.md. With neither, the pitch carries its kernel and its
// claim and shows no result: the demo never shows a figure nobody measured.

//go:embed kernels/clear/manifest.json kernels/clear/clear_gemm.cu
var clearFS embed.FS

//go:embed kernel_clear.json
var kernelClearJSON []byte

// clearFiles is the embedded example as a submission's files.
func clearFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(clearFS, "kernels/clear", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := clearFS.ReadFile(p)
		files[d.Name()] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("demo: read the embedded clear kernel: %w", err)
	}
	return files, nil
}

// kernelMeasurement is kernel_clear.json.
type kernelMeasurement struct {
	Device   string               `json:"device"`
	Note     string               `json:"note"`
	Shapes   []runner.ImportShape `json:"shapes"`
	Document json.RawMessage      `json:"document,omitempty"`
}

func parseKernelMeasurement(b []byte) (*kernelMeasurement, error) {
	var m kernelMeasurement
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("demo: parse kernel_clear.json: %w", err)
	}
	return &m, nil
}

// fileClearKernel files the team's pitch of the clear example in round 6
// (still pitching) and uploads the example to it.
func (l *loader) fileClearKernel() (*pitches.Pitch, error) {
	p, err := l.file("team", pitches.PitchInput{RoundNumber: 6, Title: "A kernel written to be read (submitted)", Category: "submitted kernel",
		Body: "Our first submission through the kernel contract (docs/kernel-contract.md): examples/kernels/clear, the group " +
			"GEMM written to be read. FP4 and e4m3 are decoded to float in shared memory, each thread computes 2 x 2 outputs " +
			"with fp32 FMAs, no tensor cores.\n\n" +
			"- The point is the path, not the speed: upload, compile report, the kernel page with its diff against the " +
			"baseline, and a run measured with the built-ins' protocol.\n" +
			"- Without mma it should be several times slower than the baseline: the claim says so.",
		Claim: pitches.Range{Lo: 0.05, Hi: 0.3}})
	if err != nil {
		return nil, err
	}
	files, err := clearFiles()
	if err != nil {
		return nil, err
	}
	up, err := (&runner.SubmissionChecker{}).Check(l.ctx, files)
	if err != nil {
		return nil, fmt.Errorf("demo: check the clear kernel: %w", err)
	}
	up.Note = "examples/kernels/clear"
	up.Report = pitches.CompileReport{Status: "not compiled",
		Message: "not compiled here: the demo loader stores the example without running web kernel check (CI compiles the examples)"}
	if _, err := l.svc.UploadKernel(l.ctx, l.u("team"), p.ID, *up); err != nil {
		return nil, fmt.Errorf("demo: upload the clear kernel: %w", err)
	}
	return l.svc.Pitch(l.ctx, p.ID)
}

// importClearKernel imports kernel_clear.json's measurement as a run of
// pitch p, when the file holds one. A bench document names the submission
// "kernel" (bench's name for the one it was given); the run records the
// pitch's kernel:<hash>, so the kernel page lists it.
func (l *loader) importClearKernel(p *pitches.Pitch, data []byte) error {
	m, err := parseKernelMeasurement(data)
	if err != nil {
		return err
	}
	if len(m.Shapes) == 0 && len(m.Document) == 0 {
		return nil
	}
	req := &runner.ImportRequest{Device: m.Device, Problem: "nvfp4_group_gemm", Suite: runner.SuiteBenchmarks,
		Baseline: "baseline", PitchID: p.ID, Note: m.Note, Shapes: m.Shapes, Document: m.Document}
	if len(m.Document) == 0 {
		req.Variant = p.Variant
	} else {
		req.Problem, req.Suite, req.Baseline = "", "", ""
	}
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		return fmt.Errorf("demo: import the clear kernel's run: %w", err)
	}
	run, res, err := req.ImportResult(l.u("admin").ID)
	if err != nil {
		return fmt.Errorf("demo: import the clear kernel's run: %w", err)
	}
	run.Variant = p.Variant
	if _, err := l.svc.Import(l.ctx, run, res); err != nil {
		return fmt.Errorf("demo: store the clear kernel's run: %w", err)
	}
	return nil
}
