package pitches

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Submitted kernels. A submission is a folder (manifest.json plus the files
// it names, docs/kernel-contract.md) stored content-addressed: its hash is
// the sha256 the kernels package computes over the canonical manifest and
// every file. Stored sources never change; every upload to a pitch is a new
// version of that pitch's kernel, and the pitch's variant names the hash
// (`kernel:<hash>` with optional knob overrides).

// Limits on an upload. They keep one request from filling the database and
// the kernel page readable; the contract's examples are a few KiB.
const (
	MaxKernelBytes     = 1 << 20 // all files together
	MaxKernelFiles     = 32
	MaxKernelNameChars = 64 // one file name
	MaxKernelNoteChars = 500
)

// KernelVariantPrefix starts a variant spec that names a stored submission.
const KernelVariantPrefix = "kernel:"

var (
	kernelFileRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)
	kernelHashRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// kernelFileKinds are the file name endings a submission may hold: the
// manifest, CUDA sources and headers, PTX, cubin and fatbin images.
var kernelFileKinds = []string{".json", ".cu", ".cuh", ".h", ".hpp", ".inc", ".ptx", ".cubin", ".fatbin"}

// KernelFileKinds lists the accepted file name endings (for messages and
// the upload form's accept attribute).
func KernelFileKinds() []string { return append([]string(nil), kernelFileKinds...) }

// KernelService is the part of Service about submitted kernels.
// UploadKernel stores a checked submission as the pitch's next kernel
// version and names it in the pitch's variant, in one transaction
// (ActUploadKernel; a pitch with a measured run is locked). KernelSource
// returns a stored submission with its files when viewer may see them
// (CanSeeKernelSource), and the pitch versions carrying it; otherwise the
// error says who may. KernelVersions lists a pitch's uploads oldest first,
// KernelVersionsOf every upload of one submission.
type KernelService interface {
	UploadKernel(ctx context.Context, by *User, pitchID int64, in KernelUpload) (*KernelVersion, error)
	KernelSource(ctx context.Context, viewer *User, hash string) (*KernelSource, []KernelUse, error)
	KernelVersions(ctx context.Context, pitchID int64) ([]KernelVersion, error)
	KernelVersionsOf(ctx context.Context, hash string) ([]KernelVersion, error)
}

// KernelManifest is what the store keeps of a submission's manifest besides
// the manifest itself: the fields pages and checks need.
type KernelManifest struct {
	Name    string       `json:"name"`
	Problem string       `json:"problem"`
	Kind    string       `json:"kind"`   // cuda | ptx | cubin
	Source  string       `json:"source"` // the main file
	MinArch int          `json:"min_arch"`
	Entry   string       `json:"entry"`
	Knobs   []KernelKnob `json:"knobs"`
}

// KernelKnob is one knob a submission declares: a define with its values.
type KernelKnob struct {
	Key     string   `json:"key"`
	Define  string   `json:"define"`
	Values  []string `json:"values"`
	Default string   `json:"default"`
}

// KernelFile is one file of a submission.
type KernelFile struct {
	Name string
	Data []byte
}

// Text reports whether the file is shown as text (sources, headers, PTX,
// the manifest), not as a binary image.
func (f KernelFile) Text() bool {
	return !strings.HasSuffix(f.Name, ".cubin") && !strings.HasSuffix(f.Name, ".fatbin") && utf8.Valid(f.Data)
}

// KernelSource is a stored submission: immutable, named by its hash.
type KernelSource struct {
	Hash      string
	Manifest  KernelManifest
	Raw       json.RawMessage // manifest.json as uploaded
	Files     []KernelFile    // sorted by name, manifest.json included
	Size      int64           // bytes of all files
	CreatedBy int64           // who uploaded it first
	Author    string          // display name, filled on reads
	CreatedAt time.Time
}

// File returns the named file, nil when there is none.
func (k *KernelSource) File(name string) *KernelFile {
	for i := range k.Files {
		if k.Files[i].Name == name {
			return &k.Files[i]
		}
	}
	return nil
}

// FileMap is the submission as the kernels package reads it.
func (k *KernelSource) FileMap() map[string][]byte {
	m := make(map[string][]byte, len(k.Files))
	for _, f := range k.Files {
		m[f.Name] = f.Data
	}
	return m
}

// CompileReport is what `web kernel check --json` said about a submission
// when it was uploaded, run as a child process of the server.
type CompileReport struct {
	// Status: "compiled" (every architecture it was built for), "failed"
	// (NVRTC or the driver refused it: Message holds the messages),
	// "not compiled" (the check could not run here: Message says why, e.g.
	// "not compiled here: NVRTC unavailable").
	Status  string          `json:"status"`
	Message string          `json:"message,omitempty"`
	Report  json.RawMessage `json:"report,omitempty"` // the check's JSON document, unchanged
}

// KernelVersion is one upload of a kernel to a pitch.
type KernelVersion struct {
	PitchID    int64
	Version    int // 1 for the first upload to the pitch
	Hash       string
	UploadedBy int64
	Uploader   string // display name, filled on reads
	CreatedAt  time.Time
	Note       string
	Report     CompileReport
	// Filled on reads: the submission's name, kind and size.
	Name string
	Kind string
	Size int64
}

// KernelUse is a pitch version that carries a submission (for the kernel
// page and its visibility).
type KernelUse struct {
	PitchID      int64
	PitchTitle   string
	RoundNumber  int
	RoundStatus  RoundStatus
	ContestantID int64
	Version      int
	UploadedBy   int64
}

// KernelUpload is a validated submission on its way to a pitch. The caller
// (the web layer, through runner.CheckSubmission) has checked the manifest,
// the kind and the architectures and computed Hash; the service checks the
// permissions and the limits again and stores it in one transaction.
type KernelUpload struct {
	Hash     string
	Manifest KernelManifest
	Raw      json.RawMessage
	Files    map[string][]byte
	Report   CompileReport
	Note     string
	// Knobs are the knob overrides the pitch's variant carries (the part
	// after '?', e.g. "stages=3"); empty for the manifest's defaults.
	Knobs string
}

// KernelVariant is the variant spec naming submission hash with knobs.
func KernelVariant(hash, knobs string) string {
	if knobs == "" {
		return KernelVariantPrefix + hash
	}
	return KernelVariantPrefix + hash + "?" + knobs
}

// KernelVariantSpec is the variant a `web bench --kernel DIR` child is
// given for a submission with knob overrides knobs: "kernel[?knobs]".
func KernelVariantSpec(knobs string) string {
	if knobs == "" {
		return "kernel"
	}
	return "kernel?" + knobs
}

// ParseKernelVariant splits `kernel:<hash>[?knobs]`; ok is false when spec
// names no submission.
func ParseKernelVariant(spec string) (hash, knobs string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(spec), KernelVariantPrefix)
	if !found {
		return "", "", false
	}
	hash, knobs, _ = strings.Cut(rest, "?")
	return hash, knobs, true
}

