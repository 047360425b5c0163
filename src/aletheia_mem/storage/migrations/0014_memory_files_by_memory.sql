-- The file index in two b-trees instead of four, so that a save writes two fewer pages: the
-- rows live in their primary key (WITHOUT ROWID), and an exact path is looked up by its
-- reversed form, as a suffix is (reversing is one-to-one), so the index on ``path`` is gone.
CREATE TABLE memory_files_by_memory (
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    path TEXT NOT NULL,
    path_reversed TEXT NOT NULL,
    PRIMARY KEY (memory_id, path)
) WITHOUT ROWID;

INSERT INTO memory_files_by_memory (memory_id, path, path_reversed)
    SELECT memory_id, path, path_reversed FROM memory_files;

DROP TABLE memory_files;

ALTER TABLE memory_files_by_memory RENAME TO memory_files;

CREATE INDEX memory_files_path_reversed ON memory_files (path_reversed);
