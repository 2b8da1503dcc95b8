-- 130: deactivated users. A deactivated user keeps their scorecards, votes
-- and pitches (the record stays whole) but cannot log in, and their sessions
-- and tokens stop working; NULL means active.
ALTER TABLE users ADD COLUMN deactivated_at TEXT;
