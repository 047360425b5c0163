-- As SQLite's migration 0019: CJK text is indexed with the bigrams of its runs too
-- (search/cjk.py). The row below is the reindex a hub owes the memories and facts indexed
-- before, which the store runs once migrated (storage/postgres/reindex.py), deleting the row.
-- An empty hub owes nothing.
CREATE TABLE full_text_reindex (step text PRIMARY KEY);
INSERT INTO full_text_reindex (step) SELECT 'cjk_bigrams'
WHERE EXISTS (SELECT FROM memories) OR EXISTS (SELECT FROM facts);
