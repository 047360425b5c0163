-- A change feed for the postings each process keeps in memory (search_cache.py): every row of
-- memory_rank and memory_docs carries the id of the transaction that last wrote it, and every
-- row deleted from either leaves a tombstone with that of the transaction that deleted it. A
-- reader that last refreshed in snapshot S reads back the rows and tombstones with
-- changed >= xmin(S): every transaction S did not see has an id at least that high, so no
-- commit is missed, whatever order they commit in (a row read twice is applied twice,
-- harmlessly). A memory's terms change only with its memory_docs row (full_text.py deletes and
-- inserts it again): that row says which memories to read the terms of again.
ALTER TABLE memory_rank ADD COLUMN changed xid8 NOT NULL DEFAULT '0';
ALTER TABLE memory_docs ADD COLUMN changed xid8 NOT NULL DEFAULT '0';
-- Existing rows: written by "transaction 0", before any reader's horizon (a reader starts with
-- a full load).
ALTER TABLE memory_rank ALTER COLUMN changed DROP DEFAULT;
ALTER TABLE memory_docs ALTER COLUMN changed DROP DEFAULT;
CREATE INDEX memory_rank_changed ON memory_rank (changed);
CREATE INDEX memory_docs_changed ON memory_docs (changed);

CREATE TABLE memory_tombstones (
    memory_id bigint NOT NULL,
    changed xid8 NOT NULL,
    deleted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_tombstones_changed ON memory_tombstones (changed);
CREATE INDEX memory_tombstones_deleted ON memory_tombstones (deleted_at);

-- One row: tombstones up to ``purged`` are gone (purged after a day, or all of them when a
-- table of the feed is truncated): a reader whose horizon is not above it loads afresh.
CREATE TABLE memory_feed (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    purged xid8 NOT NULL
);
INSERT INTO memory_feed (purged) VALUES ('0');

CREATE FUNCTION memory_feed_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.changed := pg_current_xact_id();
    RETURN NEW;
END
$$;
CREATE TRIGGER memory_rank_stamp BEFORE INSERT OR UPDATE ON memory_rank
    FOR EACH ROW EXECUTE FUNCTION memory_feed_stamp();
CREATE TRIGGER memory_docs_stamp BEFORE INSERT OR UPDATE ON memory_docs
    FOR EACH ROW EXECUTE FUNCTION memory_feed_stamp();

-- Argument: the deleted row's column naming the memory.
CREATE FUNCTION memory_feed_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I.memory_tombstones (memory_id, changed) VALUES ($1.%I, $2)',
        TG_TABLE_SCHEMA, TG_ARGV[0]) USING OLD, pg_current_xact_id();
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_rank_tombstone AFTER DELETE ON memory_rank
    FOR EACH ROW EXECUTE FUNCTION memory_feed_tombstone('id');
CREATE TRIGGER memory_docs_tombstone AFTER DELETE ON memory_docs
    FOR EACH ROW EXECUTE FUNCTION memory_feed_tombstone('memory_id');

CREATE FUNCTION memory_feed_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('UPDATE %I.memory_feed SET purged = pg_current_xact_id()', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_rank_truncated AFTER TRUNCATE ON memory_rank
    FOR EACH STATEMENT EXECUTE FUNCTION memory_feed_truncated();
CREATE TRIGGER memory_docs_truncated AFTER TRUNCATE ON memory_docs
    FOR EACH STATEMENT EXECUTE FUNCTION memory_feed_truncated();
CREATE TRIGGER memory_terms_truncated AFTER TRUNCATE ON memory_terms
    FOR EACH STATEMENT EXECUTE FUNCTION memory_feed_truncated();
