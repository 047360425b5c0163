-- The words of a name with digits are indexed again (search/text.py: is_id_like): migration
-- 0021's release took "1Password", "30DayTrial" or "Int32ToInt64Converter" for made-up ids and
-- indexed none of their words, so "password" did not find "1Password". The rows holding such a
-- name are indexed again (storage/sqlite/reindex.py). An empty store owes nothing.
INSERT OR IGNORE INTO full_text_reindex (step) SELECT 'name_parts'
WHERE EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM facts);
