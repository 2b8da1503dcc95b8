package runner

import "time"

// Query is a runs search (the /runs page and GET /api/runs beyond the
// exact filters): Filter's fields, and text, a variant prefix, the person
// who asked, the round of the run's pitch, a date range and a sort order.
// Zero fields do not filter. Offset pages a sorted list.
type Query struct {
	Filter
	Text          string    // in the variant, problem, baseline, device, suite or the pitch's title (case-insensitive)
	VariantPrefix string    // the variant spec starts with it ("baseline?stages" finds every stages override)
	Person        string    // the login of who asked for the run
	Round         int       // runs of the round's pitches
	From, To      time.Time // queued at or after From, before To
	Sort          string    // one of SortKeys; default "id"
	Desc          bool
	Offset        int
}

// SortKeys are the columns a runs search sorts by.
var SortKeys = []string{"id", "created", "status", "variant", "device", "problem", "speedup"}
