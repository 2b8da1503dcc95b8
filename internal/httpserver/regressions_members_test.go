package httpserver

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// alertsFixture is a round open for pitching with a variant threshold and
// two alerts: one on a run of no pitch (every member sees it), one on a
// run of alice's pitch (hidden from everyone but alice and the admins).
type alertsFixture struct {
	a              *app
	th             tracking.Threshold
	open, hidden   tracking.Alert // as the admin sees them
	openRun, hiRun runner.Run
}

func newAlertsFixture(t *testing.T) *alertsFixture {
	t.Helper()
	a, _ := newTrackedApp(t)
	measuredRound(t, a, 1)
	imp := func(pitch int64, us float64) runner.Run {
		t.Helper()
		body := map[string]any{"device": "B200", "problem": "nvfp4_group_gemm", "variant": "baseline", "baseline": "baseline",
			"shapes": []map[string]any{{"label": "g=8 N=4096 K=7168", "baseline_us": 400, "variant_us": us,
				"baseline_samples_us": []float64{396, 400, 404, 398, 402}, "variant_samples_us": []float64{us * 0.99, us, us * 1.01, us * 0.995, us * 1.005}}}}
		if pitch > 0 {
			body["pitch_id"] = pitch
		}
		var run runner.Run
		a.api("POST", "/api/runs/import", "admin", body).wantStatus(t, http.StatusCreated).decode(t, &run)
		return run
	}
	f := &alertsFixture{a: a}
	base := imp(0, 300)
	a.api("POST", "/api/thresholds", "admin", map[string]any{"problem": "nvfp4_group_gemm", "variant": "baseline", "baseline_run": base.ID, "percent": 5}).
		wantStatus(t, http.StatusCreated).decode(t, &f.th)
	f.openRun = imp(0, 360) // 17% slower
	// Filed after the runs of no pitch: an open pitch's variant is run on it.
	p := a.pitch("alice", 1, "Secret")
	f.hiRun = imp(p.ID, 377.77) // 21% slower, alice's pitch: hidden from the others
	for _, c := range []struct {
		run *runner.Run
		dst *tracking.Alert
	}{{&f.openRun, &f.open}, {&f.hiRun, &f.hidden}} {
		var out struct {
			Regressions []tracking.Alert `json:"regressions"`
		}
		a.api("GET", fmt.Sprintf("/api/runs/%d/regressions", c.run.ID), "admin", nil).wantStatus(t, http.StatusOK).decode(t, &out)
		if len(out.Regressions) != 1 {
			t.Fatalf("run %d raised %d alerts, want 1", c.run.ID, len(out.Regressions))
		}
		*c.dst = out.Regressions[0]
	}
	return f
}

// alertIDs lists GET /api/regressions (with query) as login sees it.
func (f *alertsFixture) alertIDs(t *testing.T, login, query string) []int64 {
	t.Helper()
	var out struct {
		Regressions []tracking.Alert `json:"regressions"`
	}
	f.a.api("GET", "/api/regressions"+query, login, nil).wantStatus(t, http.StatusOK).decode(t, &out)
	var ids []int64
	for _, a := range out.Regressions {
		ids = append(ids, a.ID)
	}
	return ids
}

// Every member reads the thresholds (API and the /regressions page, linked
// from the nav and the runs page); only admins create or delete them. The
// members' page lists the alerts a member may see: an alert on a run whose
// result is hidden from the viewer (blind judging) is not on it, nor any
// of its figures, exactly as GET /api/regressions leaves it out.
func TestMembersSeeThresholdsAndAlerts(t *testing.T) {
	f := newAlertsFixture(t)
	a := f.a
	hiddenFigures := []string{html.EscapeString(f.hidden.Summary), fmt.Sprintf("run #%d", f.hiRun.ID), fmt.Sprintf(`data-alert="%d"`, f.hidden.ID), "377.77", "0.794"}
	for _, login := range []string{"vera", "oracle", "bob", "alice", "admin"} {
		t.Run(login, func(t *testing.T) {
			var ths []tracking.Threshold
			a.api("GET", "/api/thresholds", login, nil).wantStatus(t, http.StatusOK).decode(t, &ths)
			if len(ths) != 1 || ths[0].ID != f.th.ID {
				t.Fatalf("thresholds: %+v", ths)
			}
			page := a.browser().login(login).get("/regressions").wantStatus(t, http.StatusOK).body
			wantContains(t, page, "data-thresholds", "variant baseline of nvfp4_group_gemm", html.EscapeString(f.open.Summary),
				fmt.Sprintf(`data-alert="%d"`, f.open.ID), `href="/regressions"`)
			sees := login == "alice" || login == "admin" // the pitch's contestant, and the admins
			if sees {
				wantContains(t, page, html.EscapeString(f.hidden.Summary))
			} else {
				wantNotContains(t, page, hiddenFigures...)
				if ids := f.alertIDs(t, login, ""); fmt.Sprint(ids) != fmt.Sprint([]int64{f.open.ID}) {
					t.Errorf("GET /api/regressions: %v, want only %d", ids, f.open.ID)
				}
			}
			if login == "admin" {
				wantContains(t, page, "data-dismiss-form", `href="/admin/regressions"`)
				return
			}
			wantNotContains(t, page, "data-dismiss-form", "data-undismiss-form", `href="/admin/regressions"`)
			a.api("POST", "/api/thresholds", login, map[string]any{"round": 1, "baseline_run": f.th.BaselineRun, "percent": 10}).
				wantError(t, http.StatusForbidden, "forbidden", "")
			a.api("DELETE", fmt.Sprintf("/api/thresholds/%d", f.th.ID), login, nil).wantError(t, http.StatusForbidden, "forbidden", "")
			a.browser().login(login).get("/admin/regressions").wantStatus(t, http.StatusForbidden)
		})
	}
	runs := a.browser().login("vera").get("/runs").wantStatus(t, http.StatusOK).body
	wantContains(t, runs, `href="/regressions"`)
	admin := a.browser().login("admin").get("/admin/regressions").wantStatus(t, http.StatusOK).body
	wantContains(t, admin, `href="/regressions"`, "data-threshold-form")
	a.browser().get("/regressions").wantStatus(t, http.StatusSeeOther) // anonymous: to the login page
	a.browser().login("vera").get("/regressions?state=open").wantStatus(t, http.StatusBadRequest)
}

