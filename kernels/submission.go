package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// A Submission is a kernel a team wrote: a manifest (manifest.json) and
// the files it names, checked by LoadSubmission or SubmissionFromFiles.
// docs/kernel-contract.md is the contract every field below follows.
type Submission struct {
	Manifest Manifest
	// Files holds every file the manifest names (source and headers), by
	// name, and "manifest.json" as given.
	Files map[string][]byte
	hash  string
}

// Manifest is manifest.json.
type Manifest struct {
	Name    string         `json:"name"`
	Problem string         `json:"problem"`
	Kind    string         `json:"kind"`
	Source  string         `json:"source"`
	Headers []string       `json:"headers,omitempty"`
	MinArch int            `json:"min_arch"`
	Entry   string         `json:"entry"`
	Launch  Launching      `json:"launch"`
	Knobs   []ManifestKnob `json:"knobs,omitempty"`
	// Description is free text shown with the kernel (optional).
	Description string `json:"description,omitempty"`
}

// Launching is the manifest's launch plan.
type Launching struct {
	// Mode: sequential | streams | graph (one launch of the per-group entry
	// per group) | grouped (one launch over the grouped table).
	Mode        string `json:"mode"`
	Block       []int  `json:"block"`
	TileM       int    `json:"tile_m"`
	TileN       int    `json:"tile_n"`
	SharedBytes int    `json:"shared_bytes"`
}

// ManifestKnob is one knob: a define with its declared values.
type ManifestKnob struct {
	Key     string   `json:"key"`
	Define  string   `json:"define"`
	Values  []string `json:"values"`
	Default string   `json:"default"`
	Doc     string   `json:"doc,omitempty"`
	// SharedBytes, when set, is the dynamic shared memory per block for
	// some of the values (e.g. one ring slot per stage): it replaces
	// launch.shared_bytes while the knob has that value (a later knob's
	// wins over an earlier one's).
	SharedBytes map[string]int `json:"shared_bytes,omitempty"`
}

// Submission kinds.
const (
	KindCUDA  = "cuda"  // .cu plus headers, compiled by NVRTC for the device
	KindPTX   = "ptx"   // PTX text, compiled by the driver's JIT at load
	KindCubin = "cubin" // a cubin or fatbin, loaded as is
)

// Limits of a submission. A fatbin with several architectures is the
// largest thing a team sends; 16 MiB is far above a GEMM's.
const (
	ManifestFile       = "manifest.json"
	MaxSubmissionBytes = 16 << 20
	maxManifestBytes   = 64 << 10
	maxHeaders         = 16
	maxKnobs           = 8
	maxKnobValues      = 16
	// maxSharedBytes is the most dynamic shared memory a block may ask
	// for on the devices this project runs on (Hopper's and Blackwell's
	// 227 KiB opt-in); plans check the device's own limit too.
	maxSharedBytes = hopperSharedOptin
)

// SubmissionError is a refused submission: Field names the manifest field
// (or file) at fault, e.g. "launch.block" or "files[kernel.cu]".
type SubmissionError struct {
	Field  string
	Reason string
}

func (e *SubmissionError) Error() string {
	return fmt.Sprintf("kernels: submission: %s: %s", e.Field, e.Reason)
}

func subErr(field, format string, a ...any) error {
	return &SubmissionError{Field: field, Reason: fmt.Sprintf(format, a...)}
}

