package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/templates"
)

// Search, sort and filter for runs (/runs, GET /api/runs) and pitches
// (/pitches, GET /api/pitches), every parameter kept in the URL. The
// exact filters of runFilter stay as they were; a request with any of the
// search parameters goes through the store's search instead.

// searchStore is the store's search (sqlite implements it).
type searchStore interface {
	SearchRuns(ctx context.Context, q runner.Query) ([]runner.Run, int, error)
	SearchPitches(ctx context.Context, q pitches.PitchQuery) ([]pitches.Pitch, int, error)
}

func (s *server) searcher() (searchStore, error) {
	svc := audit.Inner(s.svc)
	if st, ok := svc.(searchStore); ok {
		return st, nil
	}
	return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot search")
}

// runSearchKeys are the parameters that make a runs list a search.
var runSearchKeys = []string{"q", "variant_prefix", "person", "round", "from", "to", "sort", "dir", "offset"}

func isSearch(q url.Values, keys []string) bool {
	for _, k := range keys {
		if strings.TrimSpace(q.Get(k)) != "" {
			return true
		}
	}
	return false
}

// dateParam reads a date (2026-11-25) or an RFC 3339 time; a bare date as
// the end of a range means the end of that day.
func dateParam(q url.Values, key string, end bool) (time.Time, error) {
	v := strings.TrimSpace(q.Get(key))
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, pitches.Errorf(pitches.EBADREQUEST, key, "%s must be a date (2026-11-25) or an RFC 3339 time", key)
	}
	return t, nil
}

// sortParams reads sort (one of keys) and dir (asc or desc; default desc
// for the keys in descDefault).
func sortParams(q url.Values, keys []string, def string, descDefault ...string) (string, bool, error) {
	key := strings.TrimSpace(q.Get("sort"))
	if key == "" {
		key = def
	}
	if !slices.Contains(keys, key) {
		return "", false, pitches.Errorf(pitches.EBADREQUEST, "sort", "sort must be one of %s", strings.Join(keys, ", "))
	}
	desc := slices.Contains(descDefault, key)
	switch d := strings.TrimSpace(q.Get("dir")); d {
	case "":
	case "asc":
		desc = false
	case "desc":
		desc = true
	default:
		return "", false, pitches.Errorf(pitches.EBADREQUEST, "dir", "dir must be asc or desc")
	}
	return key, desc, nil
}

