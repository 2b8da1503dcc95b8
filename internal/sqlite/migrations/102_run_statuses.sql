-- 102: run statuses that say what happened (docs/bench-result.md, "Run
-- statuses"), suspect runs an admin accepted, and the device name a round's
-- device class is matched against.
--
-- A run is queued -> running -> succeeded | incorrect | suspect | failed |
-- cancelled. succeeded, incorrect and suspect keep their result document and
-- shapes. SQLite cannot change a CHECK constraint in place, so runs and its
-- child run_shapes are rebuilt. The new tables are created under temporary
-- names whose foreign keys point at runs_new: dropping the old runs while a
-- child still referenced "runs" would cascade-delete the shapes (foreign keys
-- are on, and cannot be turned off inside the migration's transaction).
-- RENAME then rewrites those references to "runs".

CREATE TABLE runs_new (
	id            INTEGER PRIMARY KEY,
	problem       TEXT NOT NULL,
	suite         TEXT NOT NULL,
	variant       TEXT NOT NULL,
	baseline      TEXT NOT NULL DEFAULT '',
	device        TEXT NOT NULL,
	seed          INTEGER NOT NULL DEFAULT 0,
	requested_by  INTEGER REFERENCES users (id) ON DELETE SET NULL,
	pitch_id      INTEGER REFERENCES pitches (id) ON DELETE SET NULL,
	requeue_of    INTEGER REFERENCES runs_new (id) ON DELETE SET NULL,
	imported      INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1)),
	status        TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'incorrect', 'suspect', 'failed', 'cancelled')),
	reason        TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL,
	started_at    TEXT,
	finished_at   TEXT,
	result        TEXT,
	geomean       REAL,
	geomean_lo    REAL,
	geomean_hi    REAL,
	correct       INTEGER CHECK (correct IN (0, 1)),
	flags         TEXT NOT NULL DEFAULT '',
	log           TEXT NOT NULL DEFAULT '',
	stderr        TEXT NOT NULL DEFAULT '',
	-- The fingerprint's device model of the result (or an import's label):
	-- what a round's device class is matched against. '' until measured.
	device_name   TEXT NOT NULL DEFAULT '',
	-- An admin accepted this suspect run as a result, with a reason.
	accepted_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
	accepted_at   TEXT,
	accept_reason TEXT NOT NULL DEFAULT '',
	CHECK ((status IN ('succeeded', 'incorrect', 'suspect')) = (result IS NOT NULL)),
	CHECK (accepted_at IS NULL OR (status = 'suspect' AND accept_reason <> ''))
);

INSERT INTO runs_new (id, problem, suite, variant, baseline, device, seed, requested_by, pitch_id, requeue_of,
	imported, status, reason, created_at, started_at, finished_at, result, geomean, geomean_lo, geomean_hi,
	correct, flags, log, stderr, device_name)
SELECT id, problem, suite, variant, baseline, device, seed, requested_by, pitch_id, requeue_of,
	imported, status, reason, created_at, started_at, finished_at, result, geomean, geomean_lo, geomean_hi,
	correct, flags, log, stderr,
	CASE
		WHEN result IS NULL THEN ''
		WHEN imported = 1 THEN device
		WHEN json_valid(result) THEN coalesce(json_extract(result, '$.fingerprint.device_model'), '')
		ELSE ''
	END
FROM runs;

CREATE TABLE run_shapes_new (
	run_id             INTEGER NOT NULL REFERENCES runs_new (id) ON DELETE CASCADE,
	idx                INTEGER NOT NULL CHECK (idx >= 0),
	label              TEXT NOT NULL,
	baseline_median_us REAL NOT NULL DEFAULT 0,
	baseline_sem_us    REAL NOT NULL DEFAULT 0,
	baseline_samples   INTEGER NOT NULL DEFAULT 0,
	variant_median_us  REAL NOT NULL DEFAULT 0,
	variant_sem_us     REAL NOT NULL DEFAULT 0,
	variant_samples    INTEGER NOT NULL DEFAULT 0,
	floor_us           REAL NOT NULL DEFAULT 0,
	floor_fraction     REAL NOT NULL DEFAULT 0,
	speedup            REAL NOT NULL DEFAULT 0,
	speedup_lo         REAL NOT NULL DEFAULT 0,
	speedup_hi         REAL NOT NULL DEFAULT 0,
	correct            INTEGER NOT NULL CHECK (correct IN (0, 1)),
	max_abs_err        REAL NOT NULL DEFAULT 0,
	max_rel_err        REAL NOT NULL DEFAULT 0,
	rel_l2_err         REAL NOT NULL DEFAULT 0,
	flags              TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, idx)
);
INSERT INTO run_shapes_new SELECT * FROM run_shapes;

DROP TABLE run_shapes;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
ALTER TABLE run_shapes_new RENAME TO run_shapes;

CREATE INDEX runs_queue ON runs (device, status, id);
CREATE INDEX runs_history ON runs (problem, variant, device, id);
CREATE INDEX runs_pitch ON runs (pitch_id, id) WHERE pitch_id IS NOT NULL;
CREATE INDEX runs_status ON runs (status);
CREATE INDEX run_shapes_label ON run_shapes (label, run_id);

-- Before this migration a run whose bench exited 1 (some shape incorrect)
-- was stored as succeeded with correct = 0. Such runs measured here are
-- incorrect. (Imports with correct = 0 stay: their correctness was not
-- reported, which is a flag, not a failed check.)
UPDATE runs SET status = 'incorrect',
	reason = 'incorrect: some shape failed a correctness check (recorded before run statuses; see the shapes)'
WHERE status = 'succeeded' AND imported = 0 AND correct = 0;
UPDATE runs SET status = 'incorrect',
	reason = 'incorrect: the import reports a shape incorrect (recorded before run statuses; see the shapes)'
WHERE status = 'succeeded' AND imported = 1 AND EXISTS (
	SELECT 1 FROM run_shapes s WHERE s.run_id = runs.id AND s.correct = 0 AND instr(s.flags, 'correctness_not_reported') = 0);
