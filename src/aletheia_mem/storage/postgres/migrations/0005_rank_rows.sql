-- Relevance search reads one narrow row per matching memory (memory_search.py): what ranking
-- and the search filters read of a memory, copied into memory_rank beside its stale flag, so
-- that scoring a thousand matches no longer fetches a thousand wide memories rows and a thousand
-- memory_docs rows. Triggers keep the copy, whoever writes.
ALTER TABLE memory_rank
    ADD COLUMN tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN created_at bigint NOT NULL DEFAULT 0,
    ADD COLUMN pinned smallint NOT NULL DEFAULT 0,
    ADD COLUMN dismissed_at bigint,
    ADD COLUMN project text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN type text NOT NULL DEFAULT '',
    ADD COLUMN kind text NOT NULL DEFAULT '';

UPDATE memory_rank r SET tokens = coalesce(d.tokens, 0), created_at = m.created_at,
    pinned = m.pinned, dismissed_at = m.dismissed_at, project = m.project, type = m.type,
    kind = m.kind
FROM memories m LEFT JOIN memory_docs d ON d.memory_id = m.id
WHERE m.id = r.id;

-- A memory and its token count are inserted by one statement, in either order of their
-- triggers: the first to fire writes the count, the second finds it written.
CREATE OR REPLACE FUNCTION memory_rank_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_rank (id, tokens, created_at, pinned, dismissed_at, project, type, kind)
    VALUES (NEW.id, coalesce((SELECT tokens FROM memory_docs WHERE memory_id = NEW.id), 0),
        NEW.created_at, NEW.pinned, NEW.dismissed_at, NEW.project, NEW.type, NEW.kind);
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_rank_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_rank SET created_at = NEW.created_at, pinned = NEW.pinned,
        dismissed_at = NEW.dismissed_at, project = NEW.project, type = NEW.type, kind = NEW.kind
    WHERE id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER memories_rank_update AFTER UPDATE OF created_at, pinned, dismissed_at, project,
    type, kind ON memories
    FOR EACH ROW WHEN ((OLD.created_at, OLD.pinned, OLD.dismissed_at, OLD.project, OLD.type,
        OLD.kind) IS DISTINCT FROM (NEW.created_at, NEW.pinned, NEW.dismissed_at, NEW.project,
        NEW.type, NEW.kind)) EXECUTE FUNCTION memory_rank_update();

CREATE FUNCTION memory_rank_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_rank SET tokens = NEW.tokens WHERE id = NEW.memory_id AND tokens <> NEW.tokens;
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_docs_rank AFTER INSERT OR UPDATE OF tokens ON memory_docs
    FOR EACH ROW EXECUTE FUNCTION memory_rank_tokens();

-- Statistics for the new columns now, not at the next autovacuum: without them the planner
-- takes the filters for nearly empty and loops over the whole table once per match.
ANALYZE memory_rank;
