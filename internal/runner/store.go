package runner

import "context"

// Store is the durable side of the queue: everything the runner needs from
// storage. internal/sqlite implements it. Every method that changes a run
// checks the run's current status in the same statement, so a transition that
// lost a race (a cancel before the worker started the run) changes nothing and
// returns a *pitches.Error with code ECONFLICT. A missing run is ENOTFOUND.
type Store interface {
	// Enqueue stores a new queued run built from the validated request and
	// returns it with its ID and CreatedAt.
	Enqueue(ctx context.Context, req Request) (*Run, error)

	// ClaimNext returns the oldest queued run for device, or nil when there is
	// none. It does not change the run: MarkRunning does.
	ClaimNext(ctx context.Context, device string) (*Run, error)

	// MarkRunning moves a queued run to running and sets StartedAt.
	MarkRunning(ctx context.Context, id int64) error

	// MarkSucceeded moves a running run to succeeded and stores the result
	// document, its summary and its per-shape rows, all in one transaction.
	MarkSucceeded(ctx context.Context, id int64, res *Result, fin Finish) error

	// MarkMeasured is MarkSucceeded for any status that keeps a result
	// (Status.Measured: succeeded, incorrect, suspect), with fin.Reason.
	MarkMeasured(ctx context.Context, id int64, status Status, res *Result, fin Finish) error

	// Accept records an admin's acceptance of suspect run id as a result,
	// with the reason, by user by, at the store's clock. A run that is not
	// suspect, or already accepted, is ECONFLICT naming why.
	Accept(ctx context.Context, id, by int64, reason string) (*Run, error)

	// MarkFailed moves a queued or running run to failed with fin.Reason.
	MarkFailed(ctx context.Context, id int64, fin Finish) error

	// MarkCancelled moves a queued or running run to cancelled.
	MarkCancelled(ctx context.Context, id int64, fin Finish) error

	// MarkInterrupted moves every running run to failed with reason
	// ReasonInterrupted and returns their IDs. Called once at start, before
	// any worker runs: runs still "running" then belong to a server that died.
	MarkInterrupted(ctx context.Context) ([]int64, error)

	// Requeue stores a new queued run with the parameters of run id (which
	// must be finished and not imported), RequeueOf set and RequestedBy = by.
	Requeue(ctx context.Context, id, by int64) (*Run, error)

	// Import stores a finished imported run with its result in one
	// transaction (run.Status: succeeded, incorrect or suspect; Imported
	// set; the import's permissions are the caller's, pitches.Can).
	Import(ctx context.Context, run *Run, res *Result) (*Run, error)

	// Get returns a run with its result document, shapes and logs.
	Get(ctx context.Context, id int64) (*Run, error)

	// List returns runs matching f, newest first.
	List(ctx context.Context, f Filter) ([]Run, error)
}
