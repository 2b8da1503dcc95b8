// Package audit keeps the audit log (migration 150): every state change
// made through the app, with who, when, and the state before and after.
// Changes through pitches.Service are recorded by Service, which wraps the
// service the web layer is given when its store keeps an audit log (sqlite
// does); the web layer records the changes it makes itself (runs, webhooks,
// regression thresholds) with Append. An entry is written after the change
// succeeded; a failure to write it is logged, never shown to the person
// whose change went through.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// Store is the store's audit log (sqlite implements it).
type Store interface {
	AppendAudit(ctx context.Context, e pitches.AuditEntry) error
	AuditLog(ctx context.Context, f pitches.AuditFilter) ([]pitches.AuditEntry, error)
}

// Service records the state changes made through a pitches.Service.
// Reads go straight to the wrapped service (embedded).
type Service struct {
	pitches.Service
	log   Store
	sys   *slog.Logger
	inner pitches.Service
	track *tracking.Tracker                   // told of round status changes; may be nil
	actor func(context.Context) *pitches.User // who acts when a method is given no user
}

// Wrap wraps svc when it keeps an audit log; otherwise svc is returned as
// it is. actor says who made a change that names no user (the request's
// user); track, when not nil, is told of round status changes.
func Wrap(svc pitches.Service, logger *slog.Logger, track *tracking.Tracker, actor func(context.Context) *pitches.User) pitches.Service {
	st, ok := svc.(Store)
	if !ok {
		return svc
	}
	return &Service{Service: svc, log: st, sys: logger, inner: svc, track: track, actor: actor}
}

// Inner is the service Wrap wrapped, or svc itself: for the store's own
// interfaces beyond pitches.Service (search, webhooks).
func Inner(svc pitches.Service) pitches.Service {
	if a, ok := svc.(*Service); ok {
		return a.inner
	}
	return svc
}

// docJSON is v as an audit document; nil stays nil.
func docJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(strconv.Quote(fmt.Sprint(v)))
	}
	return b
}

// Changed reports whether an entry's before and after documents differ. A
// change that left the state as it was (deactivating a deactivated user,
// setting a role or a baseline to what it is) is no change: the log keeps
// none (docs/api.md: "A refused change writes nothing", and neither does
// one that did nothing). Only for documents that hold the whole state the
// change could touch; a change the document does not show (a webhook's
// secret) must not be judged by it. The command line's user deactivate and
// reactivate should ask it before auditing too.
func Changed(before, after any) bool {
	if before == nil || after == nil {
		return before != nil || after != nil
	}
	return !bytes.Equal(docJSON(before), docJSON(after))
}

// recordChange is record, but only when before and after differ (Changed).
func (a *Service) recordChange(ctx context.Context, by *pitches.User, action, target string, before, after any) {
	if Changed(before, after) {
		a.record(ctx, by, action, target, before, after)
	}
}

// record appends an entry, actor by (or the request's user when by is nil).
func (a *Service) record(ctx context.Context, by *pitches.User, action, target string, before, after any) {
	if by == nil && a.actor != nil {
		by = a.actor(ctx)
	}
	Append(ctx, a.log, a.sys, by, action, target, before, after)
}

// Append writes one entry to st (nothing when st is nil), actor by (none
// when nil), logging a failure to sys.
func Append(ctx context.Context, st Store, sys *slog.Logger, by *pitches.User, action, target string, before, after any) {
	if st == nil {
		return
	}
	e := pitches.AuditEntry{Action: action, Target: target, Before: docJSON(before), After: docJSON(after)}
	if by != nil {
		e.ActorID, e.Actor = by.ID, by.Login
	}
	// The change is made: the entry is written even if the request ends now.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := st.AppendAudit(wctx, e); err != nil && sys != nil {
		sys.Error("audit: append entry", slog.String("action", action), slog.String("target", target), slog.Any("err", err))
	}
}

// Targets: what an entry is about, in the log's words.
func roundTarget(n int) string    { return "round " + strconv.Itoa(n) }
func pitchTarget(id int64) string { return "pitch " + strconv.FormatInt(id, 10) }
func userTarget(id int64) string  { return pitches.AuditUserTarget(id) }

func (a *Service) CreateUser(ctx context.Context, login, displayName string, role pitches.Role, password string) (*pitches.User, error) {
	u, err := a.inner.CreateUser(ctx, login, displayName, role, password)
	if err == nil {
		a.record(ctx, nil, "user.create", userTarget(u.ID), nil, pitches.AuditUser(u))
	}
	return u, err
}

func (a *Service) SetUserRole(ctx context.Context, by *pitches.User, userID int64, role pitches.Role) error {
	before, _ := a.inner.UserByID(ctx, userID)
	err := a.inner.SetUserRole(ctx, by, userID, role)
	if err == nil {
		after, _ := a.inner.UserByID(ctx, userID)
		a.recordChange(ctx, by, "user.role", userTarget(userID), pitches.AuditUser(before), pitches.AuditUser(after))
	}
	return err
}

