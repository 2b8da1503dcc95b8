// Package kernelcheck is `web kernel check`: it compiles a submitted kernel
// (a folder with manifest.json, or a lone .cu file) with the local NVRTC for
// every architecture it supports and reports registers, shared memory and
// spills per entry point, or NVRTC's messages as file:line. The server runs
// it as a child process with a time limit and stores --json's report as the
// submission's compile report; it never compiles in the server process.
package kernelcheck

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// Exit codes: as web bench's where they overlap.
const (
	ExitOK      = 0
	ExitFailed  = 1 // some architecture did not compile
	ExitUsage   = 2 // usage, or a submission refused by its manifest's rules
	ExitNoNVRTC = 3 // no NVRTC on this machine
)

// Targets are the architectures a check tries, oldest first, with the
// NVRTC release that added each (major*10+minor).
var Targets = []struct {
	Arch     string
	SM       int
	MinNVRTC int
}{
	{"sm_80", 80, 110},
	{"sm_90a", 90, 120},
	{"sm_100a", 100, 128},
	{"sm_120a", 120, 128},
}

// Report is the check's result (--json prints it).
type Report struct {
	Path         string       `json:"path"`
	Problem      string       `json:"problem"`
	Name         string       `json:"name"`
	Kind         string       `json:"kind"`
	Hash         string       `json:"hash,omitempty"` // the submission's; "" for a lone .cu
	NVRTCVersion string       `json:"nvrtc_version,omitempty"`
	OK           bool         `json:"ok"`
	Archs        []ArchReport `json:"archs"`
	Skipped      []Skip       `json:"skipped"`
}

// ArchReport is one architecture: per compiled variant (the defaults, then
// each other knob value), its entry points' figures, or NVRTC's messages.
type ArchReport struct {
	Arch     string          `json:"arch"`
	OK       bool            `json:"ok"`
	Variants []VariantReport `json:"variants"`
}

// VariantReport is one compile.
type VariantReport struct {
	Variant        string            `json:"variant"`
	Defines        map[string]string `json:"defines"`
	OK             bool              `json:"ok"`
	Messages       string            `json:"messages,omitempty"` // NVRTC's log with file:line locations
	Entries        []Entry           `json:"entries,omitempty"`
	CompileSeconds float64           `json:"compile_seconds"`
	Note           string            `json:"note,omitempty"`
}

// Entry is one entry point's resources (ptxas -v).
type Entry struct {
	Name          string `json:"name"`
	Registers     int    `json:"registers"`
	SharedStatic  int    `json:"shared_static_bytes"`
	SharedDynamic int    `json:"shared_dynamic_bytes"` // the manifest's launch.shared_bytes
	SpillStores   int    `json:"spill_store_bytes"`
	SpillLoads    int    `json:"spill_load_bytes"`
	StackBytes    int    `json:"stack_bytes"`
}

// Skip is an architecture not compiled, and why.
type Skip struct {
	Arch   string `json:"arch"`
	Reason string `json:"reason"`
}

// Main is `web kernel check [--problem NAME] [--json] PATH`.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("web kernel check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	problem := fs.String("problem", "", "the problem the kernel solves (required for a lone .cu; for a folder it must match the manifest's)")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: web kernel check [--problem NAME] [--json] PATH   (PATH: a folder with manifest.json, or a .cu file)")
		fmt.Fprintln(stderr, "exit codes: 0 compiles everywhere it was tried, 1 NVRTC refused it (messages as file:line), 2 usage or an invalid manifest, 3 no NVRTC here")
		fs.PrintDefaults()
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "web kernel check: "+format+"\n", a...)
		return ExitUsage
	}
	// Flags may follow the path (web kernel check PATH --json).
	var paths []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return ExitUsage
			}
			return usage("%v (see web kernel check -h)", err)
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(paths) != 1 {
		return usage("want exactly one PATH (a folder with manifest.json, or a .cu file), got %d", len(paths))
	}
	sub, lone, err := load(paths[0], *problem)
	if err != nil {
		return usage("%v", err)
	}
	rep, err := Check(sub)
	if err != nil {
		fmt.Fprintf(stderr, "web kernel check: %v\n", err)
		return ExitNoNVRTC
	}
	rep.Path = paths[0]
	if lone {
		// No manifest: no submission to address, and no entry declared.
		rep.Hash, rep.Name = "", filepath.Base(paths[0])
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "web kernel check: write the report: %v\n", err)
			return ExitFailed
		}
	} else {
		fmt.Fprint(stdout, Text(rep))
	}
	if !rep.OK {
		if *asJSON {
			// People read stderr; the messages are in the JSON too.
			for _, a := range rep.Archs {
				for _, v := range a.Variants {
					if !v.OK {
						fmt.Fprintf(stderr, "%s %s:\n%s\n", a.Arch, v.Variant, v.Messages)
					}
				}
			}
		}
		return ExitFailed
	}
	return ExitOK
}

