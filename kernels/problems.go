// Package kernels holds pitchtank's GEMM problems as data, the manifest of
// kernel variants with their declared knob space, the embedded CUDA sources,
// and the launch plans that say how a variant runs one shape. It knows nothing
// about devices: internal/engine turns a plan into launches.
package kernels

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// Kind tells the two problem families apart.
type Kind int

const (
	// GroupGEMM is G independent GEMMs C_g = A_g @ B_g^T, each with its own M.
	GroupGEMM Kind = iota
	// DualGEMM is C = silu(A @ B1^T) * (A @ B2^T), one M.
	DualGEMM
)

func (k Kind) String() string {
	switch k {
	case GroupGEMM:
		return "group"
	case DualGEMM:
		return "dual"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Shape is one problem size. M has one entry per group; the dual GEMM has
// exactly one. The JSON form is shared with `web bench --shapes FILE`.
type Shape struct {
	M []int `json:"m"`
	N int   `json:"n"`
	K int   `json:"k"`
}

// String renders a shape compactly, e.g. "8x(M 80,176,...; N 4096; K 7168)".
func (s Shape) String() string {
	ms := make([]string, len(s.M))
	for i, m := range s.M {
		ms[i] = fmt.Sprint(m)
	}
	return fmt.Sprintf("%dx(M %s; N %d; K %d)", len(s.M), strings.Join(ms, ","), s.N, s.K)
}

// SumM is the total number of output rows over all groups.
func (s Shape) SumM() int {
	t := 0
	for _, m := range s.M {
		t += m
	}
	return t
}

// Problem is one benchmark problem: its kind, its test and benchmark shapes,
// and the tolerances a variant's output must meet against the float64 reference.
type Problem struct {
	Name        string
	Kind        Kind
	Description string
	Tests       []Shape
	Benchmarks  []Shape
	ATol, RTol  float64
}

// ShapeError says which shape rule a shape breaks.
type ShapeError struct {
	Rule   string // e.g. "N must be a multiple of 64"
	Detail string // e.g. "got 100"
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("shape rule: %s (%s)", e.Rule, e.Detail)
}

// Shape limits. The upper bounds keep a mistyped shape from asking the
// device for terabytes; they are far above every benchmark.
const (
	MaxGroups = 16
	maxDim    = 1 << 16
)

// CheckShape returns a *ShapeError naming the first rule s breaks, or nil.
func (p *Problem) CheckShape(s Shape) error {
	if p.Kind == DualGEMM && len(s.M) != 1 {
		return &ShapeError{Rule: "the dual GEMM has exactly 1 group", Detail: fmt.Sprintf("got %d", len(s.M))}
	}
	if len(s.M) < 1 || len(s.M) > MaxGroups {
		return &ShapeError{Rule: fmt.Sprintf("1..%d groups", MaxGroups), Detail: fmt.Sprintf("got %d", len(s.M))}
	}
	for g, m := range s.M {
		if m < 1 {
			return &ShapeError{Rule: "M >= 1 for every group", Detail: fmt.Sprintf("group %d has M %d", g, m)}
		}
		if m > maxDim {
			return &ShapeError{Rule: fmt.Sprintf("M <= %d", maxDim), Detail: fmt.Sprintf("group %d has M %d", g, m)}
		}
	}
	if s.N < 64 || s.N%64 != 0 {
		return &ShapeError{Rule: "N must be a multiple of 64", Detail: fmt.Sprintf("got %d", s.N)}
	}
	if s.N > maxDim {
		return &ShapeError{Rule: fmt.Sprintf("N <= %d", maxDim), Detail: fmt.Sprintf("got %d", s.N)}
	}
	if s.K < 128 || s.K%128 != 0 {
		return &ShapeError{Rule: "K must be a multiple of 128", Detail: fmt.Sprintf("got %d", s.K)}
	}
	if s.K > maxDim {
		return &ShapeError{Rule: fmt.Sprintf("K <= %d", maxDim), Detail: fmt.Sprintf("got %d", s.K)}
	}
	return nil
}

// FLOPs is 2*sum(M)*N*K; the dual GEMM does two products.
func (p *Problem) FLOPs(s Shape) float64 {
	f := 2 * float64(s.SumM()) * float64(s.N) * float64(s.K)
	if p.Kind == DualGEMM {
		f *= 2
	}
	return f
}

// operandBytes is an NVFP4 operand's size: half a byte per element plus one
// e4m3 scale byte per 16 elements.
func operandBytes(rows, k int) float64 {
	return float64(rows)*float64(k)/2 + float64(rows)*float64(k)/16
}

// MinBytes is the traffic of reading every input once and writing C once as
// fp16: the group GEMM has one B per group, the dual GEMM one A and B1, B2.
func (p *Problem) MinBytes(s Shape) float64 {
	var b float64
	for _, m := range s.M {
		b += operandBytes(m, s.K) + 2*float64(m)*float64(s.N)
		if p.Kind == GroupGEMM {
			b += operandBytes(s.N, s.K)
		}
	}
	if p.Kind == DualGEMM {
		b += 2 * operandBytes(s.N, s.K)
	}
	return b
}

// Ceilings are a device's throughput limits used for speed-of-light floors.
type Ceilings struct {
	TensorFLOPS    float64 // fp16 dense tensor-core rate with fp32 accumulation
	MemBytesPerSec float64
	Source         string
}

// CeilingsFor returns the ceilings for a device by name and compute
// capability. Hopper's tensor rate is the measured ~800 TFLOP/s from
// kernels.md (both H100 and H200); bandwidths are datasheet figures.
func CeilingsFor(name string, ccMajor, ccMinor int) Ceilings {
	n := strings.ToUpper(name)
	switch {
	case ccMajor == 9 && ccMinor == 0 && strings.Contains(n, "H200"):
		return Ceilings{800e12, 4.8e12, "H200: fp16 tensor 800 TFLOP/s measured (kernels.md); HBM3e 4.8 TB/s datasheet"}
	case ccMajor == 9 && ccMinor == 0 && strings.Contains(n, "H100") && strings.Contains(n, "PCIE"):
		return Ceilings{756e12, 2.0e12, "H100 PCIe: fp16 dense 756 TFLOP/s and HBM2e 2.0 TB/s, datasheet"}
	case ccMajor == 9 && ccMinor == 0 && strings.Contains(n, "H100"):
		return Ceilings{800e12, 3.35e12, "H100 SXM: fp16 tensor 800 TFLOP/s measured (kernels.md); HBM3 3.35 TB/s datasheet"}
	case ccMajor == 10 && ccMinor == 0 && strings.Contains(n, "B200"):
		return Ceilings{2.25e15, 8e12, "B200: fp16 dense 2.25 PFLOP/s and HBM3e 8 TB/s, datasheet"}
	}
	return Ceilings{100e12, 1e12, fmt.Sprintf("unknown device %q (sm_%d%d): conservative fallback of 100 TFLOP/s and 1 TB/s, floors are loose", name, ccMajor, ccMinor)}
}

// Floor is the speed-of-light time for s on a device with ceilings c: the
// larger of the compute and the memory time, and which one bound it.
func Floor(p *Problem, s Shape, c Ceilings) (seconds float64, bound string) {
	tc := p.FLOPs(s) / c.TensorFLOPS
	tm := p.MinBytes(s) / c.MemBytesPerSec
	if tc >= tm {
		return tc, "compute"
	}
	return tm, "memory"
}

// GeoMean is the geometric mean of positive values (0 for none).
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

//go:embed problems/*.json
var problemFiles embed.FS

type problemJSON struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Description string  `json:"description"`
	ATol        float64 `json:"atol"`
	RTol        float64 `json:"rtol"`
	Tests       []Shape `json:"tests"`
	Benchmarks  []Shape `json:"benchmarks"`
}

var (
	problemsOnce sync.Once
	problemsList []*Problem
	problemsErr  error
)

func loadProblems() ([]*Problem, error) {
	ents, err := problemFiles.ReadDir("problems")
	if err != nil {
		return nil, fmt.Errorf("kernels: read embedded problems: %w", err)
	}
	var out []*Problem
	for _, e := range ents {
		raw, err := problemFiles.ReadFile("problems/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("kernels: read problem %s: %w", e.Name(), err)
		}
		var pj problemJSON
		if err := json.Unmarshal(raw, &pj); err != nil {
			return nil, fmt.Errorf("kernels: parse problem %s: %w", e.Name(), err)
		}
		p := &Problem{Name: pj.Name, Description: pj.Description, ATol: pj.ATol, RTol: pj.RTol,
			Tests: pj.Tests, Benchmarks: pj.Benchmarks}
		switch pj.Kind {
		case "group":
			p.Kind = GroupGEMM
		case "dual":
			p.Kind = DualGEMM
		default:
			return nil, fmt.Errorf("kernels: problem %s: unknown kind %q", e.Name(), pj.Kind)
		}
		for _, s := range append(append([]Shape{}, p.Tests...), p.Benchmarks...) {
			if err := p.CheckShape(s); err != nil {
				return nil, fmt.Errorf("kernels: problem %s: shape %v: %w", p.Name, s, err)
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name > out[j].Name }) // group first, then dual
	return out, nil
}

// Problems returns the embedded problems (group GEMM first). The embedded
// JSON is checked by tests, so an error here is a build defect: it panics
// rather than hand callers a partial list.
func Problems() []*Problem {
	problemsOnce.Do(func() { problemsList, problemsErr = loadProblems() })
	if problemsErr != nil {
		panic(problemsErr)
	}
	return problemsList
}

// LookupProblem finds a problem by name; the error lists the known names.
func LookupProblem(name string) (*Problem, error) {
	var names []string
	for _, p := range Problems() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("kernels: unknown problem %q (known: %s)", name, strings.Join(names, ", "))
}

// ParseShapes reads a JSON array of shapes (the `--shapes FILE` format) and
// checks each against p's rules.
func (p *Problem) ParseShapes(data []byte) ([]Shape, error) {
	var ss []Shape
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ss); err != nil {
		return nil, fmt.Errorf("kernels: parse shapes: %w", err)
	}
	if len(ss) == 0 {
		return nil, fmt.Errorf("kernels: parse shapes: the array is empty")
	}
	for i, s := range ss {
		if err := p.CheckShape(s); err != nil {
			return nil, fmt.Errorf("kernels: shape %d %v: %w", i, s, err)
		}
	}
	return ss, nil
}