func (a *Service) SetUserActive(ctx context.Context, by *pitches.User, userID int64, active bool) error {
	before, _ := a.inner.UserByID(ctx, userID)
	err := a.inner.SetUserActive(ctx, by, userID, active)
	if err == nil {
		after, _ := a.inner.UserByID(ctx, userID)
		a.recordChange(ctx, by, "user.active", userTarget(userID), pitches.AuditUser(before), pitches.AuditUser(after))
	}
	return err
}

func (a *Service) ChangePassword(ctx context.Context, by *pitches.User, oldPassword, newPassword string) error {
	err := a.inner.ChangePassword(ctx, by, oldPassword, newPassword)
	if err == nil && by != nil {
		a.record(ctx, by, "user.password", userTarget(by.ID), nil, map[string]any{"changed": true})
	}
	return err
}

func (a *Service) CreateToken(ctx context.Context, userID int64, label string) (string, *pitches.Token, error) {
	secret, tok, err := a.inner.CreateToken(ctx, userID, label)
	if err == nil {
		a.record(ctx, nil, "token.create", userTarget(userID), nil, map[string]any{"id": tok.ID, "label": tok.Label})
	}
	return secret, tok, err
}

// RevokeToken records a revocation once: revoking a revoked token again
// succeeds (204 in the API) and changes nothing, so it writes no entry. The
// store says which call revoked (tokenRevoker); one that cannot say is
// recorded on every success, as before.
func (a *Service) RevokeToken(ctx context.Context, by *pitches.User, tokenID int64) error {
	changed := true
	var err error
	if tr, ok := a.inner.(tokenRevoker); ok {
		changed, err = tr.RevokeTokenChanged(ctx, by, tokenID)
	} else {
		err = a.inner.RevokeToken(ctx, by, tokenID)
	}
	if err == nil && changed {
		a.record(ctx, by, "token.revoke", "token "+strconv.FormatInt(tokenID, 10), map[string]any{"id": tokenID, "revoked": false},
			map[string]any{"id": tokenID, "revoked": true})
	}
	return err
}

func (a *Service) CreateRound(ctx context.Context, by *pitches.User, in pitches.RoundInput) (*pitches.Round, error) {
	r, err := a.inner.CreateRound(ctx, by, in)
	if err == nil {
		a.record(ctx, by, "round.create", roundTarget(r.Number), nil, pitches.AuditRound(r))
	}
	return r, err
}

func (a *Service) UpdateRound(ctx context.Context, by *pitches.User, number int, in pitches.RoundInput) (*pitches.Round, error) {
	before, _ := a.inner.Round(ctx, number)
	r, err := a.inner.UpdateRound(ctx, by, number, in)
	if err == nil {
		a.record(ctx, by, "round.rubric", roundTarget(number), pitches.AuditRound(before), pitches.AuditRound(r))
	}
	return r, err
}

func (a *Service) SetRoundStatus(ctx context.Context, by *pitches.User, number int, status pitches.RoundStatus) (*pitches.Round, error) {
	before, _ := a.inner.Round(ctx, number)
	r, err := a.inner.SetRoundStatus(ctx, by, number, status)
	if err == nil {
		var was pitches.RoundStatus
		if before != nil {
			was = before.Status
		}
		a.record(ctx, by, "round.status", roundTarget(number), map[string]any{"status": was}, map[string]any{"status": r.Status})
		a.track.RoundStatus(r, was)
	}
	return r, err
}

func (a *Service) SetPersonalWeights(ctx context.Context, by *pitches.User, round int, weights map[string]int) error {
	var before map[string]int
	if by != nil {
		before, _ = a.inner.PersonalWeights(ctx, by.ID, round)
	}
	err := a.inner.SetPersonalWeights(ctx, by, round, weights)
	if err == nil {
		a.recordChange(ctx, by, "weights.set", roundTarget(round), nilIfEmpty(before), weights)
	}
	return err
}

func nilIfEmpty(m map[string]int) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func (a *Service) FilePitch(ctx context.Context, by *pitches.User, in pitches.PitchInput) (*pitches.Pitch, error) {
	p, err := a.inner.FilePitch(ctx, by, in)
	if err == nil {
		a.record(ctx, by, "pitch.file", pitchTarget(p.ID), nil, pitches.AuditPitch(p))
	}
	return p, err
}

func (a *Service) EditPitch(ctx context.Context, by *pitches.User, id int64, in pitches.PitchInput) (*pitches.Pitch, error) {
	before, _ := a.inner.Pitch(ctx, id)
	p, err := a.inner.EditPitch(ctx, by, id, in)
	if err == nil {
		a.record(ctx, by, "pitch.edit", pitchTarget(id), pitches.AuditPitch(before), pitches.AuditPitch(p))
	}
	return p, err
}

