-- 001: users, sessions, tokens, rounds with rubrics, pitches, scorecards and
-- votes. Times are UTC text in a fixed-width RFC 3339 form, so they sort as
-- text. Later migrations (runs, results) add tables next to these.

CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	login         TEXT NOT NULL UNIQUE,
	display_name  TEXT NOT NULL,
	role          TEXT NOT NULL CHECK (role IN ('admin', 'shark', 'contestant', 'viewer')),
	password_hash TEXT NOT NULL,
	created_at    TEXT NOT NULL
);

-- Sessions and API tokens keep only the SHA-256 of the secret: a stolen
-- database (or backup) does not hand out logins.
CREATE TABLE sessions (
	id          INTEGER PRIMARY KEY,
	user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	secret_hash BLOB NOT NULL UNIQUE,
	created_at  TEXT NOT NULL,
	expires_at  TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	label        TEXT NOT NULL DEFAULT '',
	secret_hash  BLOB NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	revoked_at   TEXT,
	last_used_at TEXT
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE rounds (
	id         INTEGER PRIMARY KEY,
	number     INTEGER NOT NULL UNIQUE CHECK (number >= 1),
	title      TEXT NOT NULL,
	rules      TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL CHECK (status IN ('pitching', 'judging', 'closed')),
	baseline   TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE TABLE criteria (
	id          INTEGER PRIMARY KEY,
	round_id    INTEGER NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
	position    INTEGER NOT NULL,
	key         TEXT NOT NULL,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	weight      INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 100),
	UNIQUE (round_id, key),
	UNIQUE (round_id, position)
);

-- A shark's own weights for a round, one row per criterion key. Frozen by
-- the application once the shark has a scorecard in the round.
CREATE TABLE personal_weights (
	round_id      INTEGER NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
	shark_id      INTEGER NOT NULL REFERENCES users (id),
	criterion_key TEXT NOT NULL,
	weight        INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 100),
	created_at    TEXT NOT NULL,
	PRIMARY KEY (round_id, shark_id, criterion_key)
);

CREATE TABLE pitches (
	id            INTEGER PRIMARY KEY,
	round_id      INTEGER NOT NULL REFERENCES rounds (id),
	contestant_id INTEGER NOT NULL REFERENCES users (id),
	title         TEXT NOT NULL,
	category      TEXT NOT NULL DEFAULT '',
	body          TEXT NOT NULL DEFAULT '',
	claim_lo      REAL NOT NULL CHECK (claim_lo > 0),
	claim_hi      REAL NOT NULL CHECK (claim_hi >= claim_lo),
	variant       TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('active', 'withdrawn')),
	repitch_of    INTEGER REFERENCES pitches (id),
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL
);
CREATE INDEX pitches_round ON pitches (round_id, created_at);
CREATE INDEX pitches_contestant ON pitches (contestant_id);
CREATE INDEX pitches_repitch_of ON pitches (repitch_of);

-- Append-only: every submission or edit of a scorecard is a new row with the
-- next version number; the highest version is the scorecard. weights_json is
-- the weights the total was computed with (personal or round default), so a
-- card explains its own total forever.
CREATE TABLE scorecard_versions (
	id          INTEGER PRIMARY KEY,
	pitch_id    INTEGER NOT NULL REFERENCES pitches (id),
	shark_id    INTEGER NOT NULL REFERENCES users (id),
	version     INTEGER NOT NULL CHECK (version >= 1),
	estimate_lo REAL NOT NULL CHECK (estimate_lo > 0),
	estimate_hi REAL NOT NULL CHECK (estimate_hi >= estimate_lo),
	verdict     TEXT NOT NULL DEFAULT '',
	weights_json TEXT NOT NULL,
	total       REAL NOT NULL,
	typed_total REAL,
	created_at  TEXT NOT NULL,
	UNIQUE (pitch_id, shark_id, version)
);
CREATE INDEX scorecard_versions_shark ON scorecard_versions (shark_id, pitch_id);

CREATE TABLE scorecard_scores (
	version_id    INTEGER NOT NULL REFERENCES scorecard_versions (id),
	criterion_key TEXT NOT NULL,
	score         REAL NOT NULL CHECK (score BETWEEN 0 AND 10),
	note          TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (version_id, criterion_key)
);

-- Append-only like scorecards: a changed vote is a new version.
CREATE TABLE vote_versions (
	id            INTEGER PRIMARY KEY,
	round_id      INTEGER NOT NULL REFERENCES rounds (id),
	shark_id      INTEGER NOT NULL REFERENCES users (id),
	pitch_id      INTEGER NOT NULL REFERENCES pitches (id),
	justification TEXT NOT NULL,
	version       INTEGER NOT NULL CHECK (version >= 1),
	created_at    TEXT NOT NULL,
	UNIQUE (round_id, shark_id, version)
);
CREATE INDEX vote_versions_pitch ON vote_versions (pitch_id);
