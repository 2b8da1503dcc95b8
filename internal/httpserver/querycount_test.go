package httpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// A cached page costs the viewer's session lookup and nothing else; the
// first request after a write computes it again.
func TestCachedPagesSkipTheQueries(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	ctx := context.Background()
	measuredRound(t, a, 1)
	p := a.pitch("alice", 1, "Pipeline stages")
	a.status(1, pitches.RoundJudging)
	if _, err := a.db.SubmitScorecard(ctx, a.users["oracle"], p.ID, allScores(7)); err != nil {
		t.Fatal(err)
	}
	importAt(t, a, p, 120, 100, nil)
	session, err := a.db.CreateSession(ctx, a.users["vera"].ID, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	h := a.srv.Config.Handler
	queries := func(path string) int64 {
		qctx, n := sqlite.CountQueries(ctx)
		req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(qctx)
		req.Header.Set("Cookie", sessionCookie+"="+session)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", path, w.Code)
		}
		return n.Load()
	}
	for _, path := range []string{"/rounds/1", "/pitches/" + itoa64(p.ID), "/calibration", "/runs", "/"} {
		cold, warm := queries(path), queries(path)
		t.Logf("%s: %d queries computed, %d cached", path, cold, warm)
		if cold <= 2 || warm != 1 {
			t.Errorf("%s: %d queries computed, %d cached; want more than 2, then the session lookup only", path, cold, warm)
		}
	}
	if _, err := a.db.CastVote(ctx, a.users["oracle"], 1, pitches.VoteInput{PitchID: p.ID, Justification: "measured faster"}); err != nil {
		t.Fatal(err)
	}
	if n := queries("/rounds/1"); n <= 2 {
		t.Errorf("after a write the round page made %d queries: served from the cache", n)
	}
}
