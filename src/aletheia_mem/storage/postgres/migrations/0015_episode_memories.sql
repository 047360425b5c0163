-- As SQLite's migration 0018: the memories a session's hooks saved (its observations), so that
-- a session's summary names its own changed files, not another concurrent session's.
CREATE TABLE episode_memories (
    episode_id bigint NOT NULL REFERENCES episodes (id),
    memory_id bigint NOT NULL REFERENCES memories (id),
    PRIMARY KEY (episode_id, memory_id)
);