func (a *Service) WithdrawPitch(ctx context.Context, by *pitches.User, id int64) (*pitches.Pitch, error) {
	before, _ := a.inner.Pitch(ctx, id)
	p, err := a.inner.WithdrawPitch(ctx, by, id)
	if err == nil {
		var was pitches.PitchStatus
		if before != nil {
			was = before.Status
		}
		a.record(ctx, by, "pitch.withdraw", pitchTarget(id), map[string]any{"status": was}, map[string]any{"status": p.Status})
	}
	return p, err
}

func (a *Service) SubmitScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput) (*pitches.Scorecard, error) {
	var before *pitches.Scorecard
	if by != nil {
		if h, err := a.inner.ScorecardHistory(ctx, by, pitchID, by.ID); err == nil && len(h) > 0 {
			before = &h[len(h)-1]
		}
	}
	c, err := a.inner.SubmitScorecard(ctx, by, pitchID, in)
	if err == nil {
		a.record(ctx, by, "scorecard.submit", pitchTarget(pitchID), pitches.AuditScorecard(before), pitches.AuditScorecard(c))
	}
	return c, err
}

func (a *Service) CastVote(ctx context.Context, by *pitches.User, round int, in pitches.VoteInput) (*pitches.Vote, error) {
	var before *pitches.Vote
	if by != nil {
		if h, err := a.inner.VoteHistory(ctx, by, round, by.ID); err == nil && len(h) > 0 {
			before = &h[len(h)-1]
		}
	}
	v, err := a.inner.CastVote(ctx, by, round, in)
	if err == nil {
		a.record(ctx, by, "vote.cast", roundTarget(round), pitches.AuditVote(before), pitches.AuditVote(v))
	}
	return v, err
}

func (a *Service) UploadKernel(ctx context.Context, by *pitches.User, pitchID int64, in pitches.KernelUpload) (*pitches.KernelVersion, error) {
	before, _ := a.inner.Pitch(ctx, pitchID)
	kv, err := a.inner.UploadKernel(ctx, by, pitchID, in)
	if err == nil {
		var was string
		if before != nil {
			was = before.Variant
		}
		after := map[string]any{"version": kv.Version, "hash": kv.Hash, "name": kv.Name, "kind": kv.Kind, "size": kv.Size, "note": kv.Note}
		if p, err := a.inner.Pitch(ctx, pitchID); err == nil {
			after["variant"] = p.Variant
		}
		a.record(ctx, by, "kernel.upload", pitchTarget(pitchID), map[string]any{"variant": was}, after)
	}
	return kv, err
}

// SetRoundBaseline and SetRoundMeasurement are the store's (baselineSetter),
// forwarded and recorded.
func (a *Service) SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error) {
	bs, ok := a.inner.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's baseline")
	}
	before, _ := a.inner.Round(ctx, number)
	r, err := bs.SetRoundBaseline(ctx, by, number, baseline)
	if err == nil {
		a.recordChange(ctx, by, "round.baseline", roundTarget(number), roundMeasure(before), roundMeasure(r))
	}
	return r, err
}

func (a *Service) SetRoundMeasurement(ctx context.Context, by *pitches.User, number int, m pitches.RoundMeasurement, baseline string) (*pitches.Round, error) {
	bs, ok := a.inner.(baselineSetter)
	if !ok {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "this server cannot change a round's measurement")
	}
	before, _ := a.inner.Round(ctx, number)
	r, err := bs.SetRoundMeasurement(ctx, by, number, m, baseline)
	if err == nil {
		a.recordChange(ctx, by, "round.measurement", roundTarget(number), roundMeasure(before), roundMeasure(r))
	}
	return r, err
}

func roundMeasure(r *pitches.Round) any {
	if r == nil {
		return nil
	}
	return map[string]any{"baseline": r.Baseline, "measurement": pitches.AuditMeasurement(r.Measurement)}
}

// Ping is the store's (healthz), forwarded.
func (a *Service) Ping(ctx context.Context) error {
	if p, ok := a.inner.(pinger); ok {
		return p.Ping(ctx)
	}
	_, err := a.inner.CurrentRound(ctx)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		return nil
	}
	return err
}

func (a *Service) AppendAudit(ctx context.Context, e pitches.AuditEntry) error {
	return a.log.AppendAudit(ctx, e)
}

func (a *Service) AuditLog(ctx context.Context, f pitches.AuditFilter) ([]pitches.AuditEntry, error) {
	return a.log.AuditLog(ctx, f)
}

// baselineSetter is the store's way to change a round's baseline and
// measurement (httpserver asks the wrapped service for the same methods).
type baselineSetter interface {
	SetRoundBaseline(ctx context.Context, by *pitches.User, number int, baseline string) (*pitches.Round, error)
	SetRoundMeasurement(ctx context.Context, by *pitches.User, number int, m pitches.RoundMeasurement, baseline string) (*pitches.Round, error)
}

// tokenRevoker is a store that says whether a revocation changed anything
// (sqlite does).
type tokenRevoker interface {
	RevokeTokenChanged(ctx context.Context, by *pitches.User, tokenID int64) (bool, error)
}

// pinger is a store that can check its database.
type pinger interface {
	Ping(ctx context.Context) error
}
