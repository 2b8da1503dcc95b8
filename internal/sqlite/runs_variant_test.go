package sqlite

import (
	"context"
	"slices"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// A lookup by variant (the runs list, the history, a search) finds the
// runs of that spec with their knobs in any order (pitches.SameVariant):
// rows stored before runs were stored in the catalogue's spelling keep
// the order they were typed in. Nothing else matches: not a spec with a
// knob more or less, not another value, not another name that shares a
// prefix or matches as a LIKE pattern would. With VariantAsTyped (the
// spelling a lookup was given, next to the catalogue's), rows of either.
func TestListVariantIgnoresKnobOrder(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	ids := map[string]int64{}
	for _, v := range []string{
		"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3", "baseline?tile_m=64", "baseline?stages=3",
		"baseline?stages=3&tile_m=64&tile_k=128", "baseline?stages=3&tile_m=128", "baseline?stages=33&tile_m=6",
		"xbaseline?tile_m=64&stages=3", "pipe_line?b=2&a=1", "pipexline?a=1&b=2", "bäseline?b=2&a=1", "bäseline?a=1&b=2",
	} {
		ids[v] = mustEnqueue(t, db, runner.Request{Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: v, Device: "0"}).ID
	}
	for _, c := range []struct {
		variant, asTyped string
		want             []string
	}{
		{"baseline?tile_m=64&stages=3", "", []string{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3"}},
		{"baseline?stages=3&tile_m=64", "", []string{"baseline?stages=3&tile_m=64", "baseline?tile_m=64&stages=3"}},
		{"baseline?stages=3", "", []string{"baseline?stages=3"}},
		{"pipe_line?a=1&b=2", "", []string{"pipe_line?b=2&a=1"}},
		{"bäseline?a=1&b=2", "", []string{"bäseline?b=2&a=1", "bäseline?a=1&b=2"}},
		{"baseline?tile_m=64", "baseline?tile_m=64&stages=3&tile_k=128", []string{"baseline?tile_m=64", "baseline?stages=3&tile_m=64&tile_k=128"}},
	} {
		var want []int64
		for _, v := range c.want {
			want = append(want, ids[v])
		}
		slices.Sort(want)
		got := func(runs []runner.Run) []int64 {
			var out []int64
			for _, r := range runs {
				out = append(out, r.ID)
			}
			slices.Sort(out)
			return out
		}
		f := runner.Filter{Problem: "nvfp4_group_gemm", Variant: c.variant, VariantAsTyped: c.asTyped}
		runs, err := db.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if g := got(runs); !slices.Equal(g, want) {
			t.Errorf("list variant=%q: runs %v, want %v (%q)", c.variant, g, want, c.want)
		}
		found, total, err := db.SearchRuns(ctx, runner.Query{Filter: f, Sort: "id"})
		if err != nil {
			t.Fatal(err)
		}
		if g := got(found); !slices.Equal(g, want) || total != len(want) {
			t.Errorf("search variant=%q: runs %v (total %d), want %v", c.variant, g, total, want)
		}
	}
}
