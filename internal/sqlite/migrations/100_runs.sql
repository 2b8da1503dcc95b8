-- 100: the run queue (internal/runner) and measured results.
-- A run is queued -> running -> succeeded | failed | cancelled; imported runs
-- (measured elsewhere) are the same rows with imported = 1 and a free device
-- label. The full result document stays as JSON text in runs.result; the
-- figures pages query (summary and per-shape rows) are columns so history
-- queries need no JSON parsing. Times are fixed-width UTC text, as in 001.

CREATE TABLE runs (
	id           INTEGER PRIMARY KEY,
	problem      TEXT NOT NULL,
	suite        TEXT NOT NULL,
	variant      TEXT NOT NULL,
	baseline     TEXT NOT NULL DEFAULT '',
	device       TEXT NOT NULL,
	seed         INTEGER NOT NULL DEFAULT 0,
	requested_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
	pitch_id     INTEGER REFERENCES pitches (id) ON DELETE SET NULL,
	requeue_of   INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	imported     INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1)),
	status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	reason       TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	started_at   TEXT,
	finished_at  TEXT,
	-- The result: the document as written by `web bench` (or the import
	-- document), and its summary. NULL until the run succeeds.
	result       TEXT,
	geomean      REAL,
	geomean_lo   REAL,
	geomean_hi   REAL,
	correct      INTEGER CHECK (correct IN (0, 1)),
	flags        TEXT NOT NULL DEFAULT '', -- comma-separated
	log          TEXT NOT NULL DEFAULT '', -- stdout lines that were not JSON, last 64 KiB
	stderr       TEXT NOT NULL DEFAULT '', -- last 64 KiB
	CHECK ((status = 'succeeded') = (result IS NOT NULL))
);

-- A worker claims the oldest queued run of its device.
CREATE INDEX runs_queue ON runs (device, status, id);
-- History of a variant on a device, and the runs of a pitch.
CREATE INDEX runs_history ON runs (problem, variant, device, id);
CREATE INDEX runs_pitch ON runs (pitch_id, id) WHERE pitch_id IS NOT NULL;
-- Start-up finds runs left running by a server that died.
CREATE INDEX runs_status ON runs (status);

CREATE TABLE run_shapes (
	run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
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
	speedup            REAL NOT NULL DEFAULT 0, -- baseline/variant; 0 when not paired
	speedup_lo         REAL NOT NULL DEFAULT 0, -- 95% interval; 0 when unknown
	speedup_hi         REAL NOT NULL DEFAULT 0,
	correct            INTEGER NOT NULL CHECK (correct IN (0, 1)),
	max_abs_err        REAL NOT NULL DEFAULT 0,
	max_rel_err        REAL NOT NULL DEFAULT 0,
	rel_l2_err         REAL NOT NULL DEFAULT 0,
	flags              TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, idx)
);
-- Per-shape history across runs: "this shape of this variant over time".
CREATE INDEX run_shapes_label ON run_shapes (label, run_id);
