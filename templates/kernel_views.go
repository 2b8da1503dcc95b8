package templates

import (
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Views of submitted kernels: the kernel page (/kernels/{hash}) and the
// kernel panel of the pitch page.

// KernelDiff is a unified line diff of one file against another.
type KernelDiff struct {
	From, To       string // labels of the two sides
	Hunks          []DiffHunk
	Added, Deleted int
	Note           string // why there is no (full) diff, when there is none
}

// Same reports a diff without changes.
func (d KernelDiff) Same() bool { return d.Note == "" && len(d.Hunks) == 0 }

// DiffHunk is one @@ block of a unified diff.
type DiffHunk struct {
	FromLine, FromCount, ToLine, ToCount int
	Lines                                []DiffLine
}

// DiffLine is one line: Op is " " (context), "-" or "+".
type DiffLine struct {
	Op, Text string
}

// KernelFileView is one file of a submission on its page.
type KernelFileView struct {
	Name   string
	Size   int
	HTML   string // highlighted source (chroma, classes only); "" for a binary file
	Binary bool
	Main   bool   // the manifest's source
	Archs  string // a cubin's or fatbin's architectures
}

// KernelEntryRow is one entry point of one compiled variant.
type KernelEntryRow struct {
	Name                            string
	Registers, Shared, Spill, Stack int
}

// KernelCheckRow is one (architecture, variant) of the compile report.
type KernelCheckRow struct {
	Arch, Variant string
	OK            bool
	Messages      string
	Note          string
	Entries       []KernelEntryRow
}

// KernelRunRow is a run that measured the kernel. Speedup is empty when
// the viewer may not see its results yet (blind judging).
type KernelRunRow struct {
	ID      int64
	PitchID int64
	Variant string
	Device  string
	Status  string
	Speedup string
	Hidden  bool
	Created string
}

// KernelUseRow is a pitch version that carries the kernel.
type KernelUseRow struct {
	PitchID    int64
	PitchTitle string
	Round      int
	Version    int
}

// KernelView is the kernel page.
type KernelView struct {
	Hash     string
	Manifest pitches.KernelManifest
	Launch   string
	Size     int64
	Author   string
	Created  string
	Files    []KernelFileView
	Uses     []KernelUseRow
	Uploaded bool // just uploaded (the redirect after an upload)

	// The pitch version the page is read in (the newest use unless the
	// address names one), and what it is compared with.
	PitchID    int64
	PitchTitle string
	Version    int
	Note       string
	Report     pitches.CompileReport
	Checks     []KernelCheckRow
	Skipped    []string // architectures the check did not try, with why
	ReportJSON string   // the report as stored, indented, when it has no known shape

	PrevLabel string // "version 1 (3f2a…)"; "" when this is the first
	PrevHash  string
	PrevDiffs []KernelDiff
	BaseLabel string // "the round's baseline (baseline: gemm.cu)"
	BaseDiff  *KernelDiff
	BaseNote  string // why there is no baseline diff

	Runs []KernelRunRow
}

// KernelPanel is the kernel section of the pitch page: the versions of the
// pitch's kernel and, for its contestant or an admin while the round is
// pitching, the upload form.
type KernelPanel struct {
	PitchID   int64
	Versions  []pitches.KernelVersion // oldest first
	CanUpload bool
	Locked    string // why uploads are closed, when CanUpload is false and the viewer could otherwise
	Err       *FormError
	Note      string
	Knobs     string
}

// Current is the newest version, nil when none.
func (p KernelPanel) Current() *pitches.KernelVersion {
	if len(p.Versions) == 0 {
		return nil
	}
	return &p.Versions[len(p.Versions)-1]
}

// KernelAccept is the upload input's accept attribute.
func KernelAccept() string {
	return strings.Join(append(pitches.KernelFileKinds(), ".tar", ".zip", ".tgz", ".gz"), ",")
}

func kernelURL(hash string) string { return "/kernels/" + hash }

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// kernelVariantHash is the hash a variant spec names, "" for built-ins.
func kernelVariantHash(spec string) string {
	h, _, ok := pitches.ParseKernelVariant(spec)
	if !ok || !pitches.ValidKernelHash(h) {
		return ""
	}
	return h
}

func diffClass(op string) string {
	switch op {
	case "+":
		return "diff-add"
	case "-":
		return "diff-del"
	}
	return "diff-ctx"
}

func hunkHeader(h DiffHunk) string {
	return "@@ -" + itoa(h.FromLine) + "," + itoa(h.FromCount) + " +" + itoa(h.ToLine) + "," + itoa(h.ToCount) + " @@"
}

func reportClass(status string) string {
	switch status {
	case "compiled":
		return "badge badge-ok"
	case "failed":
		return "badge badge-bad"
	}
	return "badge"
}
