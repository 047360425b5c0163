-- A made-up id's letter runs are no longer indexed as words of their own (search/text.py:
-- is_id_like: "aaeb" of a 40-character hash, "user" of userId9a8b7c), so that a memory is not
-- found by them alone. Rows indexed before hold them: the rows holding such an id are indexed
-- again (storage/sqlite/reindex.py). An empty store owes nothing.
INSERT OR IGNORE INTO full_text_reindex (step) SELECT 'id_parts'
WHERE EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM facts);
