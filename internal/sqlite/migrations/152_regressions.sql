-- 152: regression thresholds and the alerts they raised. A threshold
-- applies to the runs of a round's pitches (round_number) or to the runs
-- of one variant spec of a problem (problem, variant): a finished run is
-- compared shape by shape with the pinned baseline run, and a shape slower
-- than it by more than percent (the interval's upper end below
-- 1 - percent/100) raises an alert.
CREATE TABLE regression_thresholds (
	id           INTEGER PRIMARY KEY,
	round_number INTEGER REFERENCES rounds (number) ON DELETE CASCADE,
	problem      TEXT NOT NULL DEFAULT '',
	variant      TEXT NOT NULL DEFAULT '',
	baseline_run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	percent      REAL NOT NULL CHECK (percent > 0 AND percent < 100),
	created_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
	created_at   TEXT NOT NULL,
	CHECK ((round_number IS NULL) != (variant = ''))
);

CREATE TABLE regression_alerts (
	id           INTEGER PRIMARY KEY,
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	threshold_id INTEGER REFERENCES regression_thresholds (id) ON DELETE SET NULL,
	baseline_run INTEGER NOT NULL,
	percent      REAL NOT NULL,
	shapes       TEXT NOT NULL, -- JSON: the shapes over the bound, with their ratios
	summary      TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	UNIQUE (run_id, threshold_id)
);
CREATE INDEX regression_alerts_run ON regression_alerts (run_id);