// An admin dismisses an alert with a one-line reason and restores it;
// others may not (403), an unknown alert is 404, a bad reason 422 naming
// reason, a second dismissal or restoring an active alert 409. The
// dismissed alert stays listed with who, when and why (API, members' page,
// run page), is left out of ?state=active and is all of ?state=dismissed;
// both changes are in the audit log.
func TestDismissAlertAPI(t *testing.T) {
	f := newAlertsFixture(t)
	a := f.a
	dismiss := fmt.Sprintf("/api/regressions/%d/dismiss", f.open.ID)
	undismiss := fmt.Sprintf("/api/regressions/%d/undismiss", f.open.ID)
	for name, body := range map[string]any{
		"no reason": map[string]any{}, "empty": map[string]any{"reason": ""}, "spaces": map[string]any{"reason": "   "},
		"a newline": map[string]any{"reason": "hot\ncard"}, "a trailing newline": map[string]any{"reason": "hot card\n"},
		"ESC": map[string]any{"reason": "hot \u001b[2J card"}, "too long": map[string]any{"reason": strings.Repeat("a", tracking.MaxDismissReason+1)},
	} {
		t.Run(name, func(t *testing.T) {
			a.api("POST", dismiss, "admin", body).wantError(t, http.StatusUnprocessableEntity, pitches.EINVALID, "reason")
		})
	}
	a.api("POST", dismiss, "admin", map[string]any{"reason": 5}).wantError(t, http.StatusBadRequest, "bad_request", "reason")
	for _, login := range []string{"vera", "oracle", "alice"} {
		a.api("POST", dismiss, login, map[string]any{"reason": "not mine to judge"}).wantError(t, http.StatusForbidden, "forbidden", "")
	}
	a.api("POST", "/api/regressions/99999/dismiss", "admin", map[string]any{"reason": "x"}).wantError(t, http.StatusNotFound, "not_found", "")
	if ids := f.alertIDs(t, "admin", "?state=dismissed"); len(ids) != 0 {
		t.Fatalf("refused dismissals dismissed %v", ids)
	}

	var got tracking.Alert
	res := a.api("POST", dismiss, "admin", map[string]any{"reason": "  the card was hot: rerun on a cool one  "}).wantStatus(t, http.StatusOK)
	res.decode(t, &got)
	wantState(t, res, "dismissed")
	if d := got.Dismissed; d == nil || d.Reason != "the card was hot: rerun on a cool one" || d.ByLogin != "admin" || d.By != a.users["admin"].ID || d.At.IsZero() {
		t.Fatalf("dismissed alert: %+v", got.Dismissed)
	}
	a.api("POST", dismiss, "admin", map[string]any{"reason": "again"}).wantError(t, http.StatusConflict, "conflict", "")

	for query, want := range map[string][]int64{
		"": {f.hidden.ID, f.open.ID}, "?state=all": {f.hidden.ID, f.open.ID},
		"?state=active": {f.hidden.ID}, "?state=dismissed": {f.open.ID},
	} {
		if ids := f.alertIDs(t, "admin", query); fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("GET /api/regressions%s: %v, want %v", query, ids, want)
		}
	}
	a.api("GET", "/api/regressions?state=silenced", "admin", nil).wantError(t, http.StatusBadRequest, "bad_request", "state")
	// A member sees the dismissal too, and no hidden alert in either state.
	if ids := f.alertIDs(t, "vera", "?state=active"); len(ids) != 0 {
		t.Errorf("vera's active alerts: %v, want none", ids)
	}
	vera := a.api("GET", "/api/regressions?state=dismissed", "vera", nil).wantStatus(t, http.StatusOK).body
	wantContains(t, vera, "the card was hot", `"by_login": "admin"`)
	run := a.browser().login("vera").get(fmt.Sprintf("/runs/%d", f.openRun.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, run, `data-alert-state="dismissed"`, "Dismissed by admin on ", "the card was hot")

	a.api("POST", undismiss, "vera", nil).wantError(t, http.StatusForbidden, "forbidden", "")
	a.api("POST", undismiss, "admin", `{"reason": "x"}`).wantError(t, http.StatusBadRequest, "bad_request", "reason")
	a.api("POST", "/api/regressions/99999/undismiss", "admin", nil).wantError(t, http.StatusNotFound, "not_found", "")
	res = a.api("POST", undismiss, "admin", nil).wantStatus(t, http.StatusOK)
	wantState(t, res, "active")
	wantNotContains(t, res.body, `"dismissed"`)
	a.api("POST", undismiss, "admin", nil).wantError(t, http.StatusConflict, "conflict", "")
	if ids := f.alertIDs(t, "admin", "?state=active"); fmt.Sprint(ids) != fmt.Sprint([]int64{f.hidden.ID, f.open.ID}) {
		t.Errorf("active after the restore: %v", ids)
	}

	audit := a.api("GET", "/api/audit?action=alert.", "admin", nil).wantStatus(t, http.StatusOK).body
	wantContains(t, audit, "alert.dismiss", "alert.undismiss", fmt.Sprintf("alert %d", f.open.ID), "the card was hot")
	if n := strings.Count(audit, `"action": "alert.`); n != 2 {
		t.Errorf("%d alert entries in the audit log, want 2 (refusals write none): %s", n, audit)
	}
}

