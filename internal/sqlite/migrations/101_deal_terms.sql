-- 101: deal terms on votes (scoring.md, "Deal terms"). A shark's vote may
-- carry acceptance criteria for the pitch it backs; each vote version keeps
-- its own terms (append-only history, like the justification). NULL = term
-- not set; fractions for regression and variation (0.10 = 10%).
ALTER TABLE vote_versions ADD COLUMN min_geomean REAL CHECK (min_geomean IS NULL OR min_geomean > 0);
ALTER TABLE vote_versions ADD COLUMN max_regression REAL CHECK (max_regression IS NULL OR (max_regression >= 0 AND max_regression <= 1));
ALTER TABLE vote_versions ADD COLUMN max_variation REAL CHECK (max_variation IS NULL OR (max_variation > 0 AND max_variation <= 1));
ALTER TABLE vote_versions ADD COLUMN require_correct INTEGER NOT NULL DEFAULT 0 CHECK (require_correct IN (0, 1));
