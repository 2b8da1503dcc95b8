package pitches

import "time"

// PitchQuery is a pitch search (the /pitches page, GET /api/pitches):
// text, status, variant prefix, contestant, round and filing date, with a
// sort order. Zero fields do not filter.
type PitchQuery struct {
	Text          string // in the title, category or body (case-insensitive)
	Status        PitchStatus
	VariantPrefix string
	Person        string // the contestant's login
	Round         int
	From, To      time.Time // filed at or after From, before To
	Sort          string    // one of PitchSortKeys; default "filed"
	Desc          bool
	Limit         int // default 50, at most 500
	Offset        int
}

// PitchSortKeys are the columns a pitch search sorts by.
var PitchSortKeys = []string{"filed", "title", "round", "status", "variant", "contestant"}
