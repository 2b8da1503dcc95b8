// Command ptxloop counts the PTX instructions of a variant's chunk loop, per
// source line, on every benchmark shape: NVRTC compiles the module each
// shape resolves to (for compute_90, the sm_90a features defined, with line
// information), and the innermost loops that issue wgmmas are counted.
// Kernel-notes steps 74-76 found this way the values NVVM rebuilt inside the
// loop every chunk (a signed remainder, the weight copies' addresses), which
// the device then measured. Run it in two trees and diff the outputs to see
// what a change does to each loop before any device time is spent.
//
// Usage, from the repository root (NVRTC installed; any version that knows
// compute_90):
//
//	go run ./dev/ptxloop [-problem P -variant V] [-lines N] [-out DIR]
//	go run ./dev/ptxloop [-problem P -variant V] -keys VERSION
//	go run ./dev/ptxloop [-lines N] -sass FILE...
//
// Without -problem it counts both bests of issue 11 (dev/gpucall/dual.sh's
// DT and GW). -lines shows each loop's N busiest source lines; -out keeps
// each module's PTX (DIR/<problem>_bench<i>.ptx) and its source. -keys
// compiles nothing and lists each benchmark module's cache key as the
// engine on a GPU machine with NVRTC VERSION (e.g. 13.0) builds it for
// sm_90a: the names of that machine's cached cubins and ptxas reports
// (<key>.cubin, <key>.log), which dual.sh's sass26 and ptxaslist return.
// -sass reads `cuobjdump -sass` listings instead (sass26's files) and
// counts, per function, the innermost loops that issue HGMMAs: their
// instructions and the N most frequent opcodes.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/engine"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// bests are issue 11's best variants (dual.sh's DT and GW).
var bests = [][2]string{
	{"nvfp4_dual_gemm", "wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split"},
	{"nvfp4_group_gemm", "wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&consumers=3&staging=stmatrix&token_copy=width"},
}

