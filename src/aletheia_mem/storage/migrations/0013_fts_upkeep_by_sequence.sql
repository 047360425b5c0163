-- The rows indexed since the last full merge are counted without a write per save: a new
-- memory or fact takes the next id of its table's AUTOINCREMENT sequence, so the count is how
-- far the sequences moved since then (``memory_seq``, ``fact_seq``: their values at the last
-- full merge), plus ``changes``, now the rows indexed again (a list rewritten, a sync update).
-- Which indexes a transaction wrote is kept by its connection (``pending`` is gone).
ALTER TABLE fts_upkeep ADD COLUMN memory_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fts_upkeep ADD COLUMN fact_seq INTEGER NOT NULL DEFAULT 0;
UPDATE fts_upkeep SET
    memory_seq = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0),
    fact_seq = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'facts'), 0);
ALTER TABLE fts_upkeep DROP COLUMN pending;
