package result

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/kernels"
)

// ParseResult validates doc and decodes it.
func ParseResult(doc []byte) (*Result, error) {
	if err := Validate(doc); err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, fmt.Errorf("result: decode: %w", err)
	}
	return &r, nil
}

// Markdown renders a result as the tables docs/BENCHMARKS.md quotes: the
// device, then one row per shape.
func Markdown(r *Result) string {
	var b strings.Builder
	d := r.Device
	fmt.Fprintf(&b, "%s `%s` on %s (driver %s, CUDA driver %d, NVRTC %s), %s, status %s, %s\n\n",
		r.Problem, r.Variant.Spec, d.Name, d.DriverVersion, d.CUDADriverVersion, d.NVRTCVersion, r.StartedAt.Format("2006-01-02 15:04 UTC"), r.Status, pairedWith(r))
	b.WriteString("| # | shape | correct | median us | rel SEM | samples (stop) | floor us | of floor | speedup [95%] | verdict | flags |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range r.Shapes {
		shape := kernels.Shape{M: s.M, N: s.N, K: s.K}.String()
		med, rs, ns := "-", "-", "-"
		if s.Variant != nil {
			med = fmt.Sprintf("%.2f", s.Variant.Stats.MedianNs/1e3)
			rs = fmt.Sprintf("%.3f%%", 100*s.Variant.Stats.RelSEM)
			ns = fmt.Sprintf("%d (%s)", s.Variant.Stats.N, s.Variant.StopReason)
		}
		sp, verdict := "-", s.Skipped
		if s.Pairing != nil {
			iv := s.Pairing.Speedup
			sp = fmt.Sprintf("%.4f [%.4f, %.4f]", iv.Point, iv.Lo, iv.Hi)
			verdict = s.Pairing.Verdict
		}
		fmt.Fprintf(&b, "| %d | %s | %v | %s | %s | %s | %.2f | %.3f | %s | %s | %s |\n",
			s.Index, shape, s.Correct, med, rs, ns, s.FloorNs/1e3, s.FractionOfFloor, sp, verdict, strings.Join(s.Flags, " "))
	}
	sm := r.Summary
	fmt.Fprintf(&b, "\nGeomean median %.2f us, geomean floor %.2f us, geomean fraction of floor %.3f", sm.GeomeanMedianNs/1e3, sm.GeomeanFloorNs/1e3, sm.GeomeanFractionFloor)
	if sm.GeomeanSpeedup != nil {
		fmt.Fprintf(&b, ", geomean speedup %.4f", *sm.GeomeanSpeedup)
		for _, f := range sm.FastP {
			fmt.Fprintf(&b, ", fast_%.1f = %.2f", f.P, f.Value)
		}
	}
	b.WriteString(".\n")
	b.WriteString(modules(r))
	return b.String()
}

// ModuleUse is one module a variant ran: the concrete variant it was
// compiled from, its cache key, the shapes (indexes) it ran and its
// kernels' resources as loaded (the build's kernels named "<module> <entry>",
// with the entry name alone here).
type ModuleUse struct {
	Module   string
	CubinKey string
	Shapes   []int
	Kernels  []KernelAttrs
	// DynShared is the most dynamic shared memory any of the module's
	// launches asked for, per kernel entry (the wgmma modules ask the same
	// on every shape; a module whose launches differ shows its largest):
	// issue 11's resource report names shared memory beside registers and
	// spills.
	DynShared map[string]uint32
}

// ShortKey is the cubin key's first 12 hex digits, enough to find the
// module's cached cubin and ptxas report.
func (u ModuleUse) ShortKey() string {
	if len(u.CubinKey) > 12 {
		return u.CubinKey[:12]
	}
	return u.CubinKey
}

// Resources is each kernel's registers, shared bytes (static and the
// launches' dynamic) and local bytes (stack and spills), "; "-separated.
func (u ModuleUse) Resources() string {
	res := make([]string, len(u.Kernels))
	for i, k := range u.Kernels {
		shared := k.SharedStatic + int(u.DynShared[k.Name])
		res[i] = fmt.Sprintf("%s %d registers, %d B shared, %d B local", k.Name, k.Registers, shared, k.LocalBytes)
	}
	return strings.Join(res, "; ")
}

// ModulesRan lists the modules r's variant ran, in the order of the shapes
// that first ran each, for a variant with auto tile sizes (a plan whose
// module is not the build's own name): which cubin each shape's median came
// from, and whether it spilled. nil for a variant of one module, and for
// documents before schema version 3.
func ModulesRan(r *Result) []ModuleUse {
	var uses []ModuleUse
	at := map[string]int{}
	for _, s := range r.Shapes {
		for _, pl := range s.Launch {
			if pl.Role != RoleVariant || pl.Module == "" {
				continue
			}
			i, ok := at[pl.Module]
			if !ok {
				i = len(uses)
				at[pl.Module] = i
				u := ModuleUse{Module: pl.Module, CubinKey: pl.CubinKey, DynShared: map[string]uint32{}}
				for _, k := range r.Variant.Kernels {
					if entry, ok := strings.CutPrefix(k.Name, pl.Module+" "); ok {
						k.Name = entry
						u.Kernels = append(u.Kernels, k)
					}
				}
				uses = append(uses, u)
			}
			uses[i].Shapes = append(uses[i].Shapes, s.Index)
			for _, l := range pl.Launches {
				uses[i].DynShared[l.Kernel] = max(uses[i].DynShared[l.Kernel], l.SharedBytes)
			}
		}
	}
	if len(uses) == 1 && uses[0].Module == r.Variant.Name {
		return nil
	}
	return uses
}

// modules renders ModulesRan for the Markdown report ("" when nil).
func modules(r *Result) string {
	uses := ModulesRan(r)
	if len(uses) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nModules the variant ran (auto tile sizes):\n\n")
	for _, u := range uses {
		label := "shapes"
		if len(u.Shapes) == 1 {
			label = "shape"
		}
		fmt.Fprintf(&b, "- %s %s: `%s` (cubin %s)", label, JoinInts(u.Shapes), u.Module, u.ShortKey())
		if len(u.Kernels) > 0 {
			b.WriteString("; " + u.Resources())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// JoinInts writes xs as "0, 2, 3".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func pairedWith(r *Result) string {
	if r.Baseline == nil {
		return "not paired"
	}
	if r.AA {
		return fmt.Sprintf("A/A: `%s` paired with itself", r.Baseline.Spec)
	}
	return fmt.Sprintf("paired with `%s`", r.Baseline.Spec)
}
