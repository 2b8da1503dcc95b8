package pitches

import (
	"encoding/json"
	"strconv"
	"time"
)

// AuditEntry is one state change: who made it, when, what it changed, and
// the state before and after as JSON (nil where nothing was before, or is
// after).
type AuditEntry struct {
	ID      int64           `json:"id"`
	At      time.Time       `json:"at"`
	ActorID int64           `json:"actor_id,omitzero"` // 0: the system (a worker, the command line)
	Actor   string          `json:"actor"`             // the actor's login when it happened
	Action  string          `json:"action"`            // "round.status", "pitch.edit", "run.accept", ...
	Target  string          `json:"target"`            // "round 3", "pitch 12", "run 40"
	Before  json.RawMessage `json:"before,omitempty"`
	After   json.RawMessage `json:"after,omitempty"`
}

// AuditFilter selects audit entries, newest first. Zero fields do not
// filter.
type AuditFilter struct {
	Action   string // an action, or a prefix ending in "." ("round." is every round change)
	ActorID  int64
	Target   string // exact, e.g. "pitch 12"
	BeforeID int64  // paging: entries with ID < BeforeID
	Limit    int    // default 50, at most 500
}

// AuditUser is what the audit log keeps of a user, wherever the change was
// made (the web layer, the command line): who it is, its role and whether
// it may log in; an untyped nil for no user, so that the entry has no
// before or after.
func AuditUser(u *User) any {
	if u == nil {
		return nil
	}
	return map[string]any{"id": u.ID, "login": u.Login, "display_name": u.DisplayName, "role": u.Role, "active": u.DeactivatedAt == nil}
}

// AuditUserTarget names a user as an audit entry's target.
func AuditUserTarget(id int64) string { return "user " + strconv.FormatInt(id, 10) }
