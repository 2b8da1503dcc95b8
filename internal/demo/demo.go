// Package demo loads the demo tournament: the NVFP4 GEMM shark tank of the
// seed documents (rounds 1, 2 and 5), retold in our own words and entered
// through the same pitches.Service methods the web app uses, so the demo
// obeys every rule a real tournament does.
//
// Choices the seeds leave open, and what we did:
//   - Rounds 3 and 4 are not in the seeds; they are skipped, so the rounds
//     are numbered 1, 2 and 5 as in the documents.
//   - Round 2's rubric: the round-2 rules ask sharks to weight kernel-specific
//     analysis (+10), risk (+5) and an incremental testing path (+5) more.
//     We read that as the round's default weights speedup 30 /
//     kernel_evidence 10 / feasibility 25 / risk (risk and testability) 30 /
//     pitch_quality 5, and enter the Oracle's published re-weighting 35 / 25
//     / 20 / 20 / 0 as his personal weights for the round, set before his
//     first scorecard, which is what personal weights are for.
//   - The Oracle gave no pitch-quality scores in round 2 (weight 0); every
//     criterion must be scored, so his cards carry a neutral 5 with a note.
//   - Round 2's withdrawals (contestants 1 and 4) happen after the Oracle's
//     scorecards, while judging: a withdrawn pitch can no longer be scored.
//   - The hand-typed totals of the documents (8.05 / 5.85 / 6.95 / 5.35 and
//     4.2 / 8.7 / 6.5 / 5.3) are kept as TypedTotal through the import-only
//     Store.ImportScorecard; the app's own totals (7.85 / 5.75 / 6.75 / 5.25
//     and 5.10 / 8.75 / 6.50 / 5.40) sit next to them.
//   - The Oracle's round-1 scorecard is not in the seeds (only its 8.4
//     total, quoted in round 2); his round-1 vote is, so only the vote is
//     entered and its justification mentions the 8.4.
//   - Round 5's wild cards are filed by one contestant account, "The Wild
//     Card Bench", since the seeds do not name their authors; its rubric is
//     round 1's. The Pragmatic Engineer's vote for wild card C is entered
//     without scorecards (the seeds give none); the Oracle has neither scored
//     nor voted in round 5, so a person can log in as oracle and do both.
//   - Round 6 is ours, not the seeds': the pitchtank team's own ladder
//     (kernels/ladder.json), each step a pitch of the contestant "team"
//     whose claim is the range predicted before the device runs, with the
//     H100 measurement imported as its run (ladder.go). It is closed, so
//     round 5 stays the current round. The "team" account is the last
//     login, so the seeds' accounts keep their ids.
package demo