// ValidKernelHash reports whether h looks like a submission hash (64
// lower-case hex digits).
func ValidKernelHash(h string) bool { return kernelHashRe.MatchString(h) }

// ValidateKernelFiles checks an upload's files against the limits before
// anything reads them: a count, a total size, plain file names inside the
// submission folder (no paths, no "..", no hidden files) with a known
// ending, and a manifest.json. Every error names the file.
func ValidateKernelFiles(files map[string][]byte) error {
	if len(files) == 0 {
		return invalid("files", "upload a kernel: a .cu file with its manifest.json, or a .tar/.zip of the folder")
	}
	if len(files) > MaxKernelFiles {
		return invalid("files", "a kernel may have at most %d files (got %d)", MaxKernelFiles, len(files))
	}
	names := make([]string, 0, len(files))
	total := 0
	for name, data := range files {
		names = append(names, name)
		total += len(data)
	}
	sort.Strings(names)
	if total > MaxKernelBytes {
		return invalid("files", "the kernel's files add up to %d bytes; the limit is %d (1 MiB)", total, MaxKernelBytes)
	}
	for _, name := range names {
		if err := ValidateKernelFileName(name); err != nil {
			return err
		}
		if len(files[name]) == 0 {
			return invalid("files."+name, "%s is empty", name)
		}
	}
	if _, ok := files["manifest.json"]; !ok {
		return invalid("files.manifest.json", "a kernel needs a manifest.json next to its source (docs/kernel-contract.md); got %s", strings.Join(names, ", "))
	}
	return nil
}

