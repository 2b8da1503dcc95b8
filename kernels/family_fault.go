package kernels

// The test-only fault family (fault.cu): resolvable only with
// TestKernelsEnabled, never listed.

func init() { registerFamily(faultFamily{}) }

type faultFamily struct{}

func (faultFamily) Info() FamilyInfo { return FamilyInfo{Name: "fault", Order: 90, TestOnly: true} }

func (faultFamily) KnobSpace(string) []KnobSpec { return faultKnobSpace }

// Fixed: one launch per group on the caller's stream (Plan).
func (faultFamily) Fixed(string) Knobs { return Knobs{Launch: "sequential"} }

// Check: one knob; every declared value is valid.
func (faultFamily) Check(string, Knobs) error { return nil }

func (faultFamily) MinArch(string, Knobs) int                { return 80 }
func (faultFamily) CheckDevice(v Variant, arch string) error { return checkArchAtLeast(v, arch) }

func (faultFamily) Entries(v Variant) []string {
	if isDual(v.Problem) {
		return []string{"fault_dual"}
	}
	return []string{"fault_group"}
}

func (faultFamily) Defines(v Variant, d map[string]string) map[string]string {
	d["FAULT_MODE"] = "1"
	if v.Knobs.Mode == "hang" {
		d["FAULT_MODE"] = "2"
	}
	return d
}

// faultKnobSpace is the test-only fault family's one knob (fault.cu).
var faultKnobSpace = []KnobSpec{
	{Key: "mode", Values: []string{"illegal_address", "hang"}, Default: "illegal_address",
		Doc: "illegal_address = store through C + 1 TiB (CUDA_ERROR_ILLEGAL_ADDRESS); hang = spin on a volatile global nothing writes (never ends)"},
}

// Variant is the test-only variant that fails on purpose. It is not in
// Variants(), so no list, form or compile enumeration offers it; only
// ResolveVariant returns it, and only when TestKernelsEnabled.
func (faultFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{
		Name: "fault", Base: "fault", Title: "TEST ONLY: a kernel that faults or hangs", Problem: p.Name,
		Description: "fault.cu: mode=illegal_address stores through a wild pointer so the launch ends with CUDA_ERROR_ILLEGAL_ADDRESS; mode=hang spins forever. For the end-to-end test of run failures; resolvable only with " + TestKernelsEnv + "=1.",
		SourceFile:  "fault.cu", MinArch: 80,
	}
	v.Knobs, _ = defaultKnobs(p.Name, faultFamily{})
	return v, true
}

// Plan runs the test-only fault kernels: one launch per group with the
// baseline's arguments. One block per group is enough to fault or hang, and
// keeps the illegal_address stores few.
func (faultFamily) Plan(v Variant, s Shape, _ Limits) (*Plan, error) {
	pl := &Plan{Mode: "sequential"}
	for g, m := range s.M {
		args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
		kern := "fault_group"
		if isDual(v.Problem) {
			kern = "fault_dual"
			args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
		}
		args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K))
		pl.Launches = append(pl.Launches, Launch{Kernel: kern,
			Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, Group: g, Args: args})
	}
	return pl, nil
}
