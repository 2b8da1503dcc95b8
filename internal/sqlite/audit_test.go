package sqlite

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

func TestAuditLog(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	admin := mustUser(t, db, "admin", "Admin", pitches.RoleAdmin)
	for i, e := range []pitches.AuditEntry{
		{ActorID: admin.ID, Actor: "admin", Action: "round.create", Target: "round 1", After: json.RawMessage(`{"number":1}`)},
		{ActorID: admin.ID, Actor: "admin", Action: "round.status", Target: "round 1", Before: json.RawMessage(`{"status":"pitching"}`), After: json.RawMessage(`{"status":"judging"}`)},
		{Action: "run.finish", Target: "run 7", After: json.RawMessage(`{"status":"succeeded"}`)},
		{ActorID: admin.ID, Actor: "admin", Action: "roundtrip", Target: "x", Before: json.RawMessage(`null`)},
	} {
		if err := db.AppendAudit(ctx, e); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	all, err := db.AuditLog(ctx, pitches.AuditFilter{})
	if err != nil || len(all) != 4 {
		t.Fatalf("all entries: %d %v", len(all), err)
	}
	if all[0].Action != "roundtrip" || all[3].Action != "round.create" || all[0].At.IsZero() {
		t.Errorf("newest first with times: %+v", all)
	}
	if all[0].Before != nil {
		t.Errorf("a JSON null is stored as none: %s", all[0].Before)
	}
	if string(all[2].Before) != `{"status":"pitching"}` || string(all[2].After) != `{"status":"judging"}` {
		t.Errorf("before/after: %s %s", all[2].Before, all[2].After)
	}
	// A prefix ending in "." matches the family, not "roundtrip".
	rounds, _ := db.AuditLog(ctx, pitches.AuditFilter{Action: "round."})
	if len(rounds) != 2 {
		t.Errorf("round. entries: %+v", rounds)
	}
	exact, _ := db.AuditLog(ctx, pitches.AuditFilter{Action: "round.status"})
	if len(exact) != 1 {
		t.Errorf("round.status entries: %+v", exact)
	}
	sys, _ := db.AuditLog(ctx, pitches.AuditFilter{Target: "run 7"})
	if len(sys) != 1 || sys[0].ActorID != 0 || sys[0].Actor != "" {
		t.Errorf("the system's entry: %+v", sys)
	}
	byAdmin, _ := db.AuditLog(ctx, pitches.AuditFilter{ActorID: admin.ID})
	if len(byAdmin) != 3 {
		t.Errorf("admin's entries: %d", len(byAdmin))
	}
	page, _ := db.AuditLog(ctx, pitches.AuditFilter{Limit: 2})
	older, _ := db.AuditLog(ctx, pitches.AuditFilter{Limit: 2, BeforeID: page[1].ID})
	if len(page) != 2 || len(older) != 2 || older[0].ID >= page[1].ID || older[1].Action != "round.create" {
		t.Errorf("paging: %+v then %+v", page, older)
	}
}