// The members' page's forms: an admin dismisses with a reason and
// restores; a refused reason comes back on the page at the alert's form
// (422, the reason kept); others get 403 and change nothing; the state
// tabs filter.
func TestDismissAlertPage(t *testing.T) {
	f := newAlertsFixture(t)
	a := f.a
	admin := a.browser().login("admin")
	path := fmt.Sprintf("/regressions/%d/dismiss", f.open.ID)
	bad := admin.post(path, url.Values{"reason": {"hot\u001bcard"}})
	if bad.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad reason: status %d", bad.status)
	}
	wantContains(t, bad.body, "form-error", "control characters", `value="hot`)
	if empty := admin.post(path, url.Values{"reason": {""}}); empty.status != http.StatusUnprocessableEntity || !strings.Contains(empty.body, "written reason") {
		t.Fatalf("no reason: status %d", empty.status)
	}
	a.browser().login("vera").post(path, url.Values{"reason": {"mine now"}}).wantStatus(t, http.StatusForbidden)
	admin.post("/regressions/99999/dismiss", url.Values{"reason": {"x"}}).wantStatus(t, http.StatusNotFound)

	ok := admin.post(path, url.Values{"reason": {"known slowdown of the new driver"}}).wantStatus(t, http.StatusSeeOther)
	if loc := ok.header.Get("Location"); loc != "/regressions?note=dismissed" {
		t.Fatalf("after a dismissal: Location %q", loc)
	}
	page := admin.get("/regressions?note=dismissed").wantStatus(t, http.StatusOK).body
	wantContains(t, page, "Alert dismissed.", "Dismissed by admin on ", "known slowdown of the new driver",
		fmt.Sprintf(`/regressions/%d/undismiss`, f.open.ID), fmt.Sprintf(`/regressions/%d/dismiss`, f.hidden.ID))
	active := a.browser().login("vera").get("/regressions?state=active").wantStatus(t, http.StatusOK).body
	wantNotContains(t, active, fmt.Sprintf(`data-alert="%d"`, f.open.ID))
	dismissed := a.browser().login("vera").get("/regressions?state=dismissed").wantStatus(t, http.StatusOK).body
	wantContains(t, dismissed, fmt.Sprintf(`data-alert="%d"`, f.open.ID), "known slowdown of the new driver", `aria-current="page">Dismissed`)
	wantNotContains(t, dismissed, "data-undismiss-form")

	a.browser().login("vera").post(fmt.Sprintf("/regressions/%d/undismiss", f.open.ID), nil).wantStatus(t, http.StatusForbidden)
	admin.post(fmt.Sprintf("/regressions/%d/undismiss", f.open.ID), nil).wantStatus(t, http.StatusSeeOther)
	again := admin.post(fmt.Sprintf("/regressions/%d/undismiss", f.open.ID), nil)
	if again.status != http.StatusConflict || !strings.Contains(again.body, "is not dismissed") {
		t.Fatalf("restoring an active alert: status %d", again.status)
	}
	if ids := f.alertIDs(t, "admin", "?state=dismissed"); len(ids) != 0 {
		t.Errorf("dismissed after the page's restore: %v", ids)
	}
}

// wantState checks the "state" an alert's JSON answer carries.
func wantState(t *testing.T, r resp, want string) {
	t.Helper()
	var out struct {
		State string `json:"state"`
	}
	r.decode(t, &out)
	if out.State != want {
		t.Fatalf("alert state %q, want %q: %s", out.State, want, r.body)
	}
}
