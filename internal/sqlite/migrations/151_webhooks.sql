-- 151: outgoing webhooks (internal/notify) and their delivery log. A hook
-- is a URL, the secret its bodies are signed with, and the event types it
-- takes (comma-separated). Every delivery attempt is a row of
-- webhook_deliveries; a hook's deletion takes its log with it.
CREATE TABLE webhooks (
	id         INTEGER PRIMARY KEY,
	url        TEXT NOT NULL,
	secret     TEXT NOT NULL,
	events     TEXT NOT NULL,
	active     INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
	created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
	created_at TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
	id          INTEGER PRIMARY KEY,
	webhook_id  INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	event_id    TEXT NOT NULL,
	event       TEXT NOT NULL,
	attempt     INTEGER NOT NULL CHECK (attempt >= 1),
	status_code INTEGER NOT NULL DEFAULT 0,
	error       TEXT NOT NULL DEFAULT '',
	delivered   INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1)),
	final       INTEGER NOT NULL DEFAULT 0 CHECK (final IN (0, 1)),
	at          TEXT NOT NULL,
	duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, id);
