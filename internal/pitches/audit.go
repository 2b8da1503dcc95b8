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

// AuditRound, AuditPitch, AuditScorecard and AuditVote are what the audit
// log keeps of each: every field, named as docs/api.md names it (the
// domain types carry no JSON names, and Go's would make the log the one
// place where a round's number is "Number"); an untyped nil for none, as
// AuditUser.
func AuditRound(r *Round) any {
	if r == nil {
		return nil
	}
	criteria := make([]map[string]any, 0, len(r.Criteria))
	for _, c := range r.Criteria {
		criteria = append(criteria, map[string]any{"key": c.Key, "name": c.Name, "description": c.Description, "weight": c.Weight})
	}
	return map[string]any{"id": r.ID, "number": r.Number, "title": r.Title, "rules": r.Rules, "status": r.Status,
		"baseline": r.Baseline, "criteria": criteria, "measurement": AuditMeasurement(r.Measurement), "created_at": r.CreatedAt}
}

// AuditMeasurement is a round's measurement in the log (with the round's
// baseline beside it, where the entry is about both).
func AuditMeasurement(m RoundMeasurement) map[string]any {
	return map[string]any{"problem": m.Problem, "suite": m.Suite, "device_class": m.DeviceClass, "allow_imports": m.AllowImports}
}

func AuditPitch(p *Pitch) any {
	if p == nil {
		return nil
	}
	return map[string]any{"id": p.ID, "round": p.RoundNumber, "contestant_id": p.ContestantID, "contestant": p.Contestant,
		"title": p.Title, "category": p.Category, "body": p.Body, "claim": p.Claim, "variant": p.Variant, "status": p.Status,
		"repitch_of": p.RepitchOf, "repitched_by": p.RepitchedBy, "created_at": p.CreatedAt, "updated_at": p.UpdatedAt}
}

func AuditScorecard(c *Scorecard) any {
	if c == nil {
		return nil
	}
	return map[string]any{"id": c.ID, "pitch": c.PitchID, "shark_id": c.SharkID, "shark": c.Shark, "scores": c.Scores,
		"notes": c.Notes, "estimate": c.Estimate, "verdict": c.Verdict, "weights": c.Weights, "weighted_total": c.Total,
		"typed_total": c.TypedTotal, "version": c.Version, "created_at": c.CreatedAt}
}

func AuditVote(v *Vote) any {
	if v == nil {
		return nil
	}
	doc := map[string]any{"round": v.RoundNumber, "shark_id": v.SharkID, "shark": v.Shark, "pitch": v.PitchID,
		"justification": v.Justification, "version": v.Version, "created_at": v.CreatedAt}
	if !v.Terms.Empty() {
		doc["terms"] = v.Terms // DealTerms has JSON names
	}
	return doc
}
