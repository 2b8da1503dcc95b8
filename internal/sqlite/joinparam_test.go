package sqlite

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkJoinParam: a query that joins tables, run through the statement
// cache with a changing id, with the id bound as a bare ? and through
// joinParam (rows.go says why). Run: go test ./internal/sqlite -run '^$'
// -bench JoinParam -benchtime 20000x. The two must also agree.
func BenchmarkJoinParam(b *testing.B) {
	db := MustOpenDB(b)
	c := mustCast(b, db)
	mustRound(b, db, c.admin, 1, round1Rubric)
	var ids []int64
	for i := range 17 {
		ids = append(ids, mustPitch(b, db, c.c[1+i%4], 1, fmt.Sprintf("pitch %d", i), 1, 2).ID)
	}
	ctx := context.Background()
	for _, bc := range []struct{ name, where string }{{"bare", `?`}, {"joinParam", joinParam}} {
		q := pitchSelect + ` WHERE p.id = ` + bc.where
		b.Run(bc.name, func(b *testing.B) {
			for i := range b.N {
				p, err := scanPitch(db.r.QueryRowContext(ctx, q, ids[i%len(ids)]))
				if err != nil || p.ID != ids[i%len(ids)] {
					b.Fatalf("pitch %d: %+v, %v", ids[i%len(ids)], p, err)
				}
			}
		})
	}
}
