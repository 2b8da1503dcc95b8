// Command cudasyntax prints, one line each, the nvcc-style define sets of
// the modules that variants compile on their problem's benchmark shapes
// (at an H100's limits: 132 SMs, 232,448 bytes of opt-in shared memory,
// sm_90a), for check.sh's clang syntax pass over wg_group_gemm.cu.
//
// Usage, from the repository root:
//
//	go run ./dev/cudasyntax PROBLEM=VARIANT ...
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/pitchtank/pitchtank/kernels"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cudasyntax PROBLEM=VARIANT ...")
		os.Exit(2)
	}
	lim := kernels.Limits{SMs: 132, MaxSharedOptin: 232448, Arch: "sm_90a"}
	seen := map[string]bool{}
	for _, arg := range os.Args[1:] {
		sets, err := defineSets(arg, lim)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cudasyntax:", err)
			os.Exit(1)
		}
		for _, l := range sets {
			if !seen[l] {
				seen[l] = true
				fmt.Println(l)
			}
		}
	}
}

// defineSets resolves arg (PROBLEM=VARIANT) on each benchmark shape and
// returns each module's defines as -DNAME=VALUE words, sorted.
func defineSets(arg string, lim kernels.Limits) ([]string, error) {
	name, spec, ok := strings.Cut(arg, "=")
	if !ok {
		return nil, fmt.Errorf("%q: want PROBLEM=VARIANT", arg)
	}
	p, err := kernels.LookupProblem(name)
	if err != nil {
		return nil, fmt.Errorf("problem %q: %w", name, err)
	}
	v, err := p.ResolveVariant(spec)
	if err != nil {
		return nil, fmt.Errorf("variant %q of %s: %w", spec, name, err)
	}
	var out []string
	for _, s := range p.Benchmarks {
		rv, err := v.Resolve(s, lim)
		if err != nil {
			return nil, fmt.Errorf("resolving %q on %v: %w", spec, s.M, err)
		}
		var words []string
		for k, val := range rv.Defines() {
			words = append(words, "-D"+k+"="+val)
		}
		sort.Strings(words)
		out = append(out, strings.Join(words, " "))
	}
	return out, nil
}
