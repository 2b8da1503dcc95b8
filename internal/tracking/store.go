package tracking

import (
	"context"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// WrapStore returns s with the tracker told of every run that finishes:
// the runner is given the wrapped store (cmd/web).
func (t *Tracker) WrapStore(s runner.Store) runner.Store {
	if ie, ok := s.(runner.InterruptExceptStore); ok {
		return &interruptStore{runStore{Store: s, t: t}, ie}
	}
	return &runStore{Store: s, t: t}
}

type runStore struct {
	runner.Store
	t *Tracker
}

func (s *runStore) MarkSucceeded(ctx context.Context, id int64, res *runner.Result, fin runner.Finish) error {
	if err := s.Store.MarkSucceeded(ctx, id, res, fin); err != nil {
		return err
	}
	s.t.RunFinished(ctx, id)
	return nil
}

func (s *runStore) MarkMeasured(ctx context.Context, id int64, status runner.Status, res *runner.Result, fin runner.Finish) error {
	if err := s.Store.MarkMeasured(ctx, id, status, res, fin); err != nil {
		return err
	}
	s.t.RunFinished(ctx, id)
	return nil
}

func (s *runStore) Import(ctx context.Context, run *runner.Run, res *runner.Result) (*runner.Run, error) {
	out, err := s.Store.Import(ctx, run, res)
	if err != nil {
		return nil, err
	}
	s.t.RunFinished(ctx, out.ID)
	return out, nil
}

func (s *runStore) MarkFailed(ctx context.Context, id int64, fin runner.Finish) error {
	if err := s.Store.MarkFailed(ctx, id, fin); err != nil {
		return err
	}
	s.t.RunFailed(ctx, id)
	return nil
}

func (s *runStore) MarkCancelled(ctx context.Context, id int64, fin runner.Finish) error {
	if err := s.Store.MarkCancelled(ctx, id, fin); err != nil {
		return err
	}
	s.t.RunFailed(ctx, id)
	return nil
}

// MarkInterrupted: runs left running by a server that died failed.
func (s *runStore) MarkInterrupted(ctx context.Context) ([]int64, error) {
	ids, err := s.Store.MarkInterrupted(ctx)
	for _, id := range ids {
		s.t.RunFailed(ctx, id)
	}
	return ids, err
}

// interruptStore keeps the store's MarkInterruptedExcept (Slurm targets).
type interruptStore struct {
	runStore
	ie runner.InterruptExceptStore
}

func (s *interruptStore) MarkInterruptedExcept(ctx context.Context, keep []string) ([]int64, error) {
	ids, err := s.ie.MarkInterruptedExcept(ctx, keep)
	for _, id := range ids {
		s.t.RunFailed(ctx, id)
	}
	return ids, err
}
