package httpserver

import (
	"context"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// filePitch files a pitch through the store with its variant as
// pitchVariant spells it.
func (s *server) filePitch(ctx context.Context, u *pitches.User, in pitches.PitchInput) (*pitches.Pitch, error) {
	v, err := s.pitchVariant(ctx, in.RoundNumber, in.Variant)
	if err != nil {
		return nil, err
	}
	in.Variant = v
	return s.svc.FilePitch(ctx, u, in)
}

// editPitch edits pitch id through the store. A variant that is another
// spelling of the stored one (the form re-sending it, knobs reordered, a
// default spelled out) is no change: the stored spelling is kept, so the
// edit of a measured pitch, whose variant is locked, goes through. A new
// variant is checked and spelled by pitchVariant (in the pitch's round).
func (s *server) editPitch(ctx context.Context, u *pitches.User, id int64, in pitches.PitchInput) (*pitches.Pitch, error) {
	if p, err := s.svc.Pitch(ctx, id); err == nil {
		problem, _ := s.roundProblem(ctx, p.RoundNumber)
		if pitches.VariantKey(catalogueSpelling(problem, p.Variant)) == pitches.VariantKey(catalogueSpelling(problem, in.Variant)) {
			in.Variant = p.Variant
		} else {
			v, err := s.pitchVariant(ctx, p.RoundNumber, in.Variant)
			if err != nil {
				return nil, err
			}
			in.Variant = v
		}
	}
	return s.svc.EditPitch(ctx, u, id, in)
}

// pitchVariant is the variant to store for a pitch of round: where it names
// a kernel of the round's problem, the catalogue's spelling (defaults
// dropped, knobs in the kernel's order), so that the store's
// one-pitch-per-variant rule sees "baseline?stages=1" as "baseline" and
// results match it (docs/api.md); else variant as given.
//
// It refuses a variant that names a kernel of the problem with knobs that
// kernel does not have ("baseline?stages=99", "wgmma?tile_m=7"): otherwise
// the pitch is filed and the mistake shows only when someone runs it, after
// the sharks have judged it. A variant whose name is no kernel of the
// problem is a free label (a kernel measured elsewhere and imported,
// docs/runs-import.md) and passes, as do uploaded kernels (kernel:<hash>,
// checked at upload), an empty variant, and any variant in a round that
// declares no problem yet. The store applies the rest (syntax, one pitch
// per variant); a missing round is its to name.
func (s *server) pitchVariant(ctx context.Context, round int, variant string) (string, error) {
	problem, r := s.roundProblem(ctx, round)
	spec := strings.TrimSpace(variant)
	if problem == "" || !namesKernel(problem, spec) {
		return variant, nil
	}
	if err := pitches.ValidateVariant("variant", variant); err != nil {
		return "", err // malformed: refused as typed, not tidied
	}
	canon, err := runner.KernelsCatalog{}.CanonicalVariant(problem, spec)
	if err != nil {
		return "", pitches.Errorf(pitches.EINVALID, "variant", "%s (round %d measures %s)", err.Error(), r.Number, problem)
	}
	return canon, nil
}

// roundProblem is the problem round measures, "" when it declares none or
// cannot be read.
func (s *server) roundProblem(ctx context.Context, round int) (string, *pitches.Round) {
	r, err := s.svc.Round(ctx, round)
	if err != nil {
		return "", nil
	}
	m := runner.MeasurementOf(r)
	if !m.Declared() {
		return "", nil
	}
	return m.Problem, r
}

// namesKernel reports whether spec's name is a built-in kernel of problem
// (not a free label, an uploaded kernel or no variant).
func namesKernel(problem, spec string) bool {
	name, _, _ := strings.Cut(spec, "?")
	if name == "" || strings.HasPrefix(name, pitches.KernelVariantPrefix) {
		return false
	}
	_, err := runner.KernelsCatalog{}.CheckVariant(problem, name)
	return err == nil
}

// catalogueSpelling is spec in the catalogue's spelling where it names a
// kernel of problem with valid knobs, else spec trimmed: the form two
// spellings of one variant are compared in.
func catalogueSpelling(problem, spec string) string {
	return runner.VariantSpelling(runner.KernelsCatalog{}, problem, spec)
}
