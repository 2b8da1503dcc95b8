// Command ladderjson writes internal/demo/ladder_h100.json, the demo's H100
// ladder measurements, and internal/demo/ladder_h200.json, the rungs
// measured again on an H200 (one file per device, named by -device's
// card), from `web bench --json` result documents: per rung
// the problem, variant, document name, start time, bench's paired geomean
// speedup and, per shape, both roles' median times, their correctness and
// the paired speedup with its 95% interval and verdict.
//
// Usage, from the repository root:
//
//	go run ./dev/ladderjson -device 'NVIDIA H100 80GB HBM3 (pitchtank ladder, 2026-11-22)' \
//	    [-merge internal/demo/ladder_h100.json] [-o FILE] DOC ...
//
// A DOC is a result document, or ARCHIVE.tar.gz:MEMBER for one inside the
// results.tar.gz that dev/gpucall's scripts return. Rungs come out in the
// order given. With -merge, the rungs of an existing ladder file are kept
// (in their order) and a DOC of the same problem and variant replaces its
// rung; new rungs are appended. The result documents themselves are not
// committed (each holds up to 2000 raw samples per role and shape), so
// -merge is how a new measurement joins the older ones.
//
// Only names reach the file, never where a document lay on a machine: the
// `document` field is the file's base name, or ARCHIVE:MEMBER with the
// archive's base name. -merge applies the same rule to the rungs it keeps.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ladder is the file's shape (internal/demo's ladderData reads it strictly).
type ladder struct {
	Device string `json:"device"`
	Rungs  []rung `json:"rungs"`
}

type rung struct {
	Problem       string  `json:"problem"`
	Variant       string  `json:"variant"`
	Document      string  `json:"document"`
	StartedAt     string  `json:"started_at"`
	PairedGeomean pyFloat `json:"paired_geomean"`
	Shapes        []shape `json:"shapes"`
}

type shape struct {
	Label      string  `json:"label"`
	BaselineUs pyFloat `json:"baseline_us"`
	VariantUs  pyFloat `json:"variant_us"`
	Correct    bool    `json:"correct"`
	Paired     pyFloat `json:"paired_speedup"`
	PairedLo   pyFloat `json:"paired_lo"`
	PairedHi   pyFloat `json:"paired_hi"`
	Verdict    string  `json:"verdict"`
}

// pyFloat is written as the file has always been written (by Python's
// json module before this tool): the shortest decimal that reads back
// exactly, with ".0" on whole numbers, so regenerating it changes no value
// and no byte.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(float64(f), 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}

// benchDoc is the part of a result document (docs/bench-result.md) this
// tool reads. Decoding is not strict: the document has many more fields.
type benchDoc struct {
	Status    string `json:"status"`
	Problem   string `json:"problem"`
	StartedAt string `json:"started_at"`
	Variant   *struct {
		Spec string `json:"spec"`
		// Name is the canonical spec (knobs in their declared order), the
		// key kernels/ladder.json and the demo use; older documents lack it.
		Name string `json:"name"`
	} `json:"variant"`
	Baseline *struct {
		Spec string `json:"spec"`
	} `json:"baseline"`
	Shapes []struct {
		Index           int     `json:"index"`
		M               []int   `json:"m"`
		N               int     `json:"n"`
		K               int     `json:"k"`
		Correct         bool    `json:"correct"`
		BaselineCorrect *bool   `json:"baseline_correct"`
		VariantTiming   *timing `json:"variant_timing"`
		BaselineTiming  *timing `json:"baseline_timing"`
		Pairing         *struct {
			Speedup struct {
				Point float64 `json:"point"`
				Lo    float64 `json:"lo"`
				Hi    float64 `json:"hi"`
			} `json:"speedup"`
			Verdict string `json:"verdict"`
		} `json:"pairing"`
	} `json:"shapes"`
	Summary struct {
		GeomeanSpeedup *float64 `json:"geomean_speedup"`
	} `json:"summary"`
}

type timing struct {
	Stats struct {
		MedianNs float64 `json:"median_ns"`
	} `json:"stats"`
}

func main() {
	fs := flag.NewFlagSet("ladderjson", flag.ContinueOnError)
	device := fs.String("device", "", "the imported runs' device label, e.g. 'NVIDIA H100 80GB HBM3 (pitchtank ladder, 2026-11-22)'")
	merge := fs.String("merge", "", "an existing ladder file whose rungs are kept unless a document replaces them")
	out := fs.String("o", "", "write here (atomically) instead of stdout")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ladderjson -device LABEL [-merge LADDER.json] [-o FILE] DOC|ARCHIVE.tar.gz:MEMBER ...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() == 0 && *merge == "" {
		fmt.Fprintln(os.Stderr, "ladderjson: no result documents (and no -merge file)")
		fs.Usage()
		os.Exit(2)
	}
	b, err := build(*device, *merge, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "ladderjson:", err)
		os.Exit(1)
	}
	if err := write(*out, b); err != nil {
		fmt.Fprintln(os.Stderr, "ladderjson:", err)
		os.Exit(1)
	}
}

