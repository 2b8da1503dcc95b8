package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

func TestSearchRunsAndPitches(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	c := mustCast(t, db)
	clock := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	mustRound(t, db, c.admin, 1, round1Rubric)
	mustRound(t, db, c.admin, 2, round1Rubric)
	p1 := mustPitch(t, db, c.c[1], 1, "Pipeline stages for small M", 1.2, 1.5)
	p2 := mustPitch(t, db, c.c[2], 2, "Tile 100% wider_", 1.1, 1.3)
	if _, err := db.EditPitch(ctx, c.c[1], p1.ID, pitches.PitchInput{RoundNumber: 1, Title: p1.Title, Claim: p1.Claim, Variant: "baseline?stages=3"}); err != nil {
		t.Fatal(err)
	}
	r1 := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline?stages=3", Device: "0", PitchID: p1.ID, RequestedBy: c.c[1].ID})
	r2 := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "tests", Variant: "baseline?stages=2", Device: "1", PitchID: p2.ID, RequestedBy: c.oracle.ID})
	r3 := mustEnqueue(t, db, runner.Request{Problem: "nvfp4_dual_gemm", Suite: "tests", Variant: "reference", Baseline: "reference", Device: "cpu", RequestedBy: c.admin.ID})

	ids := func(rs []runner.Run) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for name, c := range map[string]struct {
		q    runner.Query
		want []int64
	}{
		"variant prefix":      {runner.Query{VariantPrefix: "baseline?stages"}, []int64{r1.ID, r2.ID}},
		"prefix is not infix": {runner.Query{VariantPrefix: "stages"}, nil},
		"text in variant":     {runner.Query{Text: "STAGES=2"}, []int64{r2.ID}},
		"text in pitch title": {runner.Query{Text: "small m"}, []int64{r1.ID}},
		"text is literal":     {runner.Query{Text: "100%"}, []int64{r2.ID}},
		"underscore literal":  {runner.Query{Text: "wider_"}, []int64{r2.ID}},
		"person":              {runner.Query{Person: "ORACLE"}, []int64{r2.ID}},
		"round":               {runner.Query{Round: 1}, []int64{r1.ID}},
		"date range":          {runner.Query{From: r2.CreatedAt, To: r3.CreatedAt}, []int64{r2.ID}},
		"exact filter too":    {runner.Query{Filter: runner.Filter{Suite: "tests"}, Sort: "device", Desc: true}, []int64{r3.ID, r2.ID}},
		"sort variant asc":    {runner.Query{Sort: "variant"}, []int64{r2.ID, r1.ID, r3.ID}},
		"offset pages":        {runner.Query{Filter: runner.Filter{Limit: 1}, Offset: 1}, []int64{r2.ID}},
		"unknown sort: by id": {runner.Query{Sort: "nonsense"}, []int64{r1.ID, r2.ID, r3.ID}},
	} {
		got, total, err := db.SearchRuns(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !equalIDs(ids(got), c.want) {
			t.Errorf("%s: runs %v, want %v", name, ids(got), c.want)
		}
		if name == "offset pages" && total != 3 {
			t.Errorf("total %d, want 3", total)
		}
	}

	pids := func(ps []pitches.Pitch) []int64 {
		var out []int64
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if _, err := db.WithdrawPitch(ctx, c.c[2], p2.ID); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		q    pitches.PitchQuery
		want []int64
	}{
		"text":           {pitches.PitchQuery{Text: "PIPELINE"}, []int64{p1.ID}},
		"status":         {pitches.PitchQuery{Status: pitches.PitchWithdrawn}, []int64{p2.ID}},
		"variant prefix": {pitches.PitchQuery{VariantPrefix: "baseline?st"}, []int64{p1.ID}},
		"person":         {pitches.PitchQuery{Person: "contestant2"}, []int64{p2.ID}},
		"round":          {pitches.PitchQuery{Round: 2}, []int64{p2.ID}},
		"sort title":     {pitches.PitchQuery{Sort: "title", Desc: true}, []int64{p2.ID, p1.ID}},
		"filed from":     {pitches.PitchQuery{From: p2.CreatedAt}, []int64{p2.ID}},
	} {
		got, _, err := db.SearchPitches(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !equalIDs(pids(got), c.want) {
			t.Errorf("pitches %s: %v, want %v", name, pids(got), c.want)
		}
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
