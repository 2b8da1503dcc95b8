package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Invalid UTF-8 in a JSON body is refused naming the field (400: JSON text
// is UTF-8, RFC 8259), as the forms refuse it, not stored as U+FFFD; a
// byte no field holds names the body. Nothing is stored.
func TestJSONBodyRefusesInvalidUTF8(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.round(1)
	a.measure(1, runner.Measurement{Problem: "nvfp4_group_gemm", Baseline: "baseline", AllowImports: true})
	p := a.pitch("alice", 1, "Three stages")
	var sus runner.Run
	a.api("POST", "/api/runs/import", "admin", importBody(p.ID, 30)).wantStatus(t, http.StatusCreated).decode(t, &sus)

	a.api("POST", "/api/tokens", "alice", "{\"label\":\"ok\xffok\"}").wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "label")
	a.api("POST", "/api/rounds", "admin", "{\"number\":2,\"title\":\"R\xc3\",\"criteria\":[{\"key\":\"s\",\"name\":\"S\",\"weight\":100}]}").
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "title")
	a.api("PUT", "/api/rounds/1", "admin", "{\"title\":\"R\",\"criteria\":[{\"key\":\"s\",\"name\":\"S\xff\",\"weight\":100}]}").
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "criteria[0].name")
	accept := fmt.Sprintf("/api/runs/%d/accept", sus.ID)
	a.api("POST", accept, "admin", "{\"reason\":\"profiled with nsys \xff the kernel skips zero blocks\"}").
		wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "reason")
	a.api("POST", "/api/tokens", "alice", "{\"lab\xffel\":\"x\"}").wantError(t, http.StatusBadRequest, pitches.EBADREQUEST, "body")
	a.api("POST", "/api/runs/import", "admin", "{\"device\":\"B\xff200\"}").wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "device")

	toks, err := a.db.Tokens(context.Background(), a.users["alice"].ID)
	if err != nil || len(toks) != 1 {
		t.Fatalf("refused tokens were stored: %d %v", len(toks), err)
	}
	if _, err := a.db.Round(context.Background(), 2); pitches.ErrorCode(err) != pitches.ENOTFOUND {
		t.Fatalf("a refused round was stored: %v", err)
	}
	if r, _ := a.db.Round(context.Background(), 1); r.Title != "Round title" {
		t.Fatalf("a refused edit stored title %q", r.Title)
	}
	if run, _ := a.db.Get(context.Background(), sus.ID); run.AcceptedBy != 0 {
		t.Fatalf("a refused acceptance changed the run: %+v", run)
	}
}
