// Command peercmp sets `web bench --json` documents beside the PyTorch
// peers measured in the same device call (bench/peer/peer.py's output):
// per shape the variant's median and each peer form's, the peer's time
// over ours (above 1: ours is faster), and the geometric means over the
// shapes both timed. Issue 11's targets are such ratios (docs/BENCHMARKS.md
// sections 27-28); this makes them a command instead of arithmetic by hand.
//
// Usage, from the repository root (documents as files: untar
// results.tar.gz first):
//
//	go run ./dev/peercmp -peer peer.json DOC.json...
//
// A document's shapes are matched to the peer's by problem, M list, N and
// K; a shape without a peer, or that bench did not time, is left out of
// the geomeans and said so.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/internal/stats"
)

// peerDoc is the part of peer.py's document peercmp reads.
type peerDoc struct {
	Device   string `json:"device"`
	Problems map[string]struct {
		Shapes []struct {
			M     []int `json:"m"`
			N     int   `json:"n"`
			K     int   `json:"k"`
			Forms map[string]struct {
				MedianUs float64 `json:"median_us"`
			} `json:"forms"`
		} `json:"shapes"`
	} `json:"problems"`
}

// line is one shape of a document beside the peers (or the geomean row:
// Shape "geomean").
type line struct {
	Shape string
	Ours  float64            // median, us
	Peers map[string]float64 // form -> median, us
}

func main() {
	fs := flag.NewFlagSet("peercmp", flag.ExitOnError)
	peerPath := fs.String("peer", "", "bench/peer/peer.py's output document (required)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: peercmp -peer PEER.json DOC.json...")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if *peerPath == "" || fs.NArg() == 0 {
		fs.Usage()
		os.Exit(2)
	}
	var peer peerDoc
	if err := readJSON(*peerPath, &peer); err != nil {
		fmt.Fprintln(os.Stderr, "peercmp:", err)
		os.Exit(1)
	}
	for _, path := range fs.Args() {
		var doc result.Result
		if err := readJSON(path, &doc); err != nil {
			fmt.Fprintln(os.Stderr, "peercmp:", err)
			os.Exit(1)
		}
		lines, skipped, err := compare(&doc, &peer)
		if err != nil {
			fmt.Fprintf(os.Stderr, "peercmp: %s: %v\n", path, err)
			os.Exit(1)
		}
		write(os.Stdout, &doc, peer.Device, lines, skipped)
	}
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// key names a shape the same way in both documents.
func key(m []int, n, k int) string { return fmt.Sprintf("M %v N %d K %d", m, n, k) }

// compare returns doc's timed shapes that have peers, in doc's order, then
// the geomean row over them; skipped names the shapes left out and why.
func compare(doc *result.Result, peer *peerDoc) (lines []line, skipped []string, err error) {
	p, ok := peer.Problems[doc.Problem]
	if !ok {
		return nil, nil, fmt.Errorf("the peer document has no %q", doc.Problem)
	}
	forms := map[string]map[string]float64{}
	for _, s := range p.Shapes {
		f := map[string]float64{}
		for name, v := range s.Forms {
			if v.MedianUs > 0 {
				f[name] = v.MedianUs
			}
		}
		forms[key(s.M, s.N, s.K)] = f
	}
	var ours []float64
	for _, s := range doc.Shapes {
		k := key(s.M, s.N, s.K)
		f, ok := forms[k]
		switch {
		case s.Variant == nil || s.Variant.Stats.MedianNs <= 0:
			skipped = append(skipped, k+": not timed")
			continue
		case !ok || len(f) == 0:
			skipped = append(skipped, k+": no peer")
			continue
		}
		med := s.Variant.Stats.MedianNs / 1e3
		lines = append(lines, line{Shape: k, Ours: med, Peers: f})
		ours = append(ours, med)
	}
	if len(lines) == 0 {
		return nil, skipped, fmt.Errorf("no timed shape has a peer")
	}
	// A form missing on some shape has no geomean (it would not be over the
	// same shapes).
	g := line{Shape: "geomean", Ours: stats.GeoMean(ours), Peers: map[string]float64{}}
	for name := range lines[0].Peers {
		var vs []float64
		for _, l := range lines {
			if v, ok := l.Peers[name]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == len(lines) {
			g.Peers[name] = stats.GeoMean(vs)
		}
	}
	return append(lines, g), skipped, nil
}

func write(w io.Writer, doc *result.Result, peerDevice string, lines []line, skipped []string) {
	var names []string
	for name := range lines[len(lines)-1].Peers {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "%s, variant %q on %s; peers on %s (peer time / ours: above 1, ours is faster)\n\n",
		doc.Problem, doc.Variant.Spec, doc.Device.Name, peerDevice)
	fmt.Fprint(w, "| shape | ours, us |")
	for _, n := range names {
		fmt.Fprintf(w, " peer (%s), us | ours vs (%s) |", n, n)
	}
	fmt.Fprint(w, "\n| --- | ---: |")
	for range names {
		fmt.Fprint(w, " ---: | ---: |")
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		b := ""
		if l.Shape == "geomean" {
			b = "**"
		}
		fmt.Fprintf(w, "| %s | %s%.2f%s |", l.Shape, b, l.Ours, b)
		for _, n := range names {
			v, ok := l.Peers[n]
			if !ok {
				fmt.Fprint(w, " — | — |")
				continue
			}
			fmt.Fprintf(w, " %.2f | %s%.3fx%s |", v, b, v/l.Ours, b)
		}
		fmt.Fprintln(w)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "\nleft out: %s", s)
	}
	fmt.Fprintln(w)
}
