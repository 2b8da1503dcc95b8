-- 103: how a round's pitches are measured (docs/api.md, "The round's
-- measurement"): the kernel problem and suite, the device class matched
-- case-insensitively against a run's device name ('' = any device), and
-- whether imported runs count. With rounds.baseline they decide which runs
-- make a pitch's result (runner.PitchResult).
ALTER TABLE rounds ADD COLUMN problem TEXT NOT NULL DEFAULT '';
ALTER TABLE rounds ADD COLUMN suite TEXT NOT NULL DEFAULT 'benchmarks';
ALTER TABLE rounds ADD COLUMN device_class TEXT NOT NULL DEFAULT '';
ALTER TABLE rounds ADD COLUMN allow_imports INTEGER NOT NULL DEFAULT 0 CHECK (allow_imports IN (0, 1));

-- Rounds made before this were measured, implicitly, on the one problem the
-- web layer hard-coded (nvfp4_group_gemm), and imports counted: keep that
-- for them explicitly, so that their results do not vanish. New rounds
-- declare their own.
UPDATE rounds SET problem = 'nvfp4_group_gemm', allow_imports = 1;
