-- 154: at most one regression threshold per scope, baseline run and
-- percent. The web layer refuses an exact duplicate before it writes
-- (tracking.Threshold.SameAs: the same round, problem, variant, baseline
-- run and percent, compared exactly; problem and variant are trimmed
-- before they are stored, and TEXT's BINARY collation compares them with
-- case, as Go's == does), but two concurrent creates could both pass that
-- check. This index makes the second insert fail, and AddThreshold turns
-- the failure into the same 409. A variant's threshold has no round:
-- round_number is NULL there, and NULLs never collide in a unique index,
-- hence ifnull (a round's number is at least 1).
--
-- Duplicates stored before this migration are removed first, keeping the
-- oldest (lowest id) of each: they raised the same alert twice on every
-- run they covered. The removed ones' alerts stay: each moves to the kept
-- threshold, unless that one already has an alert on the same run (the
-- same alert); such an alert keeps no threshold, as a deleted threshold's
-- alerts do (ON DELETE SET NULL). The removals are not in the audit log.
UPDATE OR IGNORE regression_alerts
SET threshold_id = (
	SELECT min(k.id)
	FROM regression_thresholds d
	JOIN regression_thresholds k
		ON ifnull(k.round_number, 0) = ifnull(d.round_number, 0) AND k.problem = d.problem AND k.variant = d.variant
		AND k.baseline_run = d.baseline_run AND k.percent = d.percent
	WHERE d.id = regression_alerts.threshold_id)
WHERE threshold_id IN (SELECT id FROM regression_thresholds);

DELETE FROM regression_thresholds
WHERE EXISTS (
	SELECT 1 FROM regression_thresholds k
	WHERE k.id < regression_thresholds.id
		AND ifnull(k.round_number, 0) = ifnull(regression_thresholds.round_number, 0)
		AND k.problem = regression_thresholds.problem AND k.variant = regression_thresholds.variant
		AND k.baseline_run = regression_thresholds.baseline_run AND k.percent = regression_thresholds.percent);

CREATE UNIQUE INDEX regression_thresholds_bound
	ON regression_thresholds (ifnull(round_number, 0), problem, variant, baseline_run, percent);
