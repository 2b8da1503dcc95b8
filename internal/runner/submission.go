package runner

import (
	"errors"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/kernels"
)

// submission is an upload the kernels package read and checked.
type submission struct {
	manifest pitches.KernelManifest
	hash     string
	sub      *kernels.Submission
}

// parseSubmission checks an upload against the kernel contract
// (kernels.SubmissionFromFiles, docs/kernel-contract.md) and returns its
// hash and the manifest fields the store keeps. A refusal is EINVALID
// naming the field as the upload form and API name it: "manifest.<field>"
// for the manifest's fields, "files.<name>" for a file.
func parseSubmission(files map[string][]byte) (*submission, error) {
	s, err := kernels.SubmissionFromFiles(files)
	if err != nil {
		var se *kernels.SubmissionError
		if !errors.As(err, &se) {
			return nil, err
		}
		return nil, pitches.Errorf(pitches.EINVALID, submissionField(se.Field), "%s: %s", se.Field, se.Reason)
	}
	m := s.Manifest
	out := &submission{hash: s.Hash(), sub: s, manifest: pitches.KernelManifest{
		Name: m.Name, Problem: m.Problem, Kind: m.Kind, Source: m.Source, MinArch: m.MinArch, Entry: m.Entry,
	}}
	for _, k := range m.Knobs {
		out.manifest.Knobs = append(out.manifest.Knobs, pitches.KernelKnob{Key: k.Key, Define: k.Define, Values: k.Values, Default: k.Default})
	}
	return out, nil
}

// submissionField maps the kernels package's field names ("launch.block",
// "files[kernel.cu]", "manifest.json") to the upload's.
func submissionField(f string) string {
	switch {
	case f == kernels.ManifestFile:
		return "files." + kernels.ManifestFile
	case f == "files":
		return "files"
	case strings.HasPrefix(f, "files[") && strings.HasSuffix(f, "]"):
		return "files." + f[len("files["):len(f)-1]
	}
	return "manifest." + f
}
