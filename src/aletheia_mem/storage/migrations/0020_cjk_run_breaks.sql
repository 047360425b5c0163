-- CJK bigrams are indexed with a break before each run's (search/cjk.py: RUN_BREAK), so that a
-- word is not found across punctuation ("数据。据库存" holds no "数据库"). Rows indexed before
-- hold the runs' bigrams side by side: the reindex of migration 0019 is owed again (the rows
-- holding CJK text only, storage/sqlite/reindex.py). An empty store owes nothing.
INSERT OR IGNORE INTO full_text_reindex (step) SELECT 'cjk_bigrams'
WHERE EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM facts);