// load reads a submission folder, or wraps a lone .cu file in the
// manifest a per-group kernel of that name would have (entry points are
// then whatever ptxas reports).
func load(path, problem string) (s *kernels.Submission, lone bool, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, fmt.Errorf("PATH: %v", err)
	}
	if st.IsDir() {
		s, err := kernels.LoadSubmission(path)
		if err != nil {
			return nil, false, err
		}
		if problem != "" && problem != s.Manifest.Problem {
			return nil, false, fmt.Errorf("--problem %s: the manifest says %s", problem, s.Manifest.Problem)
		}
		return s, false, nil
	}
	if problem == "" {
		return nil, true, fmt.Errorf("--problem is required for a lone .cu file (a folder's manifest names it)")
	}
	if _, err := kernels.LookupProblem(problem); err != nil {
		return nil, true, fmt.Errorf("--problem: %v", strings.TrimPrefix(err.Error(), "kernels: "))
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, true, fmt.Errorf("PATH: %v", err)
	}
	name := filepath.Base(path)
	m := map[string]any{
		"name": "check", "problem": problem, "kind": kernels.KindCUDA, "source": name,
		"min_arch": 80, "entry": "unknown_entry",
		"launch": map[string]any{"mode": "sequential", "block": []int{128, 1, 1}, "tile_m": 128, "tile_n": 128, "shared_bytes": 0},
	}
	raw, _ := json.Marshal(m)
	s, err = kernels.SubmissionFromFiles(map[string][]byte{kernels.ManifestFile: raw, name: src})
	return s, true, err
}

// nvrtcNumber is "12.8" as 128.
func nvrtcNumber(v string) int {
	maj, min, _ := strings.Cut(v, ".")
	a, _ := strconv.Atoi(maj)
	b, _ := strconv.Atoi(min)
	return a*10 + b
}

// Plan lists the architectures a check of a kernel with min_arch compiles
// on NVRTC version ver, and those it skips with the reason. NVRTC before
// 12.0 has no arch-specific targets, so sm_90a is tried as sm_90 there.
func Plan(ver string, minArch int) (archs []string, skipped []Skip) {
	n := nvrtcNumber(ver)
	for _, t := range Targets {
		arch := t.Arch
		switch {
		case t.SM < minArch:
			skipped = append(skipped, Skip{t.Arch, fmt.Sprintf("below the kernel's min_arch %d", minArch)})
			continue
		case t.SM == 90 && n < 120 && n >= 118:
			arch = "sm_90"
			skipped = append(skipped, Skip{t.Arch, fmt.Sprintf("NVRTC %s has no arch-specific targets (sm_90a needs 12.0 or newer): compiled for sm_90 instead, without sm_90a features", ver)})
		case n < t.MinNVRTC:
			skipped = append(skipped, Skip{t.Arch, fmt.Sprintf("NVRTC %s cannot target %s (needs %d.%d or newer)", ver, t.Arch, t.MinNVRTC/10, t.MinNVRTC%10)})
			continue
		}
		archs = append(archs, arch)
	}
	return archs, skipped
}

