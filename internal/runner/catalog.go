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

// cleanKernelsErr drops the package prefix: the message is shown to people.
func cleanKernelsErr(err error) error {
	if err == nil {
		return nil
	}
	return catalogError(strings.TrimPrefix(err.Error(), "kernels: "))
}

type catalogError string

func (e catalogError) Error() string { return string(e) }
