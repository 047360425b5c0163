-- As SQLite's migration 0022: the words of a name with digits ("1Password", "30DayTrial") are
-- indexed again (search/text.py: is_id_like), which migration 0018's release left out. The rows
-- holding such a name are indexed again (storage/postgres/reindex.py). An empty hub owes nothing.
INSERT INTO full_text_reindex (step) SELECT 'name_parts'
WHERE EXISTS (SELECT FROM memories) OR EXISTS (SELECT FROM facts)
ON CONFLICT (step) DO NOTHING;
