-- CJK text is indexed with the bigrams of its runs too (search/cjk.py), so that a word is found
-- inside a longer run. Memories and facts indexed before hold each run whole: the row below is
-- the reindex the store owes them, which the store runs once migrated (storage/sqlite/reindex.py:
-- the rows holding CJK text only, other text indexes as before), deleting the row with it. An
-- empty store owes nothing.
CREATE TABLE full_text_reindex (step TEXT PRIMARY KEY);
INSERT INTO full_text_reindex (step) SELECT 'cjk_bigrams'
WHERE EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM facts);
