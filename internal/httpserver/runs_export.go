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

// exportable is what /api/runs.csv and /api/runs.json (and /runs.csv,
// /runs.json) export: the runs the /runs page lists for the same query, a
// search's (exportableSearch) or a filter's (exportableRuns), with shapes.
func (s *server) exportable(w http.ResponseWriter, r *http.Request) ([]runJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	q := r.URL.Query()
	if isSearch(q, runSearchKeys) {
		return s.exportableSearch(w, r)
	}
	f, err := runFilter(q)
	if err != nil {
		return nil, err
	}
	f.WithShapes = true
	return s.exportableRuns(w, r, f)
}

// exportableRuns is the export of filter f. Without a limit parameter that
// is every run that matches, read page by page (newest first, by ID) so that no export is
// silently cut at the store's default page of 100 (issue 13: the export
// said 100 of 5,117 runs); X-Total-Count says how many rows came. With
// limit, it is one page and, when the page is full, a Link header with
// rel="next" names the next one (before= the last ID read), as GitHub's
// API does.
func (s *server) exportableRuns(w http.ResponseWriter, r *http.Request, f runner.Filter) ([]runJSON, error) {
	if f.Limit > 0 {
		return s.listRunsPage(w, r, f)
	}
	ctx := r.Context()
	vis := s.visibility(userFrom(ctx))
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

// exportableSearch is exportableRuns for a search (any of runSearchKeys):
// the runs the /runs page lists for it, in its order. Without limit that is
// every match, read exportPage at a time by offset (a run added while an
// export pages can shift a later page by one: exports are for data at
// rest); with limit, one page, with X-Total-Count and a Link to the next as
// GET /api/runs gives.
func (s *server) exportableSearch(w http.ResponseWriter, r *http.Request) ([]runJSON, error) {
	q := r.URL.Query()
	rq, err := runQuery(q)
	if err != nil {
		return nil, err
	}
	rq.WithShapes = true
	ctx, viewer := r.Context(), userFrom(r.Context())
	if q.Get("limit") != "" {
		out, _, total, _, err := s.searchRunsPage(ctx, viewer, rq)
		if err != nil {
			return nil, err
		}
		setSearchPageHeaders(w, r.URL, rq, total, len(out))
		return out, nil
	}
	rq.Limit = exportPage
	var all []runJSON
	for {
		out, _, _, n, err := s.searchRunsPage(ctx, viewer, rq)
		if err != nil {
			return nil, err
		}
		all = append(all, out...)
		if n < rq.Limit {
			break
		}
		rq.Offset += n
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(all)))
	return all, nil
}

// setNextLink sets the Link header of a page followed by more: the
// request's own path and query (relative to this server) with key set to
// value, rel="next", as GitHub's API pages.
func setNextLink(w http.ResponseWriter, u *url.URL, key, value string) {
	q := u.Query()
	q.Set(key, value)
	w.Header().Set("Link", "<"+(&url.URL{Path: u.Path, RawQuery: q.Encode()}).String()+`>; rel="next"`)
}
