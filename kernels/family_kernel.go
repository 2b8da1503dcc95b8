package kernels

import (
	"fmt"
	"net/url"
	"strings"
)

// The family of a submitted kernel (submission.go): its knob space, defines,
// entry point, launch plan and minimum architecture come from its manifest,
// and it runs through the same plan machinery as the built-ins (perGroupPlan,
// the grouped table). It is not registered by name: a variant carries its
// submission (Variant.Kernel).

type kernelFamily struct{ s *Submission }

func (kernelFamily) Info() FamilyInfo { return FamilyInfo{Name: "kernel", Order: 100} }

func (f kernelFamily) Variant(p *Problem) (Variant, bool) {
	if f.s.Manifest.Problem != p.Name {
		return Variant{}, false
	}
	return f.s.Variant(), true
}

// KnobSpace is the manifest's knobs, then pitchtank's launch knob: a
// per-group kernel runs sequential, streams or graph (the default is the
// manifest's mode); a grouped one only grouped.
func (f kernelFamily) KnobSpace(problem string) []KnobSpec {
	m := f.s.Manifest
	var out []KnobSpec
	for _, k := range m.Knobs {
		doc := k.Doc
		if doc == "" {
			doc = "-D" + k.Define + "=<value>"
		}
		out = append(out, KnobSpec{Key: k.Key, Values: k.Values, Default: k.Default, Doc: doc})
	}
	return append(out, KnobSpec{Key: "launch", Values: f.launchValues(problem), Default: m.Launch.Mode,
		Doc: "how the entry point is launched: sequential, streams or graph issue one launch per group; grouped one launch over the grouped table (the manifest's mode decides which kind the entry point is)"})
}

func (f kernelFamily) launchValues(problem string) []string {
	if f.s.Manifest.Launch.Mode == "grouped" {
		return []string{"grouped"}
	}
	var out []string
	for _, m := range launchModes(problemOrGroup(problem)) {
		if m != "grouped" {
			out = append(out, m)
		}
	}
	return out
}

// problemOrGroup is the named problem, or a group GEMM stand-in for an
// unknown name (its launch modes).
func problemOrGroup(name string) *Problem {
	if p, err := LookupProblem(name); err == nil {
		return p
	}
	return &Problem{Name: name, Kind: GroupGEMM}
}

func (f kernelFamily) Fixed(string) Knobs { return Knobs{} }

// parseKnobs keeps the manifest's knob values in Knobs.Custom (manifest
// order) and the launch mode in Knobs.Launch; the tile sizes are the
// manifest's, for records.
func (f kernelFamily) parseKnobs(vals map[string]string) (Knobs, error) {
	m := f.s.Manifest
	var parts []string
	for _, k := range m.Knobs {
		v, ok := vals[k.Key]
		if !ok {
			v = k.Default
		}
		parts = append(parts, url.QueryEscape(k.Key)+"="+url.QueryEscape(v))
	}
	launch := vals["launch"]
	if launch == "" {
		launch = m.Launch.Mode
	}
	return Knobs{TileM: m.Launch.TileM, TileN: m.Launch.TileN, Launch: launch, SplitK: 1, Custom: strings.Join(parts, "&")}, nil
}

func (f kernelFamily) knobValues(k Knobs) map[string]string {
	out := map[string]string{"launch": k.Launch}
	q, _ := url.ParseQuery(k.Custom)
	for key := range q {
		out[key] = q.Get(key)
	}
	return out
}

// Check: every declared value of a CUDA kernel is valid (the manifest
// declares only values that compile, as for built-ins). A ptx or cubin
// kernel is not compiled here, so a define cannot change it: only its
// knobs' defaults resolve, or the variant would name code it does not run.
func (f kernelFamily) Check(_ string, k Knobs) error {
	m := f.s.Manifest
	if m.Kind == KindCUDA {
		return nil
	}
	vals := f.knobValues(k)
	for _, mk := range m.Knobs {
		if v := vals[mk.Key]; v != mk.Default {
			return &KnobError{Knob: mk.Key, Value: v, Reason: fmt.Sprintf("a %s kernel is not compiled here, so %s cannot change it; only its default %s runs (submit CUDA source to vary it)", m.Kind, mk.Define, mk.Default)}
		}
	}
	return nil
}

func (f kernelFamily) MinArch(string, Knobs) int { return f.s.Manifest.MinArch }

func (f kernelFamily) Defines(v Variant, d map[string]string) map[string]string {
	vals := f.knobValues(v.Knobs)
	for _, k := range f.s.Manifest.Knobs {
		d[k.Define] = vals[k.Key]
	}
	return d
}

func (f kernelFamily) Entries(Variant) []string { return []string{f.s.Manifest.Entry} }

// Plan: the manifest's launch through perGroupPlan, the machinery the
// baseline's launches use.
func (f kernelFamily) Plan(v Variant, s Shape, lim Limits) (*Plan, error) {
	if err := v.CheckDevice(lim.Arch); err != nil {
		return nil, err
	}
	l := f.s.Manifest.Launch
	smem := f.SharedBytes(v.Knobs)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block (launch.shared_bytes); the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	e := f.s.Manifest.Entry
	return perGroupPlan(v.Name, v.Knobs.Launch, isDual(v.Problem), s, perGroup{
		Group: e, Dual: e, Grouped: e,
		Block: [3]uint32{uint32(l.Block[0]), uint32(l.Block[1]), uint32(l.Block[2])},
		TileM: l.TileM, TileN: l.TileN, SharedBytes: smem,
		Launches: f.launchValues(v.Problem),
	})
}

// SharedBytes is the dynamic shared memory per block with knobs k:
// launch.shared_bytes, or a knob value's own (ManifestKnob.SharedBytes).
func (f kernelFamily) SharedBytes(k Knobs) int {
	n := f.s.Manifest.Launch.SharedBytes
	vals := f.knobValues(k)
	for _, mk := range f.s.Manifest.Knobs {
		if b, ok := mk.SharedBytes[vals[mk.Key]]; ok {
			n = b
		}
	}
	return n
}

// CheckDevice refuses a device below min_arch, and for a cubin or fatbin
// one it has no code for, naming what it has and what runs instead.
func (f kernelFamily) CheckDevice(v Variant, arch string) error {
	if err := checkArchAtLeast(v, arch); err != nil {
		return fmt.Errorf("%w; min_arch of %q is %d", err, f.s.Manifest.Name, f.s.Manifest.MinArch)
	}
	if f.s.Manifest.Kind == KindCUDA || archNumber(arch) == 0 {
		return nil
	}
	bas, err := f.s.CodeArchs()
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", v.Name, err)
	}
	if !RunsOn(bas, arch) {
		return fmt.Errorf("kernels: %s: %s has no code for the device's architecture %s (it has %s); build it for %s (a PTX .target at or below it runs too), or submit CUDA source",
			v.Name, f.s.Manifest.Source, arch, BinaryArchList(bas), arch)
	}
	return nil
}

// SharedBytes is the dynamic shared memory per block of v, a variant of s.
func (s *Submission) SharedBytes(v Variant) int { return kernelFamily{s}.SharedBytes(v.Knobs) }

// CodeArchs is what a ptx or cubin submission's code runs on: its PTX
// target, or the cubin's or fatbin's architectures (RunsOn tells a device).
func (s *Submission) CodeArchs() ([]BinaryArch, error) {
	src := s.Files[s.Manifest.Source]
	if s.Manifest.Kind == KindPTX {
		a, err := PTXTarget(src)
		if err != nil {
			return nil, err
		}
		return []BinaryArch{a}, nil
	}
	return BinaryArchs(src)
}
