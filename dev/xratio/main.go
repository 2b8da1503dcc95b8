// Command xratio compares one variant across two builds: each build's
// `web bench --json` document pairs the variant with the same baseline, and
// the ratio of the two paired speedups, per shape and over the shapes both
// documents timed, gets a 95% bootstrap interval. Kernel experiments
// measured as an experiment build against the plain one (dev/gpucall's
// expbuild.sh, docs/kernel-notes.md) are read this way, because one bench
// process runs one build.
//
// Usage, from the repository root (documents as files: untar
// results.tar.gz first):
//
//	go run ./dev/xratio NEW.json OLD.json
//
// Each speedup is bench's own: the geometric mean over rounds of baseline
// time / variant time, paired per round. A resample draws input sets, then
// rounds within each set, as bench does (stats.PairedSpeedupBySet), in each
// document independently; the geomean row resamples every shape at once.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/splitmix"
)

func main() {
	fs := flag.NewFlagSet("xratio", flag.ExitOnError)
	resamples := fs.Int("resamples", 2000, "bootstrap resamples")
	seed := fs.Uint64("seed", 1, "bootstrap seed")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: xratio [-resamples N] [-seed S] NEW.json OLD.json")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() != 2 {
		fs.Usage()
		os.Exit(2)
	}
	var docs [2]*result.Result
	for i, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xratio:", err)
			os.Exit(1)
		}
		if docs[i], err = decode(data); err != nil {
			fmt.Fprintf(os.Stderr, "xratio: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
	rows, err := compare(docs[0], docs[1], *resamples, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xratio:", err)
		os.Exit(1)
	}
	write(os.Stdout, docs[0], rows)
}

func decode(data []byte) (*result.Result, error) {
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode the result document: %w", err)
	}
	return &r, nil
}

// row is one shape's comparison, or the geomean's (Shape "geomean").
type row struct {
	Shape          string
	New, Old       float64 // each build's paired speedup over the baseline
	Ratio, Lo, Hi  float64 // New / Old with its 95% interval
	NewMed, OldMed float64 // the variant's median, us
}

// paired is one shape's per-round log speedups, grouped by input set.
type paired struct {
	bySet [][]float64
	mean  float64
}

func pairedOf(s result.Shape) (*paired, error) {
	if s.Variant == nil || s.Baseline == nil || s.Pairing == nil {
		return nil, errors.New("not timed against a baseline")
	}
	v, b, sets := s.Variant.SamplesNs, s.Baseline.SamplesNs, s.Pairing.Sets
	if len(v) == 0 || len(v) != len(b) || len(sets) != len(v) {
		return nil, fmt.Errorf("%d variant samples, %d baseline samples, %d set indices: want equal and nonzero", len(v), len(b), len(sets))
	}
	idx := map[int]int{}
	p := &paired{}
	var sum float64
	for i := range v {
		if v[i] <= 0 || b[i] <= 0 {
			return nil, fmt.Errorf("round %d: a sample is not positive", i)
		}
		l := math.Log(b[i]) - math.Log(v[i])
		sum += l
		k, ok := idx[sets[i]]
		if !ok {
			k = len(p.bySet)
			idx[sets[i]] = k
			p.bySet = append(p.bySet, nil)
		}
		p.bySet[k] = append(p.bySet[k], l)
	}
	p.mean = sum / float64(len(v))
	return p, nil
}

// resample draws sets, then rounds within each, and returns the mean log.
func (p *paired) resample(r *splitmix.Rand) float64 {
	var s float64
	var c int
	for range p.bySet {
		logs := p.bySet[r.Intn(len(p.bySet))]
		for range logs {
			s += logs[r.Intn(len(logs))]
			c++
		}
	}
	return s / float64(c)
}

func label(s result.Shape) string {
	ms := make([]string, len(s.M))
	for i, m := range s.M {
		ms[i] = fmt.Sprint(m)
	}
	return fmt.Sprintf("M %s N %d K %d", strings.Join(ms, ","), s.N, s.K)
}

// compare matches the documents' shapes by M, N and K (in the new
// document's order), and skips a shape either document did not time.
func compare(a, b *result.Result, resamples int, seed uint64) ([]row, error) {
	if resamples < 100 {
		return nil, fmt.Errorf("-resamples %d: want at least 100", resamples)
	}
	old := map[string]result.Shape{}
	for _, s := range b.Shapes {
		old[label(s)] = s
	}
	type pair struct {
		lbl  string
		n, o *paired
		nm   float64
		om   float64
	}
	var ps []pair
	for _, s := range a.Shapes {
		t, ok := old[label(s)]
		if !ok {
			continue
		}
		pn, err1 := pairedOf(s)
		po, err2 := pairedOf(t)
		if err1 != nil || err2 != nil {
			continue
		}
		ps = append(ps, pair{label(s), pn, po, s.Variant.Stats.MedianNs / 1e3, t.Variant.Stats.MedianNs / 1e3})
	}
	if len(ps) == 0 {
		return nil, errors.New("no shape was timed against a baseline in both documents")
	}
	r := splitmix.New(seed)
	diffs := make([][]float64, len(ps)+1) // per shape, then the geomean
	for i := range diffs {
		diffs[i] = make([]float64, resamples)
	}
	for k := 0; k < resamples; k++ {
		var g float64
		for i, p := range ps {
			d := p.n.resample(r) - p.o.resample(r)
			diffs[i][k] = d
			g += d
		}
		diffs[len(ps)][k] = g / float64(len(ps))
	}
	var rows []row
	var gn, go_ float64
	for i, p := range ps {
		lo, hi := bounds(diffs[i], p.n.mean-p.o.mean)
		rows = append(rows, row{Shape: p.lbl, New: math.Exp(p.n.mean), Old: math.Exp(p.o.mean),
			Ratio: math.Exp(p.n.mean - p.o.mean), Lo: lo, Hi: hi, NewMed: p.nm, OldMed: p.om})
		gn += p.n.mean
		go_ += p.o.mean
	}
	gn, go_ = gn/float64(len(ps)), go_/float64(len(ps))
	lo, hi := bounds(diffs[len(ps)], gn-go_)
	rows = append(rows, row{Shape: "geomean", New: math.Exp(gn), Old: math.Exp(go_), Ratio: math.Exp(gn - go_), Lo: lo, Hi: hi})
	return rows, nil
}

// bounds is the 95% interval of exp(d) over the resampled d, widened to
// hold the point (as bench's intervals are).
func bounds(d []float64, point float64) (lo, hi float64) {
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(p float64) float64 { return s[int(math.Round(p*float64(len(s)-1)))] }
	return math.Exp(math.Min(q(0.025), point)), math.Exp(math.Max(q(0.975), point))
}

func write(w io.Writer, a *result.Result, rows []row) {
	fmt.Fprintf(w, "%s, variant %q: new build / old build, each paired with the baseline\n\n", a.Problem, a.Variant.Spec)
	fmt.Fprintln(w, "| shape | new: median, speedup | old: median, speedup | ratio [95%] |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, r := range rows {
		if r.Shape == "geomean" {
			fmt.Fprintf(w, "| geomean | %.4f | %.4f | **%.4f** [%.4f, %.4f] |\n", r.New, r.Old, r.Ratio, r.Lo, r.Hi)
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f us, %.4f | %.2f us, %.4f | %.4f [%.4f, %.4f] |\n", r.Shape, r.NewMed, r.New, r.OldMed, r.Old, r.Ratio, r.Lo, r.Hi)
	}
}
