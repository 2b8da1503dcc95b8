package httpserver

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// exportPage is how many runs one store query reads while an export pages
// through every match: the store's own maximum page.
const exportPage = 1000

// exportableRuns is what /api/runs.csv and /api/runs.json (and /runs.csv,
// /runs.json) export. Without a limit parameter that is every run that
// matches, read page by page (newest first, by ID) so that no export is
// silently cut at the store's default page of 100 (issue 13: the export
// said 100 of 5,117 runs); X-Total-Count says how many rows came. With
// limit, it is one page and, when the page is full, a Link header with
// rel="next" names the next one (before= the last ID read), as GitHub's
// API does.
func (s *server) exportableRuns(w http.ResponseWriter, r *http.Request, f runner.Filter) ([]runJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	ctx := r.Context()
	vis := s.visibility(userFrom(ctx))
	if f.Limit > 0 {
		raw, err := s.runs.List(ctx, f)
		if err != nil {
			return nil, err
		}
		out, err := s.visibleRuns(ctx, vis, f, raw)
		if err != nil {
			return nil, err
		}
		if len(raw) == f.Limit {
			// Paging follows the store's IDs, not the visible rows: a
			// page whose runs were all filtered out still has a next.
			w.Header().Set("Link", "<"+nextExportURL(r.URL, raw[len(raw)-1].ID)+`>; rel="next"`)
		}
		return out, nil
	}
	var all []runJSON
	f.Limit = exportPage
	for {
		raw, err := s.runs.List(ctx, f)
		if err != nil {
			return nil, err
		}
		out, err := s.visibleRuns(ctx, vis, f, raw)
		if err != nil {
			return nil, err
		}
		all = append(all, out...)
		if len(raw) < f.Limit {
			break
		}
		f.BeforeID = raw[len(raw)-1].ID
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(all)))
	return all, nil
}

// nextExportURL is u (path and query, relative to this server) with
// before set to id.
func nextExportURL(u *url.URL, id int64) string {
	q := u.Query()
	q.Set("before", strconv.FormatInt(id, 10))
	return (&url.URL{Path: u.Path, RawQuery: q.Encode()}).String()
}
