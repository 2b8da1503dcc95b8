// Package runner is pitchtank's run queue: it measures kernel variants by
// running `web bench` as a child process, one run at a time per device, and
// stores every run, its result document and its per-shape figures through a
// Store (internal/sqlite implements it). It also holds the arithmetic the run
// and pitch pages show next to a result: the result rule (ResultOf),
// prediction scores (ScorePrediction, Sentence), relative scores and
// calibration (RelativeScores, Calibrate), the noise figure (VariantRelSEM)
// and deal terms (EvaluateTerms).
//
// # Life of a run
//
// Submit validates a Request against the kernel manifest (Catalog) and the
// device list and stores it queued, a built-in kernel's variant in the
// catalogue's spelling (variant.go). The device's worker claims the oldest
// queued run of its device, marks it running and starts
//
//	web bench --problem P --variant V [--baseline B] [--aa] --suite S --device D [--seed N] --max-time T --json FILE
//
// in its own process group (Pdeathsig set, so it dies with the server). Its
// stdout is read line by line: progress lines go to subscribers, an error
// line becomes the failure reason, other text is kept as log; the last 64 KiB
// of stderr is kept. When the child exits 0, 1 (kernel incorrect) or 4
// (suspect) with a document that passes result.Validate and matches the run,
// Classify decides the status from the exit code and the document, and the
// document, its summary and its shapes are stored with it in one
// transaction: succeeded (exit 0, every shape correct, nothing suspect),
// incorrect (the reason names the shape and the failed check) or suspect
// (the reason lists summary.suspect). Every other ending fails the run with a
// reason a person can act on:
//
//	crashed: killed by signal 6 (aborted) (stderr: panic: ...)
//	crashed: exit status 42 (stderr: ...)
//	crashed: exit status 2 without bench's usage error (a Go panic exits 2) (stderr: panic: ...)
//	timed out after 15m0s (time limit); the process group was killed
//	could not run (exit 3): CUDA_ERROR_ILLEGAL_ADDRESS: ...
//	bench refused its input (exit 2): ...
//	no valid result: result: validate: ...
//
// and the worker goes on with the next run. Cancel and the time limit kill
// the whole process group (SIGTERM, SIGKILL after Config.KillGrace). Start
// marks runs left "running" by a server that died as failed, reason
// "interrupted"; Requeue makes a new queued run with the same parameters.
// One server per database file: Start assumes every "running" run is its own
// leftover.
//
// # What the web layer calls
//
// Construction (cmd/web serve): devices are the GPU ordinals from the GPU
// package's device count plus "cpu".
//
//	r, err := runner.New(runner.Config{Store: db, Catalog: runner.KernelsCatalog{},
//		Devices: devices, TimeLimit: flagTimeLimit})
//	err = r.Start(ctx)          // before serving
//	defer r.Close(shutdownCtx)  // on SIGTERM, before db.Close
//
// Endpoints and the calls behind them. Errors are *pitches.Error values
// (EINVALID with Field for bad input, ENOTFOUND, ECONFLICT for a state that
// forbids the action), mapped to HTTP statuses in the one place that does so.
//
//	POST /api/runs              body: runner.Request as JSON (problem, suite, variant,
//	                            baseline, device, seed, pitch_id); the handler sets
//	                            RequestedBy from the session, never from the body.
//	                            r.Submit(ctx, req) -> 201 with the *Run.
//	POST /pitches/{id}/runs     the same, built from the pitch: Variant = pitch.Variant,
//	                            Baseline = round.Baseline, PitchID = pitch.ID.
//	GET  /api/runs/{id}         r.Get(ctx, id) -> the *Run with result, shapes, logs.
//	GET  /api/runs              r.List(ctx, Filter{Problem, Variant, Baseline, Device,
//	                            Suite, PitchID, Status, Imported, BeforeID, Limit})
//	                            -> newest first; paging with before=<last id>.
//	POST /api/runs/{id}/cancel  r.Cancel(ctx, id) (waits until the kill is recorded).
//	POST /api/runs/{id}/requeue r.Requeue(ctx, id, user.ID) -> 201 with the new *Run.
//	POST /api/runs/import       req, err := runner.DecodeImport(body) (strict JSON,
//	                            docs/runs-import.md); r.Import(ctx, req, user.ID).
//	GET  /api/runs/{id}/events  server-sent events: r.Get first; if the run is
//	                            finished, send one "status" event and end. Otherwise
//	                            ch, stop := r.Subscribe(id); defer stop(); write each
//	                            Event as "event: <Type>\ndata: <json>\n\n" until the
//	                            channel closes (after the terminal status) or the
//	                            request's context ends. The first events are the
//	                            current status and latest progress; a slow reader
//	                            loses old events, never the newest or the last.
//	GET  /api/runs.csv|.json    export: r.List(ctx, Filter{..., WithShapes: true}),
//	                            one row per run and shape.
//
// Pages: a pitch page lists r.List(ctx, Filter{PitchID: id}). The result
// of a pitch is ResultOf(MeasurementOf(round), runs): its runs that match
// the round's measurement (problem, suite, baseline, device class; imports
// only where the round allows them) and succeeded, or are suspect and were
// accepted (Accept), pooled (geomean over runs, interval across runs,
// run-to-run variation; docs/bench-result.md, "The result rule"). Score the
// claim and each shark's estimate with ScorePrediction(lo, hi,
// result.Speedup.Value) (interval score alpha 0.2 on log speedups, absolute
// and signed log error, hit, Sentence) and evaluate the winning pitch's
// Terms with EvaluateTerms on result.TermsRun(newest counted run). The rules
// that concern people rather than runs live in package pitches: who may
// start, cancel or repeat a run (pitches.Can), whose results a viewer may
// see (pitches.CanSeeResults: not a shark who has not yet scored the pitch),
// and the store refuses predictions once the pitch has a run with a result.
package runner