func offsetParam(q url.Values) (int, error) {
	v := strings.TrimSpace(q.Get("offset"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, pitches.Errorf(pitches.EBADREQUEST, "offset", "offset must be 0 or a positive integer")
	}
	return n, nil
}

func roundQueryParam(q url.Values) (int, error) {
	v := strings.TrimSpace(q.Get("round"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, pitches.Errorf(pitches.EBADREQUEST, "round", "round must be a positive round number")
	}
	return n, nil
}

// runQuery reads a runs search from the query string: runFilter's
// parameters and the search's; a malformed one is a 400 naming it.
func runQuery(q url.Values) (runner.Query, error) {
	f, err := runFilter(q)
	if err != nil {
		return runner.Query{}, err
	}
	rq := runner.Query{Filter: f, Text: strings.TrimSpace(q.Get("q")), VariantPrefix: strings.TrimSpace(q.Get("variant_prefix")),
		Person: strings.TrimSpace(q.Get("person"))}
	if f.BeforeID > 0 {
		return rq, pitches.Errorf(pitches.EBADREQUEST, "before", "a search pages with offset, not before")
	}
	if rq.Round, err = roundQueryParam(q); err != nil {
		return rq, err
	}
	if rq.From, err = dateParam(q, "from", false); err != nil {
		return rq, err
	}
	if rq.To, err = dateParam(q, "to", true); err != nil {
		return rq, err
	}
	if rq.Sort, rq.Desc, err = sortParams(q, runner.SortKeys, "id", "id", "created", "speedup"); err != nil {
		return rq, err
	}
	if rq.Offset, err = offsetParam(q); err != nil {
		return rq, err
	}
	if rq.Limit == 0 {
		rq.Limit = 100
	}
	return rq, nil
}

// searchRuns runs rq for viewer. Runs whose results viewer may not see are
// redacted, and left out where the search itself would tell their outcome
// (a status filter, a sort by speedup); then total is -1 (unknown).
func (s *server) searchRuns(ctx context.Context, viewer *pitches.User, rq runner.Query) ([]runJSON, []runner.Run, int, error) {
	out, kept, total, _, err := s.searchRunsPage(ctx, viewer, rq)
	return out, kept, total, err
}

// searchRunsPage is searchRuns, and also how many runs the store returned
// before any were left out for viewer: fewer than rq.Limit means the last
// page (an export pages on until then).
func (s *server) searchRunsPage(ctx context.Context, viewer *pitches.User, rq runner.Query) ([]runJSON, []runner.Run, int, int, error) {
	st, err := s.searcher()
	if err != nil {
		return nil, nil, 0, 0, err
	}
	runs, total, err := st.SearchRuns(ctx, rq)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	vis := s.visibility(viewer)
	bySpeed := rq.Sort == "speedup"
	out := make([]runJSON, 0, len(runs))
	kept := runs[:0:0]
	dropping := bySpeed || rq.Status.Measured()
	for i := range runs {
		run := runs[i]
		hidden, err := vis.resultHidden(ctx, run.PitchID)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		if hidden && dropping {
			continue
		}
		kept = append(kept, run)
		if hidden {
			redact(&run)
		}
		r := run
		out = append(out, runJSON{Run: &r, ResultHidden: hidden, DeviceLabel: deviceLabel(&r)})
	}
	if dropping && !pitches.SeesEveryResult(viewer) {
		total = -1
	}
	return out, kept, total, len(runs), nil
}

// handleAPIRunSearch is GET /api/runs with search parameters: the runs,
// X-Total-Count when known, and a Link rel=next while more match.
func (s *server) handleAPIRunSearch(w http.ResponseWriter, r *http.Request) {
	rq, err := runQuery(r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out, _, total, err := s.searchRuns(r.Context(), userFrom(r.Context()), rq)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	setSearchPageHeaders(w, r.URL, rq, total, len(out))
	writeJSON(w, http.StatusOK, out)
}

// setSearchPageHeaders sets a search page's X-Total-Count (when known) and
// its Link rel=next while more may match; n is how many runs the page has.
func setSearchPageHeaders(w http.ResponseWriter, u *url.URL, rq runner.Query, total, n int) {
	if total >= 0 {
		w.Header().Set("X-Total-Count", strconv.Itoa(total))
	}
	if next := rq.Offset + rq.Limit; total < 0 || next < total {
		if total >= 0 || n > 0 {
			setNextLink(w, u, "offset", strconv.Itoa(next))
		}
	}
}

// sortLinks are the column heads' links for the list at path with query q
// sorted by the current key and direction.
func sortLinks(path string, q url.Values, keys []string, cur string, desc bool) map[string]templates.SortLink {
	out := map[string]templates.SortLink{}
	for _, k := range keys {
		next := url.Values{}
		for key, vals := range q {
			if key != "sort" && key != "dir" && key != "offset" && key != "before" && len(vals) > 0 && vals[0] != "" {
				next.Set(key, vals[0])
			}
		}
		next.Set("sort", k)
		l := templates.SortLink{}
		dir := "asc"
		if k == cur {
			l.State = "ascending"
			if desc {
				l.State = "descending"
			} else {
				dir = "desc"
			}
		}
		next.Set("dir", dir)
		l.Href = path + "?" + next.Encode()
		out[k] = l
	}
	return out
}

// runsSearchView fills the /runs page for a search.
func (s *server) runsSearchView(ctx context.Context, viewer *pitches.User, q url.Values, v *templates.RunsView) (*templates.RunsView, error) {
	v.Search = templates.RunSearch{Q: q.Get("q"), VariantPrefix: q.Get("variant_prefix"), Person: q.Get("person"), Round: q.Get("round"),
		From: q.Get("from"), To: q.Get("to"), Sort: q.Get("sort"), Dir: q.Get("dir")}
	rq, err := runQuery(q)
	if err != nil {
		v.Search.Total = pitches.ErrorMessage(err)
		rq = runner.Query{Sort: "id", Desc: true}
	}
	if rq.Limit == 100 && q.Get("limit") == "" {
		rq.Limit = 50
	}
	_, runs, total, err := s.searchRuns(ctx, viewer, rq)
	if err != nil {
		return nil, err
	}
	if v.Runs, err = s.runRows(ctx, s.visibility(viewer), runs); err != nil {
		return nil, err
	}
	if total >= 0 && v.Search.Total == "" {
		v.Search.Total = fmt.Sprintf("%d runs match.", total)
		if total == 1 {
			v.Search.Total = "1 run matches."
		}
	}
	v.Search.Columns = sortLinks("/runs", q, runner.SortKeys, rq.Sort, rq.Desc)
	if next := rq.Offset + rq.Limit; (total >= 0 && next < total) || (total < 0 && len(runs) > 0) {
		nq := url.Values{}
		for k, vals := range q {
			if len(vals) > 0 && vals[0] != "" && k != "offset" {
				nq.Set(k, vals[0])
			}
		}
		nq.Set("offset", strconv.Itoa(next))
		v.NextPage = nq.Encode()
	}
	return v, nil
}

// Pitches.

func pitchQuery(q url.Values) (pitches.PitchQuery, error) {
	pq := pitches.PitchQuery{Text: strings.TrimSpace(q.Get("q")), VariantPrefix: strings.TrimSpace(q.Get("variant_prefix")),
		Person: strings.TrimSpace(q.Get("person")), Limit: 50}
	var err error
	switch st := strings.TrimSpace(q.Get("status")); st {
	case "", string(pitches.PitchActive), string(pitches.PitchWithdrawn):
		pq.Status = pitches.PitchStatus(st)
	default:
		return pq, pitches.Errorf(pitches.EBADREQUEST, "status", "status must be active or withdrawn")
	}
	if pq.Round, err = roundQueryParam(q); err != nil {
		return pq, err
	}
	if pq.From, err = dateParam(q, "from", false); err != nil {
		return pq, err
	}
	if pq.To, err = dateParam(q, "to", true); err != nil {
		return pq, err
	}
	if pq.Sort, pq.Desc, err = sortParams(q, pitches.PitchSortKeys, "filed", "filed"); err != nil {
		return pq, err
	}
	if pq.Offset, err = offsetParam(q); err != nil {
		return pq, err
	}
	if v := strings.TrimSpace(q.Get("limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return pq, pitches.Errorf(pitches.EBADREQUEST, "limit", "limit must be between 1 and 500")
		}
		pq.Limit = n
	}
	return pq, nil
}

// searchPitches runs pq for viewer: pitches of rounds viewer may not read
// are left out (and then the total is unknown, -1).
func (s *server) searchPitches(ctx context.Context, viewer *pitches.User, pq pitches.PitchQuery) ([]pitches.Pitch, int, error) {
	st, err := s.searcher()
	if err != nil {
		return nil, 0, err
	}
	ps, total, err := st.SearchPitches(ctx, pq)
	if err != nil {
		return nil, 0, err
	}
	rounds := map[int]*pitches.Round{}
	out := []pitches.Pitch{}
	for _, p := range ps {
		round, ok := rounds[p.RoundNumber]
		if !ok {
			if round, err = s.svc.Round(ctx, p.RoundNumber); err != nil {
				return nil, 0, err
			}
			rounds[p.RoundNumber] = round
		}
		if !pitches.CanReadRound(viewer, round, s.cfg.PublicClosedRounds) {
			total = -1
			continue
		}
		out = append(out, p)
	}
	return out, total, nil
}

func (s *server) handleAPIPitchSearch(w http.ResponseWriter, r *http.Request) {
	pq, err := pitchQuery(r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ps, total, err := s.searchPitches(r.Context(), userFrom(r.Context()), pq)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if total >= 0 {
		w.Header().Set("X-Total-Count", strconv.Itoa(total))
	}
	out := make([]pitchJSON, 0, len(ps))
	for i := range ps {
		out = append(out, toPitchJSON(&ps[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handlePitchesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := templates.PitchesView{Q: q.Get("q"), Status: q.Get("status"), VariantPrefix: q.Get("variant_prefix"), Person: q.Get("person"),
		Round: q.Get("round"), From: q.Get("from"), To: q.Get("to")}
	pq, err := pitchQuery(q)
	status := http.StatusOK
	if err != nil {
		v.Err = s.formErr(r, err)
		status = errorStatus(err)
		pq = pitches.PitchQuery{Sort: "filed", Desc: true, Limit: 50}
	}
	ps, total, err := s.searchPitches(r.Context(), userFrom(r.Context()), pq)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	for _, p := range ps {
		v.Rows = append(v.Rows, templates.PitchRow{ID: p.ID, Round: p.RoundNumber, Title: p.Title, Contestant: p.Contestant, Status: string(p.Status),
			Variant: p.Variant, Filed: p.CreatedAt.UTC().Format("2006-01-02 15:04")})
	}
	if total >= 0 {
		v.Total = fmt.Sprintf("%d pitches match.", total)
		if total == 1 {
			v.Total = "1 pitch matches."
		}
	}
	v.Columns = sortLinks("/pitches", q, pitches.PitchSortKeys, pq.Sort, pq.Desc)
	page := func(offset int) string {
		nq := url.Values{}
		for k, vals := range q {
			if len(vals) > 0 && vals[0] != "" && k != "offset" {
				nq.Set(k, vals[0])
			}
		}
		nq.Set("offset", strconv.Itoa(offset))
		return "/pitches?" + nq.Encode()
	}
	if next := pq.Offset + pq.Limit; total < 0 && len(ps) > 0 || next < total {
		v.NextPage = page(next)
	}
	if pq.Offset > 0 {
		v.PrevPage = page(max(pq.Offset-pq.Limit, 0))
	}
	s.render(w, r, status, templates.PitchesPage(s.chrome(r, "Pitches", "rounds"), v))
}