var (
	subNameRE  = regexp.MustCompile(`^[a-z0-9_-]{1,40}$`)
	fileNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$`)
	cIdentRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	knobKeyRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	knobValRE  = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,32}$`)
	// ptxEntryRE finds the entry points of PTX text.
	ptxEntryRE = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)`)
)

// Architectures a manifest's min_arch may name: the compute capabilities
// NVRTC targets from 11.8 to 13.
var knownArchs = []int{80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121}

// LoadSubmission reads dir/manifest.json and the files it names, and
// checks them (SubmissionFromFiles). Other files in dir are not read.
func LoadSubmission(dir string) (*Submission, error) {
	read := func(name string, limit int64) ([]byte, error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err != nil {
			return nil, err
		}
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("larger than %d bytes", limit)
		}
		return b, nil
	}
	raw, err := read(ManifestFile, maxManifestBytes)
	if err != nil {
		return nil, subErr(ManifestFile, "read %s: %v", dir, err)
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{ManifestFile: raw}
	total := int64(len(raw))
	for _, name := range append([]string{m.Source}, m.Headers...) {
		if !fileNameRE.MatchString(name) {
			continue // named wrongly: the checks below say which field
		}
		if _, dup := files[name]; dup {
			continue
		}
		b, err := read(name, MaxSubmissionBytes-total)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // missing: the checks below name the field
			}
			return nil, subErr("files["+name+"]", "read: %v", err)
		}
		total += int64(len(b))
		files[name] = b
	}
	return SubmissionFromFiles(files)
}

// SubmissionFromFiles checks a submission held in memory: files must hold
// manifest.json and exactly the files it names. Every refusal is a
// *SubmissionError naming the field or file.
func SubmissionFromFiles(files map[string][]byte) (*Submission, error) {
	raw, ok := files[ManifestFile]
	if !ok {
		return nil, subErr(ManifestFile, "missing: a submission is manifest.json plus the files it names")
	}
	total := 0
	for _, b := range files {
		total += len(b)
	}
	if total > MaxSubmissionBytes {
		return nil, subErr("files", "%d bytes in all; at most %d", total, MaxSubmissionBytes)
	}
	if len(raw) > maxManifestBytes {
		return nil, subErr(ManifestFile, "%d bytes; at most %d", len(raw), maxManifestBytes)
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, err
	}
	if err := m.check(files); err != nil {
		return nil, err
	}
	named := map[string]bool{ManifestFile: true, m.Source: true}
	for _, h := range m.Headers {
		named[h] = true
	}
	for name := range files {
		if !named[name] {
			return nil, subErr("files["+name+"]", "not named by the manifest (source or headers); leave it out")
		}
	}
	s := &Submission{Manifest: *m, Files: map[string][]byte{}}
	for n, b := range files {
		s.Files[n] = bytes.Clone(b)
	}
	s.hash = s.computeHash()
	return s, nil
}

// parseManifest decodes manifest.json strictly: unknown fields and
// trailing data are refused.
func parseManifest(raw []byte) (*Manifest, error) {
	if !utf8.Valid(raw) {
		return nil, subErr(ManifestFile, "not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, subErr(ManifestFile, "parse: %v", err)
	}
	if dec.More() {
		return nil, subErr(ManifestFile, "parse: data after the JSON object")
	}
	return &m, nil
}

// check applies the contract's rules to m, in field order.
func (m *Manifest) check(files map[string][]byte) error {
	if !subNameRE.MatchString(m.Name) {
		return subErr("name", "%q: want 1 to 40 of a-z, 0-9, _ and -", m.Name)
	}
	p, err := LookupProblem(m.Problem)
	if err != nil {
		return subErr("problem", "%s", strings.TrimPrefix(err.Error(), "kernels: "))
	}
	switch m.Kind {
	case KindCUDA, KindPTX, KindCubin:
	default:
		return subErr("kind", "%q: want cuda, ptx or cubin", m.Kind)
	}
	if err := checkFileName("source", m.Source); err != nil {
		return err
	}
	src, ok := files[m.Source]
	if !ok {
		return subErr("source", "file %q is missing", m.Source)
	}
	if len(src) == 0 {
		return subErr("source", "file %q is empty", m.Source)
	}
	if m.Source == ManifestFile {
		return subErr("source", "the source cannot be the manifest")
	}
	if m.Kind != KindCUDA && len(m.Headers) > 0 {
		return subErr("headers", "only kind cuda takes headers (kind is %s)", m.Kind)
	}
	if len(m.Headers) > maxHeaders {
		return subErr("headers", "%d headers; at most %d", len(m.Headers), maxHeaders)
	}
	seen := map[string]bool{m.Source: true, ManifestFile: true, CommonHeader: true}
	for i, h := range m.Headers {
		field := fmt.Sprintf("headers[%d]", i)
		if err := checkFileName(field, h); err != nil {
			return err
		}
		if h == CommonHeader {
			return subErr(field, "%s is the project's shared header, given to every CUDA kernel already; name yours otherwise", CommonHeader)
		}
		if seen[h] {
			return subErr(field, "%q is named twice (or is the source)", h)
		}
		seen[h] = true
		if _, ok := files[h]; !ok {
			return subErr(field, "file %q is missing", h)
		}
		if err := checkText(field, files[h]); err != nil {
			return err
		}
	}
	switch m.Kind {
	case KindCUDA:
		if err := checkText("source", src); err != nil {
			return err
		}
	case KindPTX:
		if err := checkText("source", src); err != nil {
			return err
		}
		if !bytes.Contains(src, []byte(".target")) || !bytes.Contains(src, []byte(".version")) {
			return subErr("source", "%q is not PTX: no .version and .target directives", m.Source)
		}
		if _, err := PTXTarget(src); err != nil {
			return subErr("source", "%q: %v", m.Source, err)
		}
	case KindCubin:
		if _, err := BinaryArchs(src); err != nil {
			return subErr("source", "%q: %v", m.Source, err)
		}
	}
	if !slices.Contains(knownArchs, m.MinArch) {
		return subErr("min_arch", "%d: want one of %s (80 = any sm_80 or newer, 90 = sm_90a features, 100 = sm_100a)", m.MinArch, joinInts(knownArchs))
	}
	if !cIdentRE.MatchString(m.Entry) {
		return subErr("entry", "%q is not a C identifier (the extern \"C\" name of the kernel)", m.Entry)
	}
	if m.Kind == KindPTX {
		var entries []string
		for _, sm := range ptxEntryRE.FindAllSubmatch(src, -1) {
			entries = append(entries, string(sm[1]))
		}
		if !slices.Contains(entries, m.Entry) {
			return subErr("entry", "%q is not an .entry of %s (it has: %s)", m.Entry, m.Source, strings.Join(entries, ", "))
		}
	}
	if err := m.Launch.check(p); err != nil {
		return err
	}
	return m.checkKnobs()
}

func checkFileName(field, name string) error {
	if !fileNameRE.MatchString(name) {
		return subErr(field, "file name %q: want a plain name (letters, digits, _ . -; no folders), at most 100 characters", name)
	}
	return nil
}

// checkText refuses what NVRTC or the PTX JIT cannot take: bytes that are
// not UTF-8, and NUL.
func checkText(field string, b []byte) error {
	if !utf8.Valid(b) {
		return subErr(field, "not UTF-8 text")
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return subErr(field, "contains a NUL byte")
	}
	return nil
}

// launchModes are the modes a problem allows: the dual GEMM has one
// group, so it has no streams or grouped launch (as for the baseline).
func launchModes(p *Problem) []string {
	if p.Dual() {
		return []string{"sequential", "graph"}
	}
	return []string{"sequential", "streams", "graph", "grouped"}
}

func (l *Launching) check(p *Problem) error {
	if !slices.Contains(launchModes(p), l.Mode) {
		return subErr("launch.mode", "%q: want one of %s for %s", l.Mode, strings.Join(launchModes(p), ", "), p.Name)
	}
	if len(l.Block) != 3 {
		return subErr("launch.block", "want 3 numbers [x, y, z], got %d", len(l.Block))
	}
	threads := 1
	for i, b := range l.Block {
		if b < 1 || b > 1024 {
			return subErr("launch.block", "block[%d] = %d: want 1..1024", i, b)
		}
		threads *= b
	}
	if threads > 1024 {
		return subErr("launch.block", "%d threads per block; at most 1024", threads)
	}
	if l.TileM < 1 || l.TileM > 1024 {
		return subErr("launch.tile_m", "%d: want 1..1024 (token rows per block)", l.TileM)
	}
	if l.TileN < 1 || l.TileN > 1024 {
		return subErr("launch.tile_n", "%d: want 1..1024 (output columns per block)", l.TileN)
	}
	if l.SharedBytes < 0 || l.SharedBytes > maxSharedBytes {
		return subErr("launch.shared_bytes", "%d: want 0..%d", l.SharedBytes, maxSharedBytes)
	}
	return nil
}

// reservedDefines are set by pitchtank for every kernel.
var reservedDefines = []string{"DUAL"}

func (m *Manifest) checkKnobs() error {
	if len(m.Knobs) > maxKnobs {
		return subErr("knobs", "%d knobs; at most %d", len(m.Knobs), maxKnobs)
	}
	keys, defines := map[string]bool{}, map[string]bool{}
	for i, k := range m.Knobs {
		f := fmt.Sprintf("knobs[%d]", i)
		if !knobKeyRE.MatchString(k.Key) {
			return subErr(f+".key", "%q: want a-z first, then a-z, 0-9 and _ (at most 32)", k.Key)
		}
		if k.Key == "launch" {
			return subErr(f+".key", "launch is pitchtank's own knob (the launch mode); name yours otherwise")
		}
		if keys[k.Key] {
			return subErr(f+".key", "%q is declared twice", k.Key)
		}
		keys[k.Key] = true
		if !cIdentRE.MatchString(k.Define) {
			return subErr(f+".define", "%q is not a C identifier", k.Define)
		}
		if slices.Contains(reservedDefines, k.Define) || defines[k.Define] {
			return subErr(f+".define", "%q is reserved or used twice", k.Define)
		}
		defines[k.Define] = true
		if len(k.Values) == 0 || len(k.Values) > maxKnobValues {
			return subErr(f+".values", "%d values; want 1..%d", len(k.Values), maxKnobValues)
		}
		for j, v := range k.Values {
			if !knobValRE.MatchString(v) {
				return subErr(fmt.Sprintf("%s.values[%d]", f, j), "%q: want 1 to 32 of letters, digits, _ . + -", v)
			}
			if slices.Index(k.Values, v) != j {
				return subErr(fmt.Sprintf("%s.values[%d]", f, j), "%q is listed twice", v)
			}
		}
		if !slices.Contains(k.Values, k.Default) {
			return subErr(f+".default", "%q is not one of the values (%s)", k.Default, strings.Join(k.Values, ", "))
		}
		for v, n := range k.SharedBytes {
			if !slices.Contains(k.Values, v) {
				return subErr(f+".shared_bytes", "%q is not one of the values (%s)", v, strings.Join(k.Values, ", "))
			}
			if n < 0 || n > maxSharedBytes {
				return subErr(f+".shared_bytes", "%s: %d: want 0..%d", v, n, maxSharedBytes)
			}
		}
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// Hash is the submission's content address: sha256 (hex) over every file
// (manifest.json included) as length-prefixed name and bytes, sorted by
// name. The manifest enters as given, so the hash is of exactly what was
// submitted.
func (s *Submission) Hash() string {
	if s.hash == "" {
		s.hash = s.computeHash()
	}
	return s.hash
}

func (s *Submission) computeHash() string {
	names := make([]string, 0, len(s.Files))
	for n := range s.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "pitchtank-submission-v1;%d;", len(names))
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s;%d:", len(n), n, len(s.Files[n]))
		h.Write(s.Files[n])
		h.Write([]byte{';'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SubmissionPrefix starts a variant spec that names a submitted kernel:
// "kernel:<hash>" or "kernel:<hash>?stages=3". "kernel" alone names the
// one submission a bench child was given (web bench --kernel DIR).
const SubmissionPrefix = "kernel:"

// IsSubmissionSpec reports whether spec names a submitted kernel.
func IsSubmissionSpec(spec string) bool {
	base, _, _ := strings.Cut(strings.TrimSpace(spec), "?")
	return base == "kernel" || strings.HasPrefix(base, SubmissionPrefix)
}

// ParseSubmissionSpec splits "kernel:<hash>?query" into the hash ("" for
// plain "kernel") and the knob query; ok is false for other specs.
func ParseSubmissionSpec(spec string) (hash, query string, ok bool) {
	base, query, _ := strings.Cut(strings.TrimSpace(spec), "?")
	if base == "kernel" {
		return "", query, true
	}
	if h, found := strings.CutPrefix(base, SubmissionPrefix); found {
		return h, query, true
	}
	return "", "", false
}

// Variant is the submission's default variant: knobs at their defaults,
// named kernel:<hash>.
func (s *Submission) Variant() Variant {
	m := s.Manifest
	base := SubmissionPrefix + s.Hash()
	desc := m.Description
	if desc == "" {
		desc = fmt.Sprintf("Submitted %s kernel %q (%s, entry %s).", m.Kind, m.Name, m.Source, m.Entry)
	}
	v := Variant{Name: base, Base: base, Title: "Submitted kernel " + m.Name, Problem: m.Problem,
		Description: desc, SourceFile: m.Source, MinArch: m.MinArch, Kernel: s}
	v.Knobs, _ = defaultKnobs(m.Problem, kernelFamily{s})
	return v
}

// ResolveSubmission resolves spec against submission s for problem p:
// "kernel", "kernel:<hash>" (the hash must be s's) with optional knob
// overrides as for built-ins ("kernel?stages=3").
func (p *Problem) ResolveSubmission(s *Submission, spec string) (Variant, error) {
	hash, query, ok := ParseSubmissionSpec(spec)
	if !ok {
		return Variant{}, fmt.Errorf("kernels: variant %q does not name a submitted kernel (want kernel or kernel:<hash>, with knobs after ?)", spec)
	}
	if hash != "" && hash != s.Hash() {
		return Variant{}, fmt.Errorf("kernels: variant %q names kernel %s, but the submission given is %s", spec, hash, s.Hash())
	}
	if s.Manifest.Problem != p.Name {
		return Variant{}, fmt.Errorf("kernels: the submitted kernel %q is for %s, not %s", s.Manifest.Name, s.Manifest.Problem, p.Name)
	}
	return p.applyKnobs(s.Variant(), query)
}
