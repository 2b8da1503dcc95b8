-- 104: an imported run's note (where the numbers come from). Imports of
-- bare times keep it inside their stored document too; an imported `web
-- bench` document is stored unchanged, so its note needs a column.
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
UPDATE runs SET note = coalesce(json_extract(result, '$.note'), '')
WHERE imported = 1 AND result IS NOT NULL AND json_valid(result) AND json_type(result, '$.note') = 'text';
