-- The web Facts overview lists the newest current facts of every project (storage
-- newest_current_facts): without an index by time it read and sorted every fact (23 to 87 ms at
-- 100,000 facts over 300 projects, bench/facts_overview_bench.py), with it a few rows (0.14 ms).
CREATE INDEX facts_recorded ON facts (recorded_at, id);
