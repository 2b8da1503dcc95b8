package httpserver

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// Password change through the account page: the current password is
// required (a refusal names the field), the new one works afterwards.
func TestAccountPasswordChange(t *testing.T) {
	a := newApp(t, Config{})
	b := a.browser().login("alice")
	wantContains(t, b.get("/account").wantStatus(t, http.StatusOK).body, `name="old_password"`, `name="new_password"`)
	r := b.post("/account/password", url.Values{"old_password": {"not it at all"}, "new_password": {"a brand new password"}})
	r.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, r.body, "current password is wrong")
	if r := b.post("/account/password", url.Values{"old_password": {testPassword}, "new_password": {"a brand new password"}}); r.status != http.StatusSeeOther {
		t.Fatalf("change: %d %s", r.status, r.body)
	}
	if r := a.browser().post("/login", url.Values{"login": {"alice"}, "password": {testPassword}}); r.status != http.StatusUnauthorized {
		t.Fatalf("old password still logs in: %d", r.status)
	}
	if r := a.browser().post("/login", url.Values{"login": {"alice"}, "password": {"a brand new password"}}); r.status != http.StatusSeeOther {
		t.Fatalf("new password does not log in: %d", r.status)
	}
}

// An admin deactivates a user: their open session ends, they cannot log
// in, their token is refused; reactivation restores the login.
func TestAdminDeactivatesUser(t *testing.T) {
	a := newApp(t, Config{})
	bob := a.browser().login("bob")
	bob.get("/rounds").wantStatus(t, http.StatusOK)
	admin := a.browser().login("admin")
	id := strconv.FormatInt(a.users["bob"].ID, 10)
	if r := admin.post("/admin/users/"+id+"/active", url.Values{"active": {"0"}}); r.status != http.StatusSeeOther {
		t.Fatalf("deactivate: %d %s", r.status, r.body)
	}
	wantContains(t, admin.get("/admin/users").body, "deactivated", "Reactivate")
	if r := bob.get("/rounds"); r.status != http.StatusSeeOther {
		t.Fatalf("deactivated user's session still works: %d", r.status)
	}
	if r := a.browser().post("/login", url.Values{"login": {"bob"}, "password": {testPassword}}); r.status != http.StatusUnauthorized {
		t.Fatalf("deactivated user logs in: %d", r.status)
	}
	a.api("GET", "/api/me", "bob", nil).wantStatus(t, http.StatusUnauthorized)
	// Refusals: a bad value names the field; a non-admin is forbidden.
	admin.post("/admin/users/"+id+"/active", url.Values{"active": {"maybe"}}).wantStatus(t, http.StatusUnprocessableEntity)
	alice := a.browser().login("alice")
	alice.post("/admin/users/"+id+"/active", url.Values{"active": {"1"}}).wantStatus(t, http.StatusForbidden)
	if r := admin.post("/admin/users/"+id+"/active", url.Values{"active": {"1"}}); r.status != http.StatusSeeOther {
		t.Fatalf("reactivate: %d", r.status)
	}
	a.browser().login("bob")
	a.api("GET", "/api/me", "bob", nil).wantStatus(t, http.StatusOK)
}
