-- As SQLite's migration 0020: CJK bigrams are indexed with a break before each run's
-- (search/cjk.py: RUN_BREAK), so that a word is not found across punctuation. The reindex of
-- migration 0016 is owed again (the rows holding CJK text only, storage/postgres/reindex.py).
-- An empty hub owes nothing.
INSERT INTO full_text_reindex (step) SELECT 'cjk_bigrams'
WHERE EXISTS (SELECT FROM memories) OR EXISTS (SELECT FROM facts)
ON CONFLICT (step) DO NOTHING;
