package pitches

import "fmt"

// Blind judging covers every run of a pitched variant, not only the runs
// filed under the pitch. A pitch's results are hidden from sharks who have
// not scored it while its round is open (CanSeeResults), but a run of the
// same variant filed under no pitch is nobody's judgement and visible to
// all, and one filed under another pitch is visible to that pitch's
// contestant and scorers: either would show the number early, and a card
// filed after seeing it would still be scored as a prediction, since the
// pitch itself has no result yet. So while a round is open, a run of the
// variant an active pitch of it names (same problem) must be a run of that
// pitch (of one of them, where several contestants pitch one variant).

// OpenPitch is an active pitch of a round that is not closed, as the store
// sees it when a run is stored: the pitches a run of the same problem must
// not bypass.
type OpenPitch struct {
	PitchID     int64
	RoundNumber int
	Variant     string
}

// CheckBlindRun returns nil when a run of variant filed under pitch pitchID
// (0: none) shows no open pitch's result early, else ECONFLICT on field
// "pitch_id" naming the pitch to run it on.
func CheckBlindRun(pitchID int64, variant string, open []OpenPitch) error {
	var named *OpenPitch
	for i, o := range open {
		if !SameVariant(variant, o.Variant) {
			continue
		}
		if o.PitchID == pitchID {
			return nil
		}
		if named == nil {
			named = &open[i]
		}
	}
	if named == nil {
		return nil
	}
	where := "under no pitch"
	if pitchID != 0 {
		where = fmt.Sprintf("under pitch %d", pitchID)
	}
	return Errorf(ECONFLICT, "pitch_id", "variant %s is pitch %d's in round %d, which is still open: run it on pitch %d, so that its result stays hidden from sharks who have not scored it (a run %s would show it to everyone who can see that)",
		variant, named.PitchID, named.RoundNumber, named.PitchID, where)
}
