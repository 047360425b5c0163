-- As SQLite's migration 0025: the web Facts overview lists the newest current facts of every
-- project (newest_current_facts), which read and sorted every fact without an index by time
-- (26 to 67 ms at 100,000 facts over 300 projects, bench/facts_overview_bench.py; with it
-- 0.2 to 0.3 ms).
CREATE INDEX facts_recorded ON facts (recorded_at, id);
