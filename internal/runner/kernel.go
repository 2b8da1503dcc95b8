package runner

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/kernels"
)

// Runs of submitted kernels. A run whose variant is `kernel:<hash>[?knobs]`
// measures a stored submission: the worker writes its files to the run's
// folder and starts `web bench --kernel DIR --variant 'kernel[?knobs]'`.
// The server never compiles or loads a submission: the child does, so a
// submission that fails to compile, crashes or hangs fails only its run.

// KernelStore is where the runner reads stored submissions (internal/sqlite).
type KernelStore interface {
	StoredKernel(ctx context.Context, hash string) (*pitches.KernelSource, error)
}

// KernelDirName is the folder, next to a run's result file, that holds the
// submission the run measures.
const KernelDirName = "kernel"

// KernelDir is the submission folder of the run whose result goes to
// resultPath.
func KernelDir(resultPath string) string {
	return filepath.Join(filepath.Dir(resultPath), KernelDirName)
}

// checkKernelRequest checks a request whose variant names a submission: the
// submission is stored, solves the request's problem, its knob overrides
// are knobs it declares with declared values, it runs on a GPU (bench has
// no CPU path for submissions) and the baseline is a built-in.
func (r *Runner) checkKernelRequest(ctx context.Context, req *Request) error {
	hash, knobs, ok := pitches.ParseKernelVariant(req.Variant)
	if !ok {
		return nil
	}
	if r.cfg.Kernels == nil {
		return pitches.Errorf(pitches.EINVALID, "variant", "this server stores no submitted kernels, so it cannot run %s", req.Variant)
	}
	if !pitches.ValidKernelHash(hash) {
		return pitches.Errorf(pitches.EINVALID, "variant", "a submitted kernel is named kernel:<hash>, the 64 hex digits of its sha256 (got %q)", req.Variant)
	}
	k, err := r.cfg.Kernels.StoredKernel(ctx, hash)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return pitches.Errorf(pitches.EINVALID, "variant", "kernel %s is not stored on this server: upload it to the pitch first", hash)
	}
	if err != nil {
		return fmt.Errorf("runner: check kernel %s: %w", hash, err)
	}
	if k.Manifest.Problem != req.Problem {
		return pitches.Errorf(pitches.EINVALID, "variant", "kernel %s (%s) solves %s, not %s", short(hash), k.Manifest.Name, k.Manifest.Problem, req.Problem)
	}
	if err := CheckKernelKnobs(k.Manifest, knobs); err != nil {
		return err
	}
	if req.Device == "cpu" {
		return pitches.Errorf(pitches.EINVALID, "device", "a submitted kernel runs on a GPU only; pick a GPU device")
	}
	return nil
}

// CheckKernelKnobs checks knob overrides (the spec's part after '?')
// against the knobs the manifest declares.
func CheckKernelKnobs(m pitches.KernelManifest, query string) error {
	if query == "" {
		return nil
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return pitches.Errorf(pitches.EINVALID, "variant", "knob overrides %q are not key=value pairs: %v", query, err).
			WithCause(&kernels.KnobError{Knob: query, Reason: "not key=value pairs"})
	}
	var declared []string
	for _, k := range m.Knobs {
		declared = append(declared, k.Key)
	}
	for key, vs := range vals {
		i := slices.IndexFunc(m.Knobs, func(k pitches.KernelKnob) bool { return k.Key == key })
		if i < 0 {
			if len(declared) == 0 {
				return pitches.Errorf(pitches.EINVALID, "variant", "unknown knob %q: kernel %s declares no knobs", key, m.Name).
					WithCause(&kernels.KnobError{Knob: key, Value: strings.Join(vs, ","), Reason: "unknown knob"})
			}
			return pitches.Errorf(pitches.EINVALID, "variant", "unknown knob %q: kernel %s declares %s", key, m.Name, strings.Join(declared, ", ")).
				WithCause(&kernels.KnobError{Knob: key, Value: strings.Join(vs, ","), Reason: "unknown knob"})
		}
		for _, v := range vs {
			if !slices.Contains(m.Knobs[i].Values, v) {
				return pitches.Errorf(pitches.EINVALID, "variant", "knob %s: value %q not allowed (allowed: %s)", key, v, strings.Join(m.Knobs[i].Values, ", ")).
					WithCause(&kernels.KnobError{Knob: key, Value: v, Allowed: m.Knobs[i].Values})
			}
		}
	}
	return nil
}

// writeKernel writes submission hash's files into dir (created), for the
// child to read with --kernel dir.
func (r *Runner) writeKernel(ctx context.Context, hash, dir string) error {
	if r.cfg.Kernels == nil {
		return fmt.Errorf("this server stores no submitted kernels")
	}
	k, err := r.cfg.Kernels.StoredKernel(ctx, hash)
	if err != nil {
		return fmt.Errorf("load kernel %s: %s", short(hash), message(err))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create the kernel folder: %w", err)
	}
	for _, f := range k.Files {
		// Names were checked on upload; checked again, since this writes
		// to disk.
		if err := pitches.ValidateKernelFileName(f.Name); err != nil {
			return fmt.Errorf("kernel %s: %s", short(hash), message(err))
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o600); err != nil {
			return fmt.Errorf("write kernel file %s: %w", f.Name, err)
		}
	}
	return nil
}

// benchVariant is the variant spec bench is given for run variant v: v
// itself, or "kernel[?knobs]" for a submitted kernel (its document then
// names that spec).
func benchVariant(v string) string {
	if _, knobs, ok := pitches.ParseKernelVariant(v); ok {
		return pitches.KernelVariantSpec(knobs)
	}
	return v
}

// short is a hash's first 12 digits, for messages.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
