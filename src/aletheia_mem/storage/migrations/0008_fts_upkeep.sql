-- Upkeep of the full-text indexes (see storage/full_text.py). ``changes`` counts the rows
-- indexed since the indexes were last merged into one b-tree each, ``merged_rows`` is how many
-- memories there were then, and ``pending`` is 1 while a transaction has indexed rows and not
-- yet done its share of merging.
CREATE TABLE fts_upkeep (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    changes INTEGER NOT NULL,
    merged_rows INTEGER NOT NULL,
    pending INTEGER NOT NULL
);

INSERT INTO fts_upkeep (id, changes, merged_rows, pending) VALUES (1, 0, 0, 0);

-- Merge b-trees two at a time instead of four: fewer b-trees for each search to read.
INSERT INTO memory_fts (memory_fts, rank) VALUES ('usermerge', 2);
INSERT INTO fact_fts (fact_fts, rank) VALUES ('usermerge', 2);
