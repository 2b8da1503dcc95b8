-- 157: statistical thresholds (tracking.KindZScore) beside the percentage
-- bound against a pinned baseline run. kind is 'percent' (baseline_run and
-- percent as before) or 'zscore' (window_runs: how many of the latest
-- earlier comparable runs make the reference, 5..100; z_bound: the upper
-- boundary in standard deviations, 1..10; no baseline run, percent 0).
-- The columns are window_runs and z_bound, not window and z: WINDOW is an
-- SQL keyword (window functions), and a column so named needs quoting in
-- every query. Thresholds stored before this migration are percent ones.
--
-- baseline_run was NOT NULL and percent had a CHECK that a zscore threshold
-- cannot meet; SQLite changes neither in place, so regression_thresholds is
-- rebuilt, and regression_alerts with it: dropping the old thresholds while
-- the alerts still referenced "regression_thresholds" would set every
-- alert's threshold_id to NULL (foreign keys are on, ON DELETE SET NULL,
-- and cannot be turned off inside the migration's transaction). As in
-- migration 102, the alerts' new table references the thresholds' new
-- name, and RENAME rewrites that reference. Ids, alerts and dismissals are
-- kept as they are. The unique index of 154 gains kind, window and z
-- (tracking.Threshold.SameAs).
CREATE TABLE regression_thresholds_new (
	id           INTEGER PRIMARY KEY,
	round_number INTEGER REFERENCES rounds (number) ON DELETE CASCADE,
	problem      TEXT NOT NULL DEFAULT '',
	variant      TEXT NOT NULL DEFAULT '',
	kind         TEXT NOT NULL DEFAULT 'percent',
	baseline_run INTEGER REFERENCES runs (id) ON DELETE CASCADE,
	percent      REAL NOT NULL DEFAULT 0,
	window_runs  INTEGER NOT NULL DEFAULT 0,
	z_bound      REAL NOT NULL DEFAULT 0,
	created_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
	created_at   TEXT NOT NULL,
	CHECK ((round_number IS NULL) != (variant = '')),
	CHECK ((kind = 'percent' AND baseline_run IS NOT NULL AND percent > 0 AND percent < 100 AND window_runs = 0 AND z_bound = 0)
		OR (kind = 'zscore' AND baseline_run IS NULL AND percent = 0 AND window_runs BETWEEN 5 AND 100 AND z_bound BETWEEN 1 AND 10))
);
INSERT INTO regression_thresholds_new (id, round_number, problem, variant, kind, baseline_run, percent, created_by, created_at)
	SELECT id, round_number, problem, variant, 'percent', baseline_run, percent, created_by, created_at FROM regression_thresholds;

CREATE TABLE regression_alerts_new (
	id             INTEGER PRIMARY KEY,
	run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	threshold_id   INTEGER REFERENCES regression_thresholds_new (id) ON DELETE SET NULL,
	baseline_run   INTEGER NOT NULL, -- 0 for a zscore threshold's alert
	percent        REAL NOT NULL,    -- 0 for a zscore threshold's alert
	shapes         TEXT NOT NULL,    -- JSON: scope, kind, window, z, history and the shapes over the bound
	summary        TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	dismissed_at   TEXT,
	dismissed_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
	dismiss_reason TEXT NOT NULL DEFAULT '',
	UNIQUE (run_id, threshold_id)
);
INSERT INTO regression_alerts_new (id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at, dismissed_at, dismissed_by, dismiss_reason)
	SELECT id, run_id, threshold_id, baseline_run, percent, shapes, summary, created_at, dismissed_at, dismissed_by, dismiss_reason FROM regression_alerts;

DROP TABLE regression_alerts;
DROP TABLE regression_thresholds;
ALTER TABLE regression_thresholds_new RENAME TO regression_thresholds;
ALTER TABLE regression_alerts_new RENAME TO regression_alerts;

CREATE INDEX regression_alerts_run ON regression_alerts (run_id);
CREATE UNIQUE INDEX regression_thresholds_bound
	ON regression_thresholds (ifnull(round_number, 0), problem, variant, kind, ifnull(baseline_run, 0), percent, window_runs, z_bound);
