-- As SQLite's migration 0021: a made-up id's letter runs are no longer indexed as words of their
-- own (search/text.py: is_id_like). The rows holding such an id are indexed again
-- (storage/postgres/reindex.py). An empty hub owes nothing.
INSERT INTO full_text_reindex (step) SELECT 'id_parts'
WHERE EXISTS (SELECT FROM memories) OR EXISTS (SELECT FROM facts)
ON CONFLICT (step) DO NOTHING;
