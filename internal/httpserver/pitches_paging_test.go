package httpserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// GET /api/rounds/{n}/pitches pages in filing order with Link rel="next"
// while more pitches follow; walking the links lists each pitch once.
func TestAPIRoundPitchesPaging(t *testing.T) {
	a := newApp(t, Config{})
	a.round(1)
	var want []int64
	for i := range 5 {
		want = append(want, a.pitch("alice", 1, fmt.Sprintf("Pitch %d", i)).ID)
	}
	var got []int64
	path := "/api/rounds/1/pitches?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("the next links do not end")
		}
		res := a.api("GET", path, "vera", nil).wantStatus(t, http.StatusOK)
		var page []pitchJSON
		res.decode(t, &page)
		for _, p := range page {
			got = append(got, p.ID)
		}
		path = ""
		if l := res.header.Get("Link"); l != "" {
			m := nextLink.FindStringSubmatch(l)
			if m == nil || !strings.Contains(m[1], "limit=2") {
				t.Fatalf("Link header %q", l)
			}
			path = m[1]
		} else if len(got) < len(want) {
			t.Fatalf("no next link after %v of %v", got, want)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages listed %v, want %v in filing order", got, want)
	}
	if l := a.api("GET", "/api/rounds/1/pitches", "vera", nil).wantStatus(t, http.StatusOK).header.Get("Link"); l != "" {
		t.Fatalf("every pitch on one page, yet Link %q", l)
	}
	a.api("GET", "/api/rounds/1/pitches?limit=0", "vera", nil).wantStatus(t, http.StatusBadRequest)
	a.api("GET", "/api/rounds/1/pitches?after=x", "vera", nil).wantStatus(t, http.StatusBadRequest)
}