// hopper is the device the modules are resolved for (an H100 or H200).
var hopper = kernels.Limits{SMs: 132, MaxSharedOptin: 232448, Arch: "sm_90a"}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ptxloop:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("ptxloop", flag.ContinueOnError)
	problem := fs.String("problem", "", "problem name (default: both bests of issue 11)")
	variant := fs.String("variant", "", "variant spec of -problem")
	lines := fs.Int("lines", 12, "source lines shown per loop, busiest first")
	out := fs.String("out", "", "folder that keeps each module's PTX and source")
	keys := fs.String("keys", "", "list the modules' cache keys for this NVRTC version instead (no compile)")
	sass := fs.Bool("sass", false, "count the HGMMA loops of the cuobjdump -sass listings named as arguments instead")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sass {
		if fs.NArg() == 0 {
			return errors.New("-sass needs the listings' file names")
		}
		for _, f := range fs.Args() {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "== %s\n", f)
			for _, fn := range sassFuncs(string(data)) {
				for _, l := range fn.loops() {
					fmt.Fprintf(w, "   %s: loop %#x-%#x: %d instructions, %d HGMMA\n", fn.name, l.start, l.end, l.total(), l.marked)
					for _, oc := range busiest(l.counts, *lines) {
						fmt.Fprintf(w, "   %5d  %s\n", oc.n, oc.key)
					}
				}
			}
		}
		return nil
	}
	todo := bests
	if *problem != "" || *variant != "" {
		if *problem == "" || *variant == "" {
			return errors.New("-problem and -variant go together")
		}
		todo = [][2]string{{*problem, *variant}}
	}
	for _, pv := range todo {
		var err error
		if *keys != "" {
			err = listKeys(w, pv[0], pv[1], *keys)
		} else {
			err = countProblem(w, pv[0], pv[1], *lines, *out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// listKeys prints the cache key of the module each benchmark shape runs.
func listKeys(w io.Writer, problem, spec, ver string) error {
	v, mods, err := benchModules(problem, spec)
	if err != nil {
		return err
	}
	keys, err := engine.ModuleKeys(v, hopper.Arch, ver)
	if err != nil {
		return err
	}
	for i, r := range mods {
		fmt.Fprintf(w, "%s bench%d %s %s\n", problem, i+1, keys[r.Name], r.Name)
	}
	return nil
}

// benchModules resolves spec on each of problem's benchmark shapes: the
// variant, and the concrete one each shape runs.
func benchModules(problem, spec string) (kernels.Variant, []kernels.Variant, error) {
	p, err := kernels.LookupProblem(problem)
	if err != nil {
		return kernels.Variant{}, nil, err
	}
	v, err := p.ResolveVariant(spec)
	if err != nil {
		return kernels.Variant{}, nil, fmt.Errorf("variant of %s: %w", problem, err)
	}
	var mods []kernels.Variant
	for i, s := range p.Benchmarks {
		r, err := v.Resolve(s, hopper)
		if err != nil {
			return kernels.Variant{}, nil, fmt.Errorf("resolving %s on bench%d: %w", spec, i+1, err)
		}
		mods = append(mods, r)
	}
	return v, mods, nil
}

func countProblem(w io.Writer, problem, spec string, lines int, out string) error {
	_, mods, err := benchModules(problem, spec)
	if err != nil {
		return err
	}
	for i, r := range mods {
		ptx, src, err := compilePTX(r)
		if err != nil {
			return fmt.Errorf("compiling %s for bench%d: %w", r.Name, i+1, err)
		}
		if out != "" {
			base := filepath.Join(out, fmt.Sprintf("%s_bench%d", problem, i+1))
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(base+".ptx", []byte(ptx), 0o644); err != nil {
				return err
			}
			if err := os.WriteFile(base+".cu", []byte(src), 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "== %s bench%d: %s\n", problem, i+1, r.Name)
		loops := wgmmaLoops(ptx)
		if len(loops) == 0 {
			fmt.Fprintln(w, "   no loop issues wgmmas")
		}
		srcLines := strings.Split(src, "\n")
		for _, l := range loops {
			fmt.Fprintf(w, "   loop at PTX line %d: %d instructions, %d wgmmas\n", l.start+1, l.total(), l.marked)
			for _, lc := range busiest(l.counts, lines) {
				text := ""
				if lc.key > 0 && lc.key <= len(srcLines) {
					text = strings.TrimSpace(srcLines[lc.key-1])
				}
				fmt.Fprintf(w, "   %5d  line %-5d %.90s\n", lc.n, lc.key, text)
			}
		}
	}
	return nil
}

// compilePTX compiles r's module to PTX with line information; it returns
// the PTX and the source the line numbers refer to.
func compilePTX(r kernels.Variant) (ptx, src string, err error) {
	src, err = r.Source()
	if err != nil {
		return "", "", err
	}
	hd, err := r.Headers()
	if err != nil {
		return "", "", err
	}
	d := r.Defines()
	// compute_90 has no sm_90a features; the kernels compile their wgmma
	// paths under this macro, which NVRTC defines only for sm_90a.
	d["__CUDA_ARCH_FEAT_SM90_ALL"] = "1"
	c, err := gpu.Compile("module.cu", src, gpu.CompileOptions{Arch: "compute_90", Defines: d, Headers: hd, Flags: []string{"-lineinfo"}})
	if err != nil {
		return "", "", err
	}
	return strings.TrimRight(string(c.Cubin), "\x00"), src, nil
}

// listing is one function's instructions, PTX or SASS: the position of
// each (its PTX line, its SASS address), the key it is counted under (a
// source line, an opcode), whether it issues a wgmma, and where a branch
// back to an earlier instruction goes (-1: none).
type listing[K cmp.Ordered] struct {
	pos    []int
	key    []K
	marked []bool
	back   []int
}

func (l *listing[K]) add(pos int, key K, marked bool, back int) {
	l.pos, l.key, l.marked, l.back = append(l.pos, pos), append(l.key, key), append(l.marked, marked), append(l.back, back)
}

// loop is an innermost loop that issues wgmmas: its first and last
// instructions' positions, its instructions by key and its wgmmas.
type loop[K cmp.Ordered] struct {
	start, end int
	counts     map[K]int
	marked     int
}

func (l loop[K]) total() (n int) {
	for _, c := range l.counts {
		n += c
	}
	return n
}

// loops returns the loops (a branch back to an earlier instruction) that
// issue a wgmma and hold no smaller such loop, in order.
func (l listing[K]) loops() []loop[K] {
	var spans [][2]int
	for i, t := range l.back {
		if t >= 0 && slices.Contains(l.marked[t:i+1], true) {
			spans = append(spans, [2]int{t, i})
		}
	}
	var out []loop[K]
	for _, sp := range innermost(spans) {
		lp := loop[K]{start: l.pos[sp[0]], end: l.pos[sp[1]], counts: map[K]int{}}
		for i := sp[0]; i <= sp[1]; i++ {
			lp.counts[l.key[i]]++
			if l.marked[i] {
				lp.marked++
			}
		}
		out = append(out, lp)
	}
	slices.SortFunc(out, func(a, b loop[K]) int { return a.start - b.start })
	return out
}

// counted is one key of a count map and its count.
type counted[K cmp.Ordered] struct {
	key K
	n   int
}

// busiest returns up to n keys of m, the largest counts first (ties by key).
func busiest[K cmp.Ordered](m map[K]int, n int) []counted[K] {
	var out []counted[K]
	for k, c := range m {
		out = append(out, counted[K]{k, c})
	}
	slices.SortFunc(out, func(a, b counted[K]) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return cmp.Compare(a.key, b.key)
	})
	return out[:min(n, len(out))]
}

// innermost keeps the spans that contain no other span.
func innermost(spans [][2]int) [][2]int {
	var out [][2]int
	for _, a := range spans {
		if !slices.ContainsFunc(spans, func(b [2]int) bool { return b != a && a[0] <= b[0] && b[1] <= a[1] }) {
			out = append(out, a)
		}
	}
	return out
}

var (
	labelRE  = regexp.MustCompile(`^\s*(\$L__BB\d+_\d+):`)
	branchRE = regexp.MustCompile(`\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);`)
	locRE    = regexp.MustCompile(`^\s*\.loc\s+\d+\s+(\d+)`)
)

// wgmmaLoops reads a PTX listing's instructions (lines that are not
// labels, directives, comments or braces), each counted under the source
// line of the .loc before it, and returns its innermost wgmma loops.
func wgmmaLoops(ptx string) []loop[int] {
	var l listing[int]
	labels := map[string]int{} // label -> index of the instruction after it
	cur := 0
	for i, raw := range strings.Split(ptx, "\n") {
		t := strings.TrimSpace(raw)
		if m := locRE.FindStringSubmatch(raw); m != nil {
			cur, _ = strconv.Atoi(m[1])
			continue
		}
		if m := labelRE.FindStringSubmatch(raw); m != nil {
			labels[m[1]] = len(l.pos)
			continue
		}
		if t == "" || t == "{" || t == "}" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, ".") {
			continue
		}
		back := -1
		if m := branchRE.FindStringSubmatch(t); m != nil {
			if at, ok := labels[m[1]]; ok {
				back = at
			}
		}
		l.add(i, cur, strings.Contains(t, "wgmma.mma_async"), back)
	}
	return l.loops()
}

// sassFunc is one function of a cuobjdump -sass listing, its instructions
// counted by base opcode (before the first '.').
type sassFunc struct {
	name string
	listing[string]
}

var (
	sassFuncRE = regexp.MustCompile(`^\s*Function : (\S+)`)
	// An instruction line: /*addr*/ [@[!]Pn] OPCODE operands ;
	sassInstRE = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z][A-Z0-9_.]*)(.*);`)
	sassBraRE  = regexp.MustCompile(`^\s*(0x[0-9a-f]+)`)
)

// sassFuncs parses a cuobjdump -sass listing; HGMMAs are the marked
// instructions.
func sassFuncs(text string) []sassFunc {
	var funcs []sassFunc
	var at map[int]int // address -> instruction index, in the current function
	for _, line := range strings.Split(text, "\n") {
		if m := sassFuncRE.FindStringSubmatch(line); m != nil {
			funcs = append(funcs, sassFunc{name: m[1]})
			at = map[int]int{}
			continue
		}
		m := sassInstRE.FindStringSubmatch(line)
		if m == nil || len(funcs) == 0 {
			continue
		}
		f := &funcs[len(funcs)-1]
		addr, _ := strconv.ParseInt(m[1], 16, 64)
		op, _, _ := strings.Cut(m[2], ".")
		back := -1
		if t := sassBraRE.FindStringSubmatch(m[3]); op == "BRA" && t != nil {
			v, _ := strconv.ParseInt(t[1], 0, 64)
			if i, ok := at[int(v)]; ok {
				back = i
			}
		}
		at[int(addr)] = len(f.pos)
		f.add(int(addr), op, op == "HGMMA", back)
	}
	return funcs
}