import (
	"context"
	"fmt"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Store is what the loader needs: the service plus the import-only path for
// hand-typed totals and the run store's import of a measurement made
// elsewhere (both implemented by *sqlite.DB).
type Store interface {
	pitches.Service
	ImportScorecard(ctx context.Context, by *pitches.User, pitchID int64, in pitches.ScorecardInput, typedTotal float64) (*pitches.Scorecard, error)
	Import(ctx context.Context, run *runner.Run, res *runner.Result) (*runner.Run, error)
	// Accept records an admin's written acceptance of a suspect run (the
	// runner's rule: a speedup over 10x needs a person to say why it is real).
	Accept(ctx context.Context, id, by int64, reason string) (*runner.Run, error)
}

// DemoLogin is an account the demo creates, with its fixed demo password.
type DemoLogin struct {
	Login       string
	Password    string
	DisplayName string
	Role        pitches.Role
}

// Logins are the demo accounts. The passwords are public and for demos
// only: never load the demo into a database people rely on.
var Logins = []DemoLogin{
	{"admin", "demo-admin", "Tank Admin", pitches.RoleAdmin},
	{"oracle", "demo-oracle", "The Performance Oracle", pitches.RoleShark},
	{"pragmatist", "demo-pragmatist", "The Pragmatic Engineer", pitches.RoleShark},
	{"contestant1", "demo-contestant1", "Contestant 1", pitches.RoleContestant},
	{"contestant2", "demo-contestant2", "Contestant 2", pitches.RoleContestant},
	{"contestant3", "demo-contestant3", "Contestant 3", pitches.RoleContestant},
	{"contestant4", "demo-contestant4", "Contestant 4", pitches.RoleContestant},
	{"wildcard", "demo-wildcard", "The Wild Card Bench", pitches.RoleContestant},
	{"viewer", "demo-viewer", "Demo Viewer", pitches.RoleViewer},
	{"team", "demo-team", "The pitchtank team", pitches.RoleContestant},
}

// IsEmpty reports whether the store has no users and no rounds, i.e. the
// demo may be loaded into it.
func IsEmpty(ctx context.Context, svc pitches.Service) (bool, error) {
	users, err := svc.Users(ctx)
	if err != nil {
		return false, fmt.Errorf("demo: list users: %w", err)
	}
	rounds, err := svc.Rounds(ctx)
	if err != nil {
		return false, fmt.Errorf("demo: list rounds: %w", err)
	}
	return len(users) == 0 && len(rounds) == 0, nil
}

// Load builds the demo tournament in an empty store and returns the demo
// logins. It refuses a store that already has users or rounds. The loader
// makes many service calls, each its own transaction: if one fails, what was
// loaded before it stays, and the error says which step failed.
func Load(ctx context.Context, svc Store) ([]DemoLogin, error) {
	empty, err := IsEmpty(ctx, svc)
	if err != nil {
		return nil, err
	}
	if !empty {
		return nil, pitches.Errorf(pitches.ECONFLICT, "", "the database already has users or rounds; the demo loads only into an empty one")
	}
	l := &loader{ctx: ctx, svc: svc, users: map[string]*pitches.User{}}
	for _, d := range Logins {
		u, err := svc.CreateUser(ctx, d.Login, d.DisplayName, d.Role, d.Password)
		if err != nil {
			return nil, fmt.Errorf("demo: create user %s: %w", d.Login, err)
		}
		l.users[d.Login] = u
	}
	for _, step := range []func() error{l.round1, l.round2, l.round5, l.roundLadder} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return append([]DemoLogin(nil), Logins...), nil
}

type loader struct {
	ctx   context.Context
	svc   Store
	users map[string]*pitches.User
	r1    map[string]*pitches.Pitch // round-1 pitches by short name, for re-pitch links
}

func (l *loader) u(login string) *pitches.User { return l.users[login] }

func (l *loader) round(in pitches.RoundInput) error {
	if _, err := l.svc.CreateRound(l.ctx, l.u("admin"), in); err != nil {
		return fmt.Errorf("demo: create round %d: %w", in.Number, err)
	}
	return nil
}

func (l *loader) status(round int, s pitches.RoundStatus) error {
	if _, err := l.svc.SetRoundStatus(l.ctx, l.u("admin"), round, s); err != nil {
		return fmt.Errorf("demo: round %d -> %s: %w", round, s, err)
	}
	return nil
}

func (l *loader) file(login string, in pitches.PitchInput) (*pitches.Pitch, error) {
	p, err := l.svc.FilePitch(l.ctx, l.u(login), in)
	if err != nil {
		return nil, fmt.Errorf("demo: file %q: %w", in.Title, err)
	}
	return p, nil
}

func (l *loader) card(shark string, p *pitches.Pitch, in pitches.ScorecardInput, typed float64) error {
	if _, err := l.svc.ImportScorecard(l.ctx, l.u(shark), p.ID, in, typed); err != nil {
		return fmt.Errorf("demo: %s's scorecard for %q: %w", shark, p.Title, err)
	}
	return nil
}

func (l *loader) vote(shark string, round int, p *pitches.Pitch, why string) error {
	return l.voteTerms(shark, round, p, why, pitches.DealTerms{})
}

func (l *loader) voteTerms(shark string, round int, p *pitches.Pitch, why string, terms pitches.DealTerms) error {
	if _, err := l.svc.CastVote(l.ctx, l.u(shark), round, pitches.VoteInput{PitchID: p.ID, Justification: why, Terms: terms}); err != nil {
		return fmt.Errorf("demo: %s's vote in round %d: %w", shark, round, err)
	}
	return nil
}

// importRun stores a measurement made elsewhere, validated and computed
// exactly as POST /api/runs/import does, entered by the admin, and returns
// the stored run.
func (l *loader) importRun(req *runner.ImportRequest) (*runner.Run, error) {
	if err := req.Validate(runner.KernelsCatalog{}); err != nil {
		return nil, fmt.Errorf("demo: import %s run: %w", req.Device, err)
	}
	run, res, err := req.ImportResult(l.u("admin").ID)
	if err != nil {
		return nil, fmt.Errorf("demo: import %s run: %w", req.Device, err)
	}
	stored, err := l.svc.Import(l.ctx, run, res)
	if err != nil {
		return nil, fmt.Errorf("demo: store imported %s run: %w", req.Device, err)
	}
	return stored, nil
}