// Check compiles s (kind cuda) for every architecture of Plan, in its
// default variant and each other knob value. For ptx and cubin it compiles
// nothing: the report says which architectures the image can run on.
func Check(s *kernels.Submission) (*Report, error) {
	m := s.Manifest
	rep := &Report{Problem: m.Problem, Name: m.Name, Kind: m.Kind, Hash: s.Hash(), Archs: []ArchReport{}, Skipped: []Skip{}}
	switch m.Kind {
	case kernels.KindCubin:
		return checkBinary(s, rep)
	case kernels.KindPTX:
		return checkBinary(s, rep)
	}
	ver, err := gpu.NVRTCVersion()
	if err != nil {
		return nil, err
	}
	rep.NVRTCVersion = ver
	archs, skipped := Plan(ver, m.MinArch)
	rep.Skipped = append(rep.Skipped, skipped...)
	variants, err := variantsOf(s)
	if err != nil {
		return nil, err
	}
	rep.OK = true
	for _, arch := range archs {
		ar := ArchReport{Arch: arch, OK: true}
		for _, v := range variants {
			vr := compile(v, arch, s.SharedBytes(v))
			if !vr.OK {
				ar.OK, rep.OK = false, false
			}
			ar.Variants = append(ar.Variants, vr)
		}
		rep.Archs = append(rep.Archs, ar)
	}
	return rep, nil
}