// ValidateKernelFileName checks one file name of a submission.
func ValidateKernelFileName(name string) error {
	field := "files." + name
	switch {
	case !utf8.ValidString(name):
		return invalid("files", "a file name must be UTF-8 text")
	case strings.ContainsAny(name, `/\`) || name == ".." || strings.Contains(name, ".."):
		return invalid(field, "file %q is outside the kernel's folder: names are plain file names, no paths and no \"..\"", name)
	case utf8.RuneCountInString(name) > MaxKernelNameChars:
		return invalid(field, "file name %q is longer than %d characters", name, MaxKernelNameChars)
	case !kernelFileRe.MatchString(name):
		return invalid(field, "file name %q may use only letters, digits, '_', '.', '+' and '-' (and must not start with '.')", name)
	}
	if !kernelKnownKind(name) {
		return invalid(field, "file %q has an unknown kind: a kernel holds %s files", name, strings.Join(kernelFileKinds, ", "))
	}
	return nil
}

func kernelKnownKind(name string) bool {
	ext := path.Ext(name)
	for _, k := range kernelFileKinds {
		if ext == k {
			return true
		}
	}
	return false
}

// ValidateKernelUpload checks what the service stores: the files' limits,
// the hash's form, the note, the knob overrides' form.
func ValidateKernelUpload(in KernelUpload) error {
	if err := ValidateKernelFiles(in.Files); err != nil {
		return err
	}
	if !ValidKernelHash(in.Hash) {
		return Errorf(EINTERNAL, "", "kernel upload without a valid hash (%q)", in.Hash)
	}
	if err := checkText("note", in.Note, MaxKernelNoteChars, 0); err != nil {
		return err
	}
	if in.Knobs != "" {
		if err := ValidateVariant("variant", "kernel?"+in.Knobs); err != nil {
			return err
		}
	}
	return nil
}

// CanSeeKernelSource reports whether viewer may read a submission's files
// (and its compile report, which quotes them). Sharks and admins always may:
// they judge a pitch's feasibility from its code. Its author (whoever
// uploaded it, or the contestant of a pitch carrying it) always may. Everyone
// else may once a round in which it was pitched has closed. uses are the
// pitch versions that carry it; createdBy is who stored it first.
func CanSeeKernelSource(viewer *User, createdBy int64, uses []KernelUse) bool {
	if viewer != nil {
		if viewer.Role == RoleAdmin || viewer.Role == RoleShark || viewer.ID == createdBy {
			return true
		}
	}
	for _, u := range uses {
		if u.RoundStatus == RoundClosed {
			return true
		}
		if viewer != nil && (u.ContestantID == viewer.ID || u.UploadedBy == viewer.ID) {
			return true
		}
	}
	return false
}

// KernelSourceHidden is the error for a viewer who may not read a
// submission's source: who may, and when everyone will.
func KernelSourceHidden(viewer *User, uses []KernelUse) error {
	rounds := map[int]bool{}
	var nums []string
	for _, u := range uses {
		if !rounds[u.RoundNumber] {
			rounds[u.RoundNumber] = true
			nums = append(nums, fmt.Sprint(u.RoundNumber))
		}
	}
	when := "once its round closes"
	if len(nums) == 1 {
		when = "once round " + nums[0] + " closes"
	}
	if viewer == nil {
		return Errorf(EUNAUTHORIZED, "", "log in to see this kernel: its source is shown to sharks, admins and its author, and to everyone %s", when)
	}
	return Errorf(EFORBIDDEN, "", "this kernel's source is shown to sharks, admins and its author until the round is over; everyone sees it %s", when)
}