// build returns the ladder file's bytes: the merged rungs, then each
// document's rung in order.
func build(device, merge string, docs []string) ([]byte, error) {
	var l ladder
	if merge != "" {
		data, err := os.ReadFile(merge)
		if err != nil {
			return nil, fmt.Errorf("read -merge file: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("parse -merge file %s: %w", merge, err)
		}
		for i := range l.Rungs {
			l.Rungs[i].Document = documentName(l.Rungs[i].Document)
		}
	}
	if device != "" {
		l.Device = device
	}
	if l.Device == "" {
		return nil, errors.New("-device is required (the label the demo's imported runs carry)")
	}
	for _, spec := range docs {
		data, err := readDoc(spec)
		if err != nil {
			return nil, err
		}
		r, err := rungOf(documentName(spec), data)
		if err != nil {
			return nil, err
		}
		replaced := false
		for i := range l.Rungs {
			if l.Rungs[i].Problem == r.Problem && l.Rungs[i].Variant == r.Variant {
				l.Rungs[i], replaced = r, true
				break
			}
		}
		if !replaced {
			l.Rungs = append(l.Rungs, r)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // variant specs hold '&'
	enc.SetIndent("", " ")
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}

// documentName drops where a document lay: "DIR/g_fused.json" becomes
// "g_fused.json", "DIR/results.tar.gz:g_wgmma.json" becomes
// "results.tar.gz:g_wgmma.json".
func documentName(spec string) string {
	if archive, member, ok := splitArchive(spec); ok {
		return filepath.Base(archive) + ":" + member
	}
	return filepath.Base(spec)
}

func splitArchive(spec string) (archive, member string, ok bool) {
	i := strings.Index(spec, ".tar.gz:")
	if i < 0 {
		return "", "", false
	}
	return spec[:i+len(".tar.gz")], spec[i+len(".tar.gz:"):], true
}

// readDoc reads a document file, or a member of a .tar.gz archive.
func readDoc(spec string) ([]byte, error) {
	archive, member, ok := splitArchive(spec)
	if !ok {
		data, err := os.ReadFile(spec)
		if err != nil {
			return nil, fmt.Errorf("read result document: %w", err)
		}
		return data, nil
	}
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", archive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("archive %s has no member %q", archive, member)
		}
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", archive, err)
		}
		if filepath.Clean(h.Name) == filepath.Clean(member) {
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("archive %s: read %s: %w", archive, member, err)
			}
			return data, nil
		}
	}
}

// rungOf extracts one rung from a paired benchmark document. Every shape
// must have been timed for both roles and compared: the demo imports per
// shape medians, and a rung with a missing shape would score on fewer
// shapes than its peers.
func rungOf(name string, data []byte) (rung, error) {
	var d benchDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return rung{}, fmt.Errorf("%s: parse result document: %w", name, err)
	}
	fail := func(format string, a ...any) (rung, error) {
		return rung{}, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...))
	}
	switch {
	case d.Status != "ok":
		return fail("status %q: only a finished, correct run (status ok) belongs in the ladder", d.Status)
	case d.Problem == "":
		return fail("no problem")
	case d.Variant == nil || d.Variant.Spec == "":
		return fail("no variant")
	case d.Baseline == nil:
		return fail("baseline is null: the ladder's rungs are paired with the baseline (--baseline baseline)")
	case d.Summary.GeomeanSpeedup == nil:
		return fail("summary.geomean_speedup is null")
	case len(d.Shapes) == 0:
		return fail("no shapes")
	}
	started, err := time.Parse(time.RFC3339Nano, d.StartedAt)
	if err != nil {
		return fail("started_at: %v", err)
	}
	variant := d.Variant.Spec
	if d.Variant.Name != "" {
		variant = d.Variant.Name
	}
	r := rung{
		Problem:       d.Problem,
		Variant:       variant,
		Document:      name,
		StartedAt:     started.UTC().Truncate(time.Second).Format(time.RFC3339),
		PairedGeomean: round(*d.Summary.GeomeanSpeedup, 4),
	}
	for _, s := range d.Shapes {
		if s.VariantTiming == nil || s.BaselineTiming == nil || s.Pairing == nil {
			return fail("shape %d was not timed and compared for both roles", s.Index)
		}
		if len(s.M) == 0 {
			return fail("shape %d has no m", s.Index)
		}
		p := s.Pairing.Speedup
		r.Shapes = append(r.Shapes, shape{
			Label: label(s.M, s.N, s.K),
			// Medians to the nanosecond, in microseconds.
			BaselineUs: round(s.BaselineTiming.Stats.MedianNs/1e3, 3),
			VariantUs:  round(s.VariantTiming.Stats.MedianNs/1e3, 3),
			Correct:    s.Correct && (s.BaselineCorrect == nil || *s.BaselineCorrect),
			Paired:     round(p.Point, 4),
			PairedLo:   round(p.Lo, 4),
			PairedHi:   round(p.Hi, 4),
			Verdict:    s.Pairing.Verdict,
		})
	}
	return r, nil
}

// label names a shape as the seeds' tables do: "g=8 N=4096 K=7168" for a
// grouped GEMM, "M=256 N=4096 K=7168" for a single one.
func label(m []int, n, k int) string {
	if len(m) == 1 {
		return fmt.Sprintf("M=%d N=%d K=%d", m[0], n, k)
	}
	return fmt.Sprintf("g=%d N=%d K=%d", len(m), n, k)
}

// round rounds to the given decimals as the decimal text does (the exact
// binary value, ties to even), so a value already rounded stays as it is.
func round(x float64, decimals int) pyFloat {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', decimals, 64), 64)
	return pyFloat(v)
}

// write puts b in path atomically (temp file, rename), or on stdout.
func write(path string, b []byte) error {
	if path == "" {
		_, err := os.Stdout.Write(b)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ladderjson-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
