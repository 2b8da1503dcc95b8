package kernels

// The reference family (reference.cu): one thread per output element,
// decoded from the bit definitions and accumulated in double. It checks
// every other variant, takes no knobs and is never timed.

func init() { registerFamily(referenceFamily{}) }

type referenceFamily struct{}

func (referenceFamily) Info() FamilyInfo { return FamilyInfo{Name: "reference", Order: 0} }

func (referenceFamily) Variant(p *Problem) (Variant, bool) {
	return Variant{
		Name: "reference", Base: "reference", Title: "GPU reference", Problem: p.Name,
		Description: "One thread per output element: decodes each FP4 element and e4m3 scale from the bit definition, accumulates in double, writes double. Slow and obviously correct; checks the CPU reference and every fast variant.",
		SourceFile:  "reference.cu", MinArch: 80, Reference: true,
	}, true
}

func (referenceFamily) KnobSpace(string) []KnobSpec                              { return nil }
func (referenceFamily) Fixed(string) Knobs                                       { return Knobs{} }
func (referenceFamily) Check(string, Knobs) error                                { return nil }
func (referenceFamily) MinArch(string, Knobs) int                                { return 80 }
func (referenceFamily) Defines(_ Variant, d map[string]string) map[string]string { return d }
func (referenceFamily) CheckDevice(v Variant, arch string) error                 { return checkArchAtLeast(v, arch) }

func (referenceFamily) Entries(v Variant) []string {
	if isDual(v.Problem) {
		return []string{"ref_dual"}
	}
	return []string{"ref_group"}
}

// Plan: one launch per group, 16x16 threads per block, writing float64
// into BufRef.
func (referenceFamily) Plan(v Variant, s Shape, _ Limits) (*Plan, error) {
	dual := isDual(v.Problem)
	pl := &Plan{Mode: "sequential"}
	for g, m := range s.M {
		args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
		kern := "ref_group"
		if dual {
			kern = "ref_dual"
			args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
		}
		args = append(args, ptr(BufRef, g), i32(m), i32(s.N), i32(s.K))
		pl.Launches = append(pl.Launches, Launch{Kernel: kern,
			Grid:  [3]uint32{uint32(ceilDiv(s.N, 16)), uint32(ceilDiv(m, 16)), 1},
			Block: [3]uint32{16, 16, 1}, Group: g, Args: args})
	}
	return pl, nil
}
