-- The memories a session's hooks saved (its observations), so that the summary of one session
-- names its own changed files, not those of another session running at the same time in the
-- same project. A memory saved again by a later session (the same edit) belongs to both. A rowid
-- table: an export reads a table's rows in rowid order.
CREATE TABLE episode_memories (
    episode_id INTEGER NOT NULL REFERENCES episodes (id),
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    PRIMARY KEY (episode_id, memory_id)
);
