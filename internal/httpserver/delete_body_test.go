package httpserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// Every DELETE route takes no body, as the bodyless POSTs take none
// (decodeEmpty): a field is refused with 400 naming it, any other JSON with
// 400, and nothing is deleted; no body, whitespace or {} is no body. The
// routes come from the router, so a DELETE route added without the check
// fails here; one whose {id} the test cannot fill with a stored thing gets
// an id nothing has, which is still refused with 400 before the lookup.
func TestDeleteRoutesRefuseABody(t *testing.T) {
	a, _ := newTrackedApp(t)
	a.round(1)
	p := a.pitch("alice", 1, "Three stages")
	var base runner.Run
	a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline",
		"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400,
			"variant_us": 300}}}).wantStatus(t, http.StatusCreated).decode(t, &base)
	var tok struct {
		ID int64 `json:"id"`
	}
	a.api("POST", "/api/tokens", "admin", map[string]string{"label": "ci"}).wantStatus(t, http.StatusCreated).decode(t, &tok)
	var hook notify.Hook
	a.api("POST", "/api/webhooks", "admin", map[string]any{"url": "http://127.0.0.1:9/hook", "secret": "a-long-webhook-secret",
		"events": []string{"run.finished"}}).wantStatus(t, http.StatusCreated).decode(t, &hook)
	var th tracking.Threshold
	a.api("POST", "/api/thresholds", "admin", map[string]any{"round": 1, "baseline_run": base.ID, "percent": 5}).
		wantStatus(t, http.StatusCreated).decode(t, &th)
	stored := map[string]struct {
		id   int64
		list string
	}{
		"/api/tokens/{id}":            {tok.ID, "/api/tokens"},
		"/api/webhooks/{id:[0-9]+}":   {hook.ID, "/api/webhooks"},
		"/api/thresholds/{id:[0-9]+}": {th.ID, "/api/thresholds"},
	}

	var routes []string
	if err := chi.Walk(newServer(Config{}, a.db).routes(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		// /static/* is mounted for every method (r.Handle): not the API.
		if method == http.MethodDelete && strings.HasPrefix(route, "/api/") {
			routes = append(routes, route)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(routes) < len(stored) {
		t.Fatalf("the walk found %d DELETE routes (%v), want at least %d", len(routes), routes, len(stored))
	}
	for _, route := range routes {
		t.Run(route, func(t *testing.T) {
			known, ok := stored[route]
			id := int64(999999)
			if ok {
				id = known.id
			}
			path := routeParam.ReplaceAllStringFunc(route, func(m string) string {
				if name := routeParam.FindStringSubmatch(m)[1]; name != "id" {
					t.Fatalf("the test cannot fill {%s} in %s: teach it", name, route)
				}
				return fmt.Sprint(id)
			})
			for _, c := range []struct {
				body, field string
			}{
				{`{"reason": "cleanup"}`, "reason"},
				{`{"id": 1}`, "id"},
				{`[1]`, ""},
				{`"please"`, ""},
				{`not json`, ""},
				{`{} {}`, ""},
			} {
				res := a.api("DELETE", path, "admin", c.body)
				res.wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, c.field)
				if c.field != "" {
					wantContains(t, res.body, fmt.Sprintf(`unknown field \"%s\"`, c.field))
				}
			}
			if ok {
				var list []struct {
					ID int64 `json:"id"`
				}
				a.api("GET", known.list, "admin", nil).wantStatus(t, http.StatusOK).decode(t, &list)
				kept := false
				for _, x := range list {
					kept = kept || x.ID == id
				}
				if !kept {
					t.Fatalf("%s: %d is gone after refused deletes", known.list, id)
				}
				a.api("DELETE", path, "admin", " {}\n").wantStatus(t, http.StatusNoContent)
				return
			}
			// No body, or {}: on to the handler, which finds nothing.
			for _, body := range []any{nil, "{}"} {
				if res := a.api("DELETE", path, "admin", body); res.status == http.StatusBadRequest {
					t.Fatalf("DELETE %s with body %v: %d %s", path, body, res.status, res.body)
				}
			}
		})
	}
}
