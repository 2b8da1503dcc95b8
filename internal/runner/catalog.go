package runner

import (
	"strings"

	"github.com/pitchtank/pitchtank/kernels"
)

// KernelsCatalog is the Catalog of the embedded kernel manifest (package
// kernels): problems by name, variants with their knob space.
type KernelsCatalog struct{}

// CheckProblem reports an unknown problem, listing the known ones.
func (KernelsCatalog) CheckProblem(name string) error {
	_, err := kernels.LookupProblem(name)
	return cleanKernelsErr(err)
}

// CheckVariant resolves spec against the problem's manifest: unknown
// variants, unknown knobs and knob values outside their declared values are
// errors naming the knob and what is allowed.
func (KernelsCatalog) CheckVariant(problem, spec string) (bool, error) {
	p, err := kernels.LookupProblem(problem)
	if err != nil {
		return false, cleanKernelsErr(err)
	}
	v, err := p.ResolveVariant(spec)
	if err != nil {
		return false, cleanKernelsErr(err)
	}
	return v.Reference, nil
}

// CanonicalVariant is spec as the problem's manifest spells it (the
// resolved variant's name: knobs at their defaults dropped, the rest in
// the kernel's knob order), so that two spellings of one kernel are one
// string. Errors are CheckVariant's.
func (KernelsCatalog) CanonicalVariant(problem, spec string) (string, error) {
	p, err := kernels.LookupProblem(problem)
	if err != nil {
		return "", cleanKernelsErr(err)
	}
	v, err := p.ResolveVariant(spec)
	if err != nil {
		return "", cleanKernelsErr(err)
	}
	return v.Name, nil
}

// cleanKernelsErr drops the package prefix: the message is shown to people.
func cleanKernelsErr(err error) error {
	if err == nil {
		return nil
	}
	return &catalogError{msg: strings.TrimPrefix(err.Error(), "kernels: "), err: err}
}

// catalogError is a kernels error with its message cleaned; it unwraps to
// the original, so a *kernels.KnobError stays one.
type catalogError struct {
	msg string
	err error
}

func (e *catalogError) Error() string { return e.msg }
func (e *catalogError) Unwrap() error { return e.err }
