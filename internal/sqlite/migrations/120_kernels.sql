-- 120: submitted kernels (issue 10). A submission is stored once, named by
-- its sha256 (kernels.Submission.Hash), and never changes: the triggers
-- refuse updates and deletes, so a run that names kernel:<hash> always
-- measured exactly these bytes. Every upload to a pitch is a new row of
-- kernel_versions, with the compile report of the upload.

CREATE TABLE kernel_sources (
	hash       TEXT PRIMARY KEY CHECK (length(hash) = 64),
	name       TEXT NOT NULL,
	problem    TEXT NOT NULL,
	kind       TEXT NOT NULL,
	manifest   TEXT NOT NULL, -- manifest.json as uploaded
	size       INTEGER NOT NULL CHECK (size > 0),
	created_by INTEGER NOT NULL REFERENCES users (id),
	created_at TEXT NOT NULL
);

CREATE TABLE kernel_files (
	hash TEXT NOT NULL REFERENCES kernel_sources (hash),
	name TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (hash, name)
);

CREATE TRIGGER kernel_sources_no_update BEFORE UPDATE ON kernel_sources
BEGIN SELECT RAISE(ABORT, 'kernel sources are immutable'); END;
CREATE TRIGGER kernel_sources_no_delete BEFORE DELETE ON kernel_sources
BEGIN SELECT RAISE(ABORT, 'kernel sources are immutable'); END;
CREATE TRIGGER kernel_files_no_update BEFORE UPDATE ON kernel_files
BEGIN SELECT RAISE(ABORT, 'kernel files are immutable'); END;
CREATE TRIGGER kernel_files_no_delete BEFORE DELETE ON kernel_files
BEGIN SELECT RAISE(ABORT, 'kernel files are immutable'); END;

CREATE TABLE kernel_versions (
	pitch_id    INTEGER NOT NULL REFERENCES pitches (id),
	version     INTEGER NOT NULL CHECK (version >= 1),
	hash        TEXT NOT NULL REFERENCES kernel_sources (hash),
	uploaded_by INTEGER NOT NULL REFERENCES users (id),
	note        TEXT NOT NULL DEFAULT '',
	report      TEXT NOT NULL DEFAULT '{}', -- pitches.CompileReport as JSON
	created_at  TEXT NOT NULL,
	PRIMARY KEY (pitch_id, version)
);
CREATE INDEX kernel_versions_hash ON kernel_versions (hash);
