-- 155: a run's variant key (pitches.VariantKey: the spec with its knobs
-- sorted), indexed with the problem, so that a lookup by variant finds the
-- runs of one kernel whatever order their knobs were typed in with an index
-- search instead of a scan of the problem's runs. The key is computed in Go
-- (knob sorting): the store writes it with every run, and this migration's
-- Go step (variantKeyBackfill in db.go) fills it for the rows already
-- stored, in the same transaction.
ALTER TABLE runs ADD COLUMN variant_key TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_variant_key ON runs (problem, variant_key, id);
