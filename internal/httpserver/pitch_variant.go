package httpserver

import (
	"context"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// filePitch files a pitch through the store once its variant passes
// checkPitchVariant.
func (s *server) filePitch(ctx context.Context, u *pitches.User, in pitches.PitchInput) (*pitches.Pitch, error) {
	if err := s.checkPitchVariant(ctx, in.RoundNumber, in.Variant); err != nil {
		return nil, err
	}
	return s.svc.FilePitch(ctx, u, in)
}

// editPitch edits pitch id through the store once its variant passes
// checkPitchVariant (in its own round).
func (s *server) editPitch(ctx context.Context, u *pitches.User, id int64, in pitches.PitchInput) (*pitches.Pitch, error) {
	if p, err := s.svc.Pitch(ctx, id); err == nil && strings.TrimSpace(p.Variant) != strings.TrimSpace(in.Variant) {
		if err := s.checkPitchVariant(ctx, p.RoundNumber, in.Variant); err != nil {
			return nil, err
		}
	}
	return s.svc.EditPitch(ctx, u, id, in)
}

// checkPitchVariant refuses a pitch variant that names a kernel of its
// round's problem with knobs that kernel does not have ("baseline?stages=99",
// "wgmma?tile_m=7"): otherwise the pitch is filed and the mistake shows only
// when someone runs it, after the sharks have judged it. A variant whose
// name is no kernel of the problem is a free label (a kernel measured
// elsewhere and imported, docs/runs-import.md) and passes, as do uploaded
// kernels (kernel:<hash>, checked at upload), an empty variant, and any
// variant in a round that declares no problem yet. The store applies the
// rest (syntax, one pitch per variant); a missing round is its to name.
func (s *server) checkPitchVariant(ctx context.Context, round int, variant string) error {
	spec := strings.TrimSpace(variant)
	if spec == "" || strings.HasPrefix(spec, "kernel:") {
		return nil
	}
	r, err := s.svc.Round(ctx, round)
	if err != nil {
		return nil
	}
	m := runner.MeasurementOf(r)
	if !m.Declared() {
		return nil
	}
	var cat runner.KernelsCatalog
	name, _, _ := strings.Cut(spec, "?")
	if _, err := cat.CheckVariant(m.Problem, name); err != nil {
		return nil // not a kernel of this problem: a free label
	}
	if _, err := cat.CheckVariant(m.Problem, spec); err != nil {
		return pitches.Errorf(pitches.EINVALID, "variant", "%s (round %d measures %s)", err.Error(), r.Number, m.Problem)
	}
	return nil
}
