package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// State changes made through the API and the pages land in the audit log
// with who, what and the state before and after; only admins read it, paged.
func TestAuditLogRecordsChanges(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	a.api("POST", "/api/rounds", "admin", map[string]any{"number": 1, "title": "R1", "criteria": []map[string]any{
		{"key": "speedup", "name": "Speedup", "weight": 60}, {"key": "risk", "name": "Risk", "weight": 40}}}).wantStatus(t, http.StatusCreated)
	a.api("PUT", "/api/rounds/1/measurement", "admin", map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks",
		"baseline": "baseline", "device_class": "", "allow_imports": true}).wantStatus(t, http.StatusOK)
	var p struct{ ID int64 }
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": "Stages", "body": "b", "claim": map[string]float64{"lo": 1.1, "hi": 1.3},
		"variant": "baseline"}).wantStatus(t, http.StatusCreated).decode(t, &p)
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", p.ID), "alice", map[string]any{"round": 1, "title": "Stages", "body": "b",
		"claim": map[string]float64{"lo": 1.2, "hi": 1.4}, "variant": "baseline?stages=3"}).wantStatus(t, http.StatusOK)
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "judging"}).wantStatus(t, http.StatusOK)
	res := a.browser().login("admin").post(fmt.Sprintf("/admin/users/%d/role", a.users["vera"].ID), map[string][]string{"role": {"shark"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("role change: %d %s", res.status, res.body)
	}
	imp := a.api("POST", "/api/runs/import", "admin", map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline",
		"baseline": "baseline", "pitch_id": p.ID, "shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400, "variant_us": 30}}})
	imp.wantStatus(t, http.StatusCreated)
	var run runner.Run
	imp.decode(t, &run)
	if run.Status == runner.StatusSuspect {
		a.api("POST", fmt.Sprintf("/api/runs/%d/accept", run.ID), "admin", map[string]string{"reason": "profiled: real"}).wantStatus(t, http.StatusOK)
	}
	// A refused change writes nothing.
	a.api("POST", "/api/rounds/1/status", "admin", map[string]string{"status": "pitching"}).wantStatus(t, http.StatusConflict)

	var page auditPage
	a.api("GET", "/api/audit?limit=500", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &page)
	byAction := map[string]pitches.AuditEntry{}
	for _, e := range page.Entries {
		e.Before, e.After = compactJSON(t, e.Before), compactJSON(t, e.After)
		if _, seen := byAction[e.Action]; !seen {
			byAction[e.Action] = e
		}
	}
	for _, want := range []string{"round.create", "round.measurement", "pitch.file", "pitch.edit", "round.status", "user.role", "run.import"} {
		if _, ok := byAction[want]; !ok {
			t.Errorf("no %s entry; have %v", want, keysOf(byAction))
		}
	}
	if run.Status == runner.StatusSuspect {
		if e := byAction["run.accept"]; !strings.Contains(string(e.After), "profiled: real") || !strings.Contains(string(e.Before), `"status":"suspect"`) {
			t.Errorf("run.accept entry: %+v", e)
		}
	} else {
		t.Errorf("an import at 13x is suspect, got %s", run.Status)
	}
	st := byAction["round.status"]
	if st.Actor != "admin" || st.Target != "round 1" || string(st.Before) != `{"status":"pitching"}` || string(st.After) != `{"status":"judging"}` {
		t.Errorf("round.status entry: %+v", st)
	}
	if n := keysCount(page.Entries, "round.status"); n != 1 {
		t.Errorf("the refused status change was recorded: %d entries", n)
	}
	edit := byAction["pitch.edit"]
	var before, after struct {
		Round   int           `json:"round"`
		Claim   pitches.Range `json:"claim"`
		Variant string        `json:"variant"`
	}
	if err := json.Unmarshal(edit.Before, &before); err != nil || json.Unmarshal(edit.After, &after) != nil {
		t.Fatalf("pitch.edit documents: %s / %s", edit.Before, edit.After)
	}
	if edit.Actor != "alice" || before.Claim.Lo != 1.1 || after.Claim.Lo != 1.2 || before.Variant != "baseline" || after.Variant != "baseline?stages=3" ||
		after.Round != 1 {
		t.Errorf("pitch.edit: %s %+v -> %+v", edit.Actor, before, after)
	}
	role := byAction["user.role"]
	if !strings.Contains(string(role.Before), `"role":"viewer"`) || !strings.Contains(string(role.After), `"role":"shark"`) || role.Actor != "admin" {
		t.Errorf("user.role entry: %+v", role)
	}

	// Filters and paging.
	var rounds auditPage
	a.api("GET", "/api/audit?action=round.", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &rounds)
	for _, e := range rounds.Entries {
		if !strings.HasPrefix(e.Action, "round.") {
			t.Errorf("action=round. gave %s", e.Action)
		}
	}
	var alices auditPage
	a.api("GET", "/api/audit?actor=alice", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &alices)
	if len(alices.Entries) != 2 {
		t.Errorf("alice's entries: %+v", alices.Entries)
	}
	var p1, p2 auditPage
	a.api("GET", "/api/audit?limit=2", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &p1)
	if len(p1.Entries) != 2 || p1.NextBefore == 0 {
		t.Fatalf("first page: %+v", p1)
	}
	a.api("GET", fmt.Sprintf("/api/audit?limit=2&before=%d", p1.NextBefore), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &p2)
	if len(p2.Entries) != 2 || p2.Entries[0].ID >= p1.Entries[1].ID {
		t.Errorf("second page: %+v after %+v", p2, p1)
	}

	// Only admins; bad parameters name themselves.
	a.api("GET", "/api/audit", "oracle", nil).wantError(t, http.StatusForbidden, "forbidden", "")
	a.api("GET", "/api/audit?limit=0", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "limit")
	a.api("GET", "/api/audit?before=x", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "before")
	body := a.browser().login("admin").get("/admin/audit?action=pitch.").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "pitch.edit", "pitch.file", "baseline?stages=3")
	wantNotContains(t, body, `data-audit-entry="round.status"`)
	a.browser().login("alice").get("/admin/audit").wantStatus(t, http.StatusForbidden)
}

// compactJSON undoes the API's indentation of a stored document.
func compactJSON(t *testing.T, b json.RawMessage) json.RawMessage {
	t.Helper()
	if len(b) == 0 {
		return b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.Bytes()
}

func keysOf(m map[string]pitches.AuditEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keysCount(es []pitches.AuditEntry, action string) int {
	n := 0
	for _, e := range es {
		if e.Action == action {
			n++
		}
	}
	return n
}

// Kernel uploads, baseline changes, withdrawals and token changes are in
// the log too, never with a token's secret.
func TestAuditLogKernelsBaselinesTokens(t *testing.T) {
	a, p := kernelApp(t, Config{})
	files := exampleFiles(t)
	h := hashOf(t, files)
	a.api("POST", fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", jsonUpload(files, map[string]string{"note": "first"})).
		wantStatus(t, http.StatusCreated)
	a.api("PUT", "/api/rounds/1/measurement", "admin", map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks", "baseline": "baseline",
		"device_class": "", "allow_imports": false}).
		wantStatus(t, http.StatusOK)
	a.api("PUT", "/api/rounds/1/baseline", "admin", map[string]string{"baseline": "baseline?stages=3"}).wantStatus(t, http.StatusOK)
	a.api("POST", fmt.Sprintf("/api/pitches/%d/withdraw", p.ID), "alice", nil).wantStatus(t, http.StatusOK)
	tok := a.api("POST", "/api/tokens", "bob", map[string]string{"label": "ci"}).wantStatus(t, http.StatusCreated)
	var created struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	tok.decode(t, &created)
	a.api("DELETE", fmt.Sprintf("/api/tokens/%d", created.ID), "bob", nil).wantStatus(t, http.StatusNoContent)

	var page auditPage
	a.api("GET", "/api/audit?limit=500", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &page)
	by := map[string]pitches.AuditEntry{}
	for _, e := range page.Entries {
		e.Before, e.After = compactJSON(t, e.Before), compactJSON(t, e.After)
		by[e.Action] = e
	}
	up := by["kernel.upload"]
	if up.Actor != "alice" || up.Target != fmt.Sprintf("pitch %d", p.ID) || string(up.Before) != `{"variant":"baseline"}` ||
		!strings.Contains(string(up.After), `"variant":"kernel:`+h) || !strings.Contains(string(up.After), `"version":1`) {
		t.Errorf("kernel.upload: %+v", up)
	}
	bl := by["round.baseline"]
	if !strings.Contains(string(bl.Before), `"baseline":"baseline"`) || !strings.Contains(string(bl.After), `"baseline":"baseline?stages=3"`) {
		t.Errorf("round.baseline: %s -> %s", bl.Before, bl.After)
	}
	if w := by["pitch.withdraw"]; string(w.Before) != `{"status":"active"}` || string(w.After) != `{"status":"withdrawn"}` {
		t.Errorf("pitch.withdraw: %+v", w)
	}
	if by["token.create"].Actor != "bob" || by["token.revoke"].Actor != "bob" {
		t.Errorf("token entries: %+v %+v", by["token.create"], by["token.revoke"])
	}
	all := a.api("GET", "/api/audit?limit=500", "admin", nil).body
	wantNotContains(t, all, created.Token)
}

// Every audit document is snake_case, as the API is: the rounds, pitches,
// scorecards and votes the log keeps name their fields as docs/api.md
// does ("number", "claim", "weighted_total", "pitch"), never Go's
// ("Number", "RoundNumber", "Scores").
func TestAuditDocumentsAreSnakeCase(t *testing.T) {
	a := newApp(t, Config{})
	a.api("POST", "/api/rounds", "admin", map[string]any{"number": 1, "title": "R1", "criteria": []map[string]any{
		{"key": "speedup", "name": "Speedup", "weight": 60}, {"key": "risk", "name": "Risk", "weight": 40}}}).wantStatus(t, http.StatusCreated)
	a.api("PUT", "/api/rounds/1", "admin", map[string]any{"title": "R1, revised", "measurement": map[string]any{"problem": "nvfp4_group_gemm"},
		"criteria": []map[string]any{{"key": "speedup", "name": "Speedup", "weight": 50}, {"key": "risk", "name": "Risk", "weight": 50}}}).
		wantStatus(t, http.StatusOK)
	a.api("PUT", "/api/rounds/1/measurement", "admin", map[string]any{"problem": "nvfp4_group_gemm", "suite": "benchmarks",
		"baseline": "baseline", "device_class": "", "allow_imports": true}).wantStatus(t, http.StatusOK)
	var p pitchJSON
	a.api("POST", "/api/pitches", "alice", map[string]any{"round": 1, "title": "Stages", "body": "b", "claim": map[string]float64{"lo": 1.1, "hi": 1.3},
		"variant": "baseline"}).wantStatus(t, http.StatusCreated).decode(t, &p)
	a.api("PUT", fmt.Sprintf("/api/pitches/%d", p.ID), "alice", map[string]any{"round": 1, "title": "Stages", "body": "b",
		"claim": map[string]float64{"lo": 1.2, "hi": 1.4}, "variant": "baseline?stages=3"}).wantStatus(t, http.StatusOK)
	a.status(1, pitches.RoundJudging)
	card := map[string]any{"scores": map[string]float64{"speedup": 7, "risk": 8}, "estimate": map[string]float64{"lo": 1.1, "hi": 1.2}, "verdict": "FUND"}
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "oracle", card).wantStatus(t, http.StatusOK)
	a.api("PUT", fmt.Sprintf("/api/pitches/%d/scorecard", p.ID), "oracle", card).wantStatus(t, http.StatusOK)
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": p.ID, "justification": "evidence", "terms": map[string]any{"min_geomean": 1.1}}).
		wantStatus(t, http.StatusOK)
	a.api("PUT", "/api/rounds/1/vote", "oracle", map[string]any{"pitch": p.ID, "justification": "still"}).wantStatus(t, http.StatusOK)

	var page auditPage
	a.api("GET", "/api/audit?limit=500", "admin", nil).wantStatus(t, http.StatusOK).decode(t, &page)
	by := map[string]pitches.AuditEntry{}
	for _, e := range page.Entries {
		for _, doc := range []json.RawMessage{e.Before, e.After} {
			if key := goKey(t, doc); key != "" {
				t.Errorf("%s: key %q is not snake_case: %s", e.Action, key, doc)
			}
		}
		if _, seen := by[e.Action]; !seen {
			by[e.Action] = compactEntry(t, e) // the newest of each action
		}
	}
	for action, want := range map[string][]string{
		"round.create":      {`"number":1`, `"title":"R1"`, `"criteria":[{`, `"key":"speedup"`, `"weight":60`, `"status":"pitching"`},
		"round.rubric":      {`"title":"R1, revised"`, `"weight":50`, `"measurement":{`, `"problem":"nvfp4_group_gemm"`},
		"round.measurement": {`"allow_imports":true`, `"device_class":""`},
		"pitch.file":        {`"round":1`, `"claim":{"lo":1.1,"hi":1.3}`, `"variant":"baseline"`, `"contestant_id":`},
		"pitch.edit":        {`"claim":{"lo":1.2,"hi":1.4}`, `"variant":"baseline?stages=3"`},
		"scorecard.submit":  {fmt.Sprintf(`"pitch":%d`, p.ID), `"scores":{"risk":8,"speedup":7}`, `"weighted_total":7.5`, `"version":2`},
		"vote.cast":         {fmt.Sprintf(`"pitch":%d`, p.ID), `"justification":"still"`, `"version":2`},
	} {
		e, ok := by[action]
		if !ok {
			t.Errorf("no %s entry", action)
			continue
		}
		wantContains(t, string(e.After), want...)
	}
	if v := by["vote.cast"]; !strings.Contains(string(v.Before), `"terms":{"min_geomean":1.1}`) || !strings.Contains(string(v.Before), `"justification":"evidence"`) {
		t.Errorf("vote.cast before: %s", v.Before)
	}
	if c := by["scorecard.submit"]; !strings.Contains(string(c.Before), `"version":1`) {
		t.Errorf("scorecard.submit before: %s", c.Before)
	}
	// The admin page shows the documents as they are stored.
	body := a.browser().login("admin").get("/admin/audit?action=vote.").wantStatus(t, http.StatusOK).body
	wantContains(t, body, "justification")
	wantNotContains(t, body, "Justification")
}

// goKey returns the first object key in doc that is not snake_case (a
// criterion key is snake_case too), or "".
func goKey(t *testing.T, doc json.RawMessage) string {
	t.Helper()
	if len(doc) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("audit document %s: %v", doc, err)
	}
	return firstGoKey(v)
}

var snakeKey = regexp.MustCompile(`^[a-z0-9_]+$`)

func firstGoKey(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snakeKey.MatchString(k) {
				return k
			}
			if k := firstGoKey(x); k != "" {
				return k
			}
		}
	case []any:
		for _, x := range v {
			if k := firstGoKey(x); k != "" {
				return k
			}
		}
	}
	return ""
}

func compactEntry(t *testing.T, e pitches.AuditEntry) pitches.AuditEntry {
	e.Before, e.After = compactJSON(t, e.Before), compactJSON(t, e.After)
	return e
}
