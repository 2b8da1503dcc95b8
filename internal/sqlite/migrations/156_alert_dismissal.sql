-- 156: an alert's dismissal (tracking.Dismissal): who dismissed it, when and
-- why. An alert is dismissed while dismissed_at is set, not dismissed_by:
-- a deleted user's dismissals stay dismissals (ON DELETE SET NULL keeps
-- the when and the why). Undoing a dismissal clears all three; the audit
-- log keeps the history. Alerts stored before this migration are active.
-- No index: listings read alerts newest first by id with a limit, and the
-- state filter only skips rows on that walk.
ALTER TABLE regression_alerts ADD COLUMN dismissed_at TEXT;
ALTER TABLE regression_alerts ADD COLUMN dismissed_by INTEGER REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE regression_alerts ADD COLUMN dismiss_reason TEXT NOT NULL DEFAULT '';
