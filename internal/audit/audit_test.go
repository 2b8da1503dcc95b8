package audit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// store is a pitches.Service that keeps an audit log in memory; only the
// methods these tests call are implemented (the rest would panic).
type store struct {
	pitches.Service
	entries []pitches.AuditEntry
	fail    error
}

func (s *store) AppendAudit(_ context.Context, e pitches.AuditEntry) error {
	if s.fail != nil {
		return s.fail
	}
	s.entries = append(s.entries, e)
	return nil
}

func (s *store) AuditLog(context.Context, pitches.AuditFilter) ([]pitches.AuditEntry, error) {
	return s.entries, nil
}

func (s *store) CreateUser(_ context.Context, login, displayName string, role pitches.Role, _ string) (*pitches.User, error) {
	if login == "" {
		return nil, pitches.Errorf(pitches.EINVALID, "login", "login is required")
	}
	return &pitches.User{ID: 7, Login: login, DisplayName: displayName, Role: role}, nil
}

// noLog is a pitches.Service whose store keeps no audit log.
type noLog struct{ pitches.Service }

// A change through the wrapped service is recorded after it succeeded,
// with the actor the context names when the method names none; a failed
// change records nothing; Inner gives the store back; a store without a
// log is not wrapped.
func TestWrapRecordsChanges(t *testing.T) {
	st := &store{}
	admin := &pitches.User{ID: 1, Login: "admin"}
	svc := Wrap(st, nil, nil, func(context.Context) *pitches.User { return admin })
	if Inner(svc) != st {
		t.Fatalf("Inner(Wrap(st)) is not st")
	}
	if _, err := svc.CreateUser(context.Background(), "vera", "Vera", pitches.RoleShark, "pw"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateUser(context.Background(), "", "", pitches.RoleShark, "pw"); pitches.ErrorField(err) != "login" {
		t.Fatalf("a refused change: %v; want the store's error on login", err)
	}
	if len(st.entries) != 1 {
		t.Fatalf("%d entries; want the one change that went through", len(st.entries))
	}
	e := st.entries[0]
	if e.Action != "user.create" || e.Target != userTarget(7) || e.Actor != "admin" || e.ActorID != 1 || e.Before != nil ||
		!strings.Contains(string(e.After), `"vera"`) {
		t.Errorf("entry %+v (after %s)", e, e.After)
	}
	bare := noLog{}
	if got := Wrap(bare, nil, nil, nil); got != pitches.Service(bare) || Inner(got) != pitches.Service(bare) {
		t.Errorf("a store without an audit log was wrapped")
	}
}

// Append writes nothing without a store, and a store that fails is logged,
// not returned: the change it records has already gone through.
func TestAppend(t *testing.T) {
	Append(context.Background(), nil, nil, nil, "run.cancel", "run 3", nil, nil) // no store: nothing to do, no panic
	var logged bytes.Buffer
	sys := slog.New(slog.NewTextHandler(&logged, nil))
	st := &store{fail: errors.New("disk full")}
	Append(context.Background(), st, sys, nil, "run.cancel", "run 3", map[string]any{"status": "queued"}, nil)
	if !strings.Contains(logged.String(), "disk full") || !strings.Contains(logged.String(), "run.cancel") {
		t.Errorf("a failed append logged %q; want the action and the error", logged.String())
	}
	st.fail = nil
	Append(context.Background(), st, sys, nil, "run.cancel", "run 3", map[string]any{"status": "queued"}, nil)
	if len(st.entries) != 1 || st.entries[0].Actor != "" || string(st.entries[0].Before) != `{"status":"queued"}` || st.entries[0].After != nil {
		t.Errorf("entries %+v", st.entries)
	}
}
