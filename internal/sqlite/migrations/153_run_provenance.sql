-- 153: what each finished run measured and with what: the variant's kernel
-- source hash (the bench document's, or a submitted kernel's content hash)
-- and the app's build (the VCS revision from Go's build info) of the server
-- that stored the result.
CREATE TABLE run_provenance (
	run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	source_hash TEXT NOT NULL DEFAULT '',
	app_build   TEXT NOT NULL DEFAULT '',
	recorded_at TEXT NOT NULL
);
