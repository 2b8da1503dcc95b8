package kernels

import (
	"fmt"
	"sort"
	"strings"
)

// Family is one kind of kernel: the built-in families (family_*.go) and a
// submitted kernel (family_kernel.go) implement it, and everything in this
// package that differs between kernels asks the variant's family instead
// of comparing names. Adding a built-in family is one family_<name>.go
// file that registers itself in init, plus its CUDA source under cuda/: a
// knob key that Knobs has no field for is kept in Knobs.Custom and read
// with Knobs.Value (TestFamilyAddedByOneRegistration).
//
// Problem arguments are problem names, as in the exported knob helpers
// (KnobSpace, SharedBytes, ...); a family that needs the problem's kind asks
// problemKind.
type Family interface {
	// Info names the family and places it in lists.
	Info() FamilyInfo
	// Variant is the family's default variant of problem p (knobs at their
	// defaults); ok is false when the family has none for p (the test-only
	// families may have none).
	Variant(p *Problem) (v Variant, ok bool)
	// KnobSpace is the declared knob space for problem, in canonical order
	// (the order of a canonical name's overrides); nil: no knobs.
	KnobSpace(problem string) []KnobSpec
	// Fixed is the family's knob values before any declared knob is set:
	// the fields its space does not declare keep these.
	Fixed(problem string) Knobs
	// Check applies the rules that single knob values cannot express.
	Check(problem string, k Knobs) error
	// MinArch is the lowest compute capability (80, 90, 100) that the
	// variant with knobs k runs on.
	MinArch(problem string, k Knobs) int
	// Defines adds the family's compile-time defines for v to d (which
	// holds DUAL already) and returns it.
	Defines(v Variant, d map[string]string) map[string]string
	// Entries lists the entry points v's module defines.
	Entries(v Variant) []string
	// Plan is v's launch plan for shape s (s is checked, the knobs are
	// checked, v is concrete: auto tiles are resolved by the caller).
	Plan(v Variant, s Shape, lim Limits) (*Plan, error)
	// CheckDevice refuses a device v cannot run on, saying why; nil when v
	// runs there or the arch is unknown (""). Variant.CheckDevice adds
	// what runs there instead.
	CheckDevice(v Variant, arch string) error
}

// FamilyInfo is what lists show of a family.
type FamilyInfo struct {
	Name string
	// Order sorts the families in Variants (reference first).
	Order int
	// TestOnly families are resolvable only with TestKernelsEnabled and
	// are never listed.
	TestOnly bool
}

// autoResolver is implemented by families with an "auto" knob value that
// stands for one compiled module per candidate, the shape picking one: the
// baseline's auto tile sizes, the wgmma family's schedule=auto.
type autoResolver interface {
	// isAuto reports whether k holds an auto value this resolver resolves.
	isAuto(k Knobs) bool
	// candidates are the concrete knobs an auto variant compiles.
	candidates(problem string, k Knobs) []Knobs
	// resolve picks the concrete knobs for shape s on a device with lim.
	resolve(problem string, s Shape, k Knobs, lim Limits) (Knobs, error)
}

// knobCodec is implemented by families whose knobs are not the fields of
// Knobs (a submitted kernel's manifest knobs); the others parse through
// knobsFrom.
type knobCodec interface {
	parseKnobs(vals map[string]string) (Knobs, error)
	knobValues(k Knobs) map[string]string
}

// families is the registry of built-in families by name: each family_*.go
// adds itself in init.
var families = map[string]Family{}

func registerFamily(f Family) {
	name := f.Info().Name
	if _, dup := families[name]; dup {
		panic("kernels: family " + name + " registered twice")
	}
	families[name] = f
}

// Families lists the built-in families in Order (test-only ones included).
func Families() []Family {
	out := make([]Family, 0, len(families))
	for _, f := range families {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Info().Order < out[j].Info().Order })
	return out
}

// LookupFamily finds a built-in family by name.
func LookupFamily(name string) (Family, bool) {
	f, ok := families[name]
	return f, ok
}

// family is v's family: its submission's for a submitted kernel, else the
// built-in one named by v.Base. A Variant made outside this package with an
// unknown base gets noFamily, whose every answer is "unknown".
func (v Variant) family() Family {
	if v.Kernel != nil {
		return kernelFamily{v.Kernel}
	}
	if f, ok := families[v.Base]; ok {
		return f
	}
	return noFamily{v.Base}
}

// problemKind is the kind of the named problem; an unknown name counts as
// a group GEMM (the knob helpers take names that tests make up).
func problemKind(problem string) Kind {
	if p, err := LookupProblem(problem); err == nil {
		return p.Kind
	}
	return GroupGEMM
}

// isDual reports whether the named problem is a dual GEMM.
func isDual(problem string) bool { return problemKind(problem) == DualGEMM }

// checkArchAtLeast is the CheckDevice of a family that runs on v.MinArch
// and everything newer.
func checkArchAtLeast(v Variant, arch string) error {
	a := archNumber(arch)
	if a == 0 || a >= v.MinArch {
		return nil
	}
	return fmt.Errorf("kernels: %s needs sm_%d or newer; the device is %s", v.Name, v.MinArch, arch)
}

// runsOn lists the built-in variants of problem that run on arch, for
// refusal messages.
func runsOn(problem, arch string) string {
	p, err := LookupProblem(problem)
	if err != nil {
		return "another variant"
	}
	var names []string
	for _, v := range p.Variants() {
		if v.Reference {
			continue
		}
		if v.family().CheckDevice(v, arch) == nil {
			names = append(names, v.Name)
		}
	}
	if len(names) == 0 {
		return "no built-in variant"
	}
	return strings.Join(names, " or ")
}

// noFamily answers for a Variant whose Base names no family.
type noFamily struct{ name string }

func (f noFamily) Info() FamilyInfo               { return FamilyInfo{Name: f.name, Order: 1 << 30} }
func (noFamily) Variant(*Problem) (Variant, bool) { return Variant{}, false }
func (noFamily) KnobSpace(string) []KnobSpec      { return nil }
func (noFamily) Fixed(string) Knobs               { return Knobs{} }
func (f noFamily) Check(string, Knobs) error {
	return fmt.Errorf("kernels: unknown variant family %q", f.name)
}
func (noFamily) MinArch(string, Knobs) int                                { return 80 }
func (noFamily) Defines(_ Variant, d map[string]string) map[string]string { return d }
func (noFamily) Entries(Variant) []string                                 { return nil }
func (f noFamily) Plan(Variant, Shape, Limits) (*Plan, error) {
	return nil, fmt.Errorf("kernels: unknown variant family %q", f.name)
}
func (noFamily) CheckDevice(Variant, string) error { return nil }
