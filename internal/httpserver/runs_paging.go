package httpserver

import (
	"net/http"
	"strconv"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// defaultRunsPage is how many runs GET /api/runs answers without a limit.
const defaultRunsPage = 100

// listRunsPage is one page of GET /api/runs: runs as the viewer may see
// them and, when the page is full, a Link header with rel="next" naming the
// next page (before= the last run read), so a client never mistakes the
// first page for every run (issue 13).
func (s *server) listRunsPage(w http.ResponseWriter, r *http.Request, f runner.Filter) ([]runJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	if f.Limit == 0 {
		f.Limit = defaultRunsPage
	}
	raw, err := s.runs.List(r.Context(), f)
	if err != nil {
		return nil, err
	}
	out, err := s.visibleRuns(r.Context(), s.visibility(userFrom(r.Context())), f, raw)
	if err != nil {
		return nil, err
	}
	if len(raw) == f.Limit {
		setNextLink(w, r.URL, "before", strconv.FormatInt(raw[len(raw)-1].ID, 10))
	}
	return out, nil
}
