-- 150: the audit log. Every state change made through the app (rubrics,
-- round status and measurement, users and roles, tokens, pitches, claims and
-- variants, scorecards and votes, kernel uploads, runs queued, cancelled and
-- imported, suspect results accepted, webhooks and regression thresholds)
-- is one row: who, when, what, and the state before and after as JSON.
-- Rows are only ever inserted.
CREATE TABLE audit_log (
	id        INTEGER PRIMARY KEY,
	at        TEXT NOT NULL,
	actor_id  INTEGER REFERENCES users (id) ON DELETE SET NULL,
	actor     TEXT NOT NULL DEFAULT '', -- the login at the time; '' for the system
	action    TEXT NOT NULL,            -- e.g. "round.status", "pitch.edit", "run.accept"
	target    TEXT NOT NULL DEFAULT '', -- e.g. "round 3", "pitch 12", "run 40"
	before    TEXT,                     -- JSON; NULL when nothing existed before
	after     TEXT                      -- JSON; NULL when nothing exists after
);
CREATE INDEX audit_action ON audit_log (action, id);
CREATE INDEX audit_actor ON audit_log (actor_id, id);
