package pitches

import (
	"testing"
	"time"
)

func TestCanSeeResults(t *testing.T) {
	admin := &User{ID: 1, Role: RoleAdmin}
	shark := &User{ID: 2, Role: RoleShark}
	owner := &User{ID: 3, Role: RoleContestant}
	other := &User{ID: 4, Role: RoleContestant}
	viewer := &User{ID: 5, Role: RoleViewer}
	filer := &User{ID: 6, Role: RoleShark} // a shark who filed the pitch
	p := &Pitch{ID: 10, RoundNumber: 1, ContestantID: owner.ID}
	sharkPitch := &Pitch{ID: 11, RoundNumber: 1, ContestantID: filer.ID}
	for _, st := range []RoundStatus{RoundPitching, RoundJudging} {
		r := &Round{Number: 1, Status: st}
		cases := []struct {
			name   string
			u      *User
			p      *Pitch
			scored bool
			want   bool
		}{
			{"anon", nil, p, false, false},
			{"admin", admin, p, false, true},
			{"shark not scored", shark, p, false, false},
			{"shark scored", shark, p, true, true},
			{"owner", owner, p, false, true},
			{"other contestant", other, p, false, false},
			{"viewer", viewer, p, false, false},
			{"shark who filed it", filer, sharkPitch, false, true},
			{"run of no pitch", shark, nil, false, true},
		}
		for _, c := range cases {
			if got := CanSeeResults(c.u, r, c.p, c.scored); got != c.want {
				t.Errorf("%s, round %s: CanSeeResults = %v, want %v", c.name, st, got, c.want)
			}
		}
	}
	closed := &Round{Number: 1, Status: RoundClosed}
	for _, u := range []*User{nil, shark, other, viewer} {
		if !CanSeeResults(u, closed, p, false) {
			t.Errorf("closed round: %+v may not see results", u)
		}
	}
}

func TestPredictionAtAndChangedAfterResult(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	v := func(n int, at time.Time, lo, hi float64) Scorecard {
		return Scorecard{Version: n, CreatedAt: at, Estimate: Range{Lo: lo, Hi: hi}}
	}
	versions := []Scorecard{
		v(3, t0.Add(3*time.Hour), 2.0, 2.5), // after the result
		v(1, t0, 1.1, 1.3),
		v(2, t0.Add(time.Hour), 1.2, 1.4), // the one current at the result
	}
	result := t0.Add(2 * time.Hour)

	got, ok := PredictionAt(versions, result)
	if !ok || got.Version != 2 || got.Estimate != (Range{Lo: 1.2, Hi: 1.4}) {
		t.Fatalf("PredictionAt = v%d %+v (%v), want v2 1.2-1.4", got.Version, got.Estimate, ok)
	}
	if got, ok := PredictionAt(versions, time.Time{}); !ok || got.Version != 3 {
		t.Fatalf("no result yet: PredictionAt = v%d (%v), want the latest, v3", got.Version, ok)
	}
	if _, ok := PredictionAt(versions, t0.Add(-time.Minute)); ok {
		t.Fatal("a shark who scored only after the result has a prediction")
	}
	// Stored at the very instant of the result: before it, not changed.
	if got, ok := PredictionAt(versions, t0.Add(time.Hour)); !ok || got.Version != 2 {
		t.Fatalf("at the instant: PredictionAt = v%d (%v), want v2", got.Version, ok)
	}

	for _, c := range []struct {
		v    Scorecard
		at   time.Time
		want bool
	}{
		{versions[0], result, true},
		{versions[1], result, false},
		{versions[2], result, false},
		{versions[0], time.Time{}, false},
		{versions[2], versions[2].CreatedAt, false},
	} {
		if got := ChangedAfterResult(c.v, c.at); got != c.want {
			t.Errorf("ChangedAfterResult(v%d at %v, result %v) = %v, want %v", c.v.Version, c.v.CreatedAt, c.at, got, c.want)
		}
	}
}
