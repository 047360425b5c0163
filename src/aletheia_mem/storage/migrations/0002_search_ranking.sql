-- Ranking support for search.

-- What relevance ranking reads per matching memory, in a narrow table kept by triggers: scoring a
-- few thousand FTS matches then touches small rows that stay in cache instead of whole memories.
-- ``stale``: the memory stated facts and all of them have been superseded (or dismissed); search
-- still finds it, ranked below current knowledge.
CREATE TABLE memory_rank (
    id INTEGER PRIMARY KEY REFERENCES memories (id),
    project TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    pinned INTEGER NOT NULL,
    dismissed_at INTEGER,
    stale INTEGER NOT NULL DEFAULT 0
);

INSERT INTO memory_rank (id, project, type, kind, created_at, updated_at, pinned, dismissed_at)
    SELECT id, project, type, kind, created_at, updated_at, pinned, dismissed_at FROM memories;

CREATE TRIGGER memories_rank_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_rank (id, project, type, kind, created_at, updated_at, pinned,
                             dismissed_at)
        VALUES (NEW.id, NEW.project, NEW.type, NEW.kind, NEW.created_at, NEW.updated_at,
                NEW.pinned, NEW.dismissed_at);
END;

CREATE TRIGGER memories_rank_update
AFTER UPDATE OF project, type, kind, created_at, updated_at, pinned, dismissed_at ON memories
BEGIN
    UPDATE memory_rank SET project = NEW.project, type = NEW.type, kind = NEW.kind,
        created_at = NEW.created_at, updated_at = NEW.updated_at, pinned = NEW.pinned,
        dismissed_at = NEW.dismissed_at
        WHERE id = NEW.id;
END;

CREATE TRIGGER memories_rank_delete AFTER DELETE ON memories
BEGIN
    DELETE FROM memory_rank WHERE id = OLD.id;
END;

CREATE INDEX facts_memory ON facts (memory_id) WHERE memory_id IS NOT NULL;

UPDATE memory_rank SET stale = 1 WHERE id IN (
    SELECT memory_id FROM facts WHERE memory_id IS NOT NULL
    GROUP BY memory_id HAVING max(valid_to IS NULL AND dismissed_at IS NULL) = 0
);

CREATE TRIGGER facts_mark_stale AFTER UPDATE OF valid_to, dismissed_at ON facts
WHEN NEW.memory_id IS NOT NULL
BEGIN
    UPDATE memory_rank SET stale = NOT EXISTS (
        SELECT 1 FROM facts
        WHERE memory_id = NEW.memory_id AND valid_to IS NULL AND dismissed_at IS NULL
    ) WHERE id = NEW.memory_id;
END;

CREATE TRIGGER facts_mark_stale_insert AFTER INSERT ON facts
WHEN NEW.memory_id IS NOT NULL
BEGIN
    UPDATE memory_rank SET stale = NOT EXISTS (
        SELECT 1 FROM facts
        WHERE memory_id = NEW.memory_id AND valid_to IS NULL AND dismissed_at IS NULL
    ) WHERE id = NEW.memory_id;
END;

-- Sentence vectors of the optional semantic extra, one per memory, tagged with the model that made
-- them and the memory's updated_at then (a replaced work-state list is embedded again). ``seq``
-- grows with every write, so a process catches up on other processes' vectors by reading past it.
CREATE TABLE memory_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL UNIQUE REFERENCES memories (id),
    model TEXT NOT NULL,
    memory_updated_at INTEGER NOT NULL,
    vector BLOB NOT NULL
);

-- Which process embeds for a model right now, so that several agents do not all do the same work.
CREATE TABLE embedding_lease (
    model TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