// variantsOf is the default variant, then one per other knob value with
// the rest at their defaults: every declared value compiles at least once
// without the product of all knobs.
func variantsOf(s *kernels.Submission) ([]kernels.Variant, error) {
	p, err := kernels.LookupProblem(s.Manifest.Problem)
	if err != nil {
		return nil, err
	}
	out := []kernels.Variant{s.Variant()}
	for _, k := range s.Manifest.Knobs {
		for _, val := range k.Values {
			if val == k.Default {
				continue
			}
			v, err := p.ResolveSubmission(s, "kernel?"+k.Key+"="+val)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

var nvrtcLocRE = regexp.MustCompile(`(?m)^([^\s()]+)\((\d+)\): `)

// FileLine rewrites NVRTC's "kernel.cu(12): error: ..." locations to the
// "kernel.cu:12: error: ..." form editors and CI logs link.
func FileLine(log string) string { return nvrtcLocRE.ReplaceAllString(log, "$1:$2: ") }

func compile(v kernels.Variant, arch string, dynShared int) VariantReport {
	name := "kernel"
	if i := strings.IndexByte(v.Name, '?'); i >= 0 {
		name += v.Name[i:]
	}
	vr := VariantReport{Variant: name, Defines: v.Defines()}
	src, err := v.Source()
	if err != nil {
		vr.Messages = err.Error()
		return vr
	}
	hdrs, err := v.Headers()
	if err != nil {
		vr.Messages = err.Error()
		return vr
	}
	start := time.Now()
	c, err := gpu.Compile(v.SourceFile, src, gpu.CompileOptions{Arch: arch, Defines: vr.Defines, Flags: []string{"--ptxas-options=-v", "-lineinfo"}, Headers: hdrs})
	vr.CompileSeconds = time.Since(start).Seconds()
	if err != nil {
		var ce *gpu.CompileError
		if errors.As(err, &ce) {
			vr.Messages = FileLine(ce.Log)
		} else {
			vr.Messages = err.Error()
		}
		return vr
	}
	vr.OK = true
	vr.Entries = ParsePtxas(c.Log)
	for i := range vr.Entries {
		vr.Entries[i].SharedDynamic = dynShared
	}
	if len(vr.Entries) == 0 {
		vr.Note = "ptxas reported no entry points (is the kernel extern \"C\" __global__?)"
	}
	return vr
}

var (
	ptxEntryRE = regexp.MustCompile(`Compiling entry function '([^']+)'`)
	ptxSpillRE = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	ptxUsedRE  = regexp.MustCompile(`Used (\d+) registers(?:.*?(\d+) bytes smem)?`)
)

// ParsePtxas reads ptxas -v's per-entry figures from an NVRTC log.
func ParsePtxas(log string) []Entry {
	var out []Entry
	for _, line := range strings.Split(log, "\n") {
		if m := ptxEntryRE.FindStringSubmatch(line); m != nil {
			out = append(out, Entry{Name: m[1]})
			continue
		}
		if len(out) == 0 {
			continue
		}
		e := &out[len(out)-1]
		if m := ptxSpillRE.FindStringSubmatch(line); m != nil {
			e.StackBytes, _ = strconv.Atoi(m[1])
			e.SpillStores, _ = strconv.Atoi(m[2])
			e.SpillLoads, _ = strconv.Atoi(m[3])
		}
		if m := ptxUsedRE.FindStringSubmatch(line); m != nil {
			e.Registers, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				e.SharedStatic, _ = strconv.Atoi(m[2])
			}
		}
	}
	return out
}

// checkBinary reports which target architectures a cubin, fatbin or PTX
// runs on (nothing is compiled: the driver JIT-compiles PTX when the run
// loads it, and the run's build record has its registers); one that runs
// on none of them fails.
func checkBinary(s *kernels.Submission, rep *Report) (*Report, error) {
	m := s.Manifest
	bas, err := s.CodeArchs()
	if err != nil {
		return nil, err
	}
	for _, t := range Targets {
		if t.SM < m.MinArch {
			rep.Skipped = append(rep.Skipped, Skip{t.Arch, fmt.Sprintf("below the kernel's min_arch %d", m.MinArch)})
			continue
		}
		ok := kernels.RunsOn(bas, t.Arch)
		note := "loaded as is; it carries "
		if m.Kind == kernels.KindPTX {
			note = "compiled by the driver's JIT at load; its target is "
		}
		vr := VariantReport{Variant: "kernel", OK: ok, Note: note + kernels.BinaryArchList(bas)}
		if !ok {
			vr.Messages = fmt.Sprintf("%s has no code for %s (it carries %s)", m.Source, t.Arch, kernels.BinaryArchList(bas))
			vr.Note = ""
		}
		rep.Archs = append(rep.Archs, ArchReport{Arch: t.Arch, OK: ok, Variants: []VariantReport{vr}})
		rep.OK = rep.OK || ok
	}
	// A binary is for the architectures it carries; it fails only when it
	// runs on none of the targets. Per-arch OK says where it runs.
	return rep, nil
}

// Text renders rep for people.
func Text(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s (%s, %s)", rep.Name, rep.Problem, rep.Kind)
	if rep.Hash != "" {
		fmt.Fprintf(&b, " %s", rep.Hash)
	}
	if rep.NVRTCVersion != "" {
		fmt.Fprintf(&b, ", NVRTC %s", rep.NVRTCVersion)
	}
	b.WriteString("\n")
	for _, a := range rep.Archs {
		for _, v := range a.Variants {
			if !v.OK {
				fmt.Fprintf(&b, "%-8s %s: FAILED\n%s\n", a.Arch, v.Variant, strings.TrimRight(v.Messages, "\n"))
				continue
			}
			if len(v.Entries) == 0 {
				fmt.Fprintf(&b, "%-8s %s: ok %s\n", a.Arch, v.Variant, v.Note)
			}
			for _, e := range v.Entries {
				fmt.Fprintf(&b, "%-8s %s %s: %d registers, %d B static + %d B dynamic shared, %d B spill stores, %d B spill loads, %d B stack\n",
					a.Arch, v.Variant, e.Name, e.Registers, e.SharedStatic, e.SharedDynamic, e.SpillStores, e.SpillLoads, e.StackBytes)
			}
		}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.Arch, s.Reason)
	}
	if rep.OK {
		b.WriteString("ok\n")
	} else {
		b.WriteString("FAILED\n")
	}
	return b.String()
}
