package pitches

import "time"

// Scorecard history against a pitch's result. Every edit of a scorecard is
// a new version (scoring.md, "Append-only history"); once a measured result
// of the pitch exists, a shark who already scored may still correct scores
// and notes, and that is shown rather than forbidden. What the app scores as
// the shark's prediction is the estimate as it stood before the result
// (scoring.md: "editing after seeing the result is not possible" is the
// lock; this makes the scoring independent of whether the lock held, e.g.
// for versions stored before it existed or runs that do not lock).

// ChangedAfterResult reports whether scorecard version v was stored after
// the pitch's first result existed (firstResult; zero when there is none).
// A version stored at the same instant counts as before.
func ChangedAfterResult(v Scorecard, firstResult time.Time) bool {
	return !firstResult.IsZero() && v.CreatedAt.After(firstResult)
}

// PredictionAt returns the version of one shark's scorecard that was current
// at firstResult: the highest version stored at or before it. versions are
// one shark's versions of one pitch, in any order. With no result yet
// (zero firstResult) it is the latest version. ok is false when the shark
// had no version by then: an estimate given after the result is not a
// prediction and is not scored.
func PredictionAt(versions []Scorecard, firstResult time.Time) (Scorecard, bool) {
	var best Scorecard
	ok := false
	for _, v := range versions {
		if ChangedAfterResult(v, firstResult) {
			continue
		}
		if !ok || v.Version > best.Version {
			best, ok = v, true
		}
	}
	return best, ok
}
