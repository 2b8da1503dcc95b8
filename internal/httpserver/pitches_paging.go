package httpserver

import (
	"net/http"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Pitch lists in the API page: at most maxPitchPage per answer (default
// defaultPitchPage), in filing order, after= the last pitch id of the
// previous page; a page followed by more has a Link rel="next" (issue 13:
// no list grows with the whole database, and none is cut silently).
const (
	defaultPitchPage = 500
	maxPitchPage     = 1000
)

// pagePitches returns the page of ps (a round's pitches in filing order)
// that r's limit and after ask for, and sets the Link header when more
// follow.
func pagePitches(w http.ResponseWriter, r *http.Request, ps []pitches.Pitch) ([]pitches.Pitch, error) {
	q := r.URL.Query()
	limit := defaultPitchPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPitchPage {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "limit", "limit must be between 1 and %d", maxPitchPage)
		}
		limit = n
	}
	start := 0
	if v := q.Get("after"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "after", "after must be a pitch id, a positive integer")
		}
		start = len(ps)
		for i := range ps {
			if ps[i].ID == id {
				start = i + 1
				break
			}
		}
	}
	end := min(start+limit, len(ps))
	page := ps[start:end]
	if end < len(ps) {
		setNextLink(w, r.URL, "after", strconv.FormatInt(ps[end-1].ID, 10))
	}
	return page, nil
}
