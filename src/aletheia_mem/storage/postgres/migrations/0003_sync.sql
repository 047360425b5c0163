-- Sync between stores, kept as SQLite's 0005_hub_sync.sql keeps it (storage/sync_apply.py):
-- this store's id, the change log with one version per item, merged memory uids, references
-- waiting for their target, and where this store stands with each hub.
--
-- Two things differ because several processes write at once:
-- * seq. A number drawn while writing would not tell a puller what it may skip: a writer that
--   drew 10 may commit after another drew and committed 11, and a puller that took 11 would
--   never see 10. So a changed row has no seq (NULL) until sync_number_changes() numbers the
--   committed changes, above every number given before; numbering takes turns (an advisory
--   lock held until its transaction commits). A puller numbers, then reads: what it sees is
--   always the whole log up to its highest seq, and a change committed later gets a higher one.
-- * Applying. A page of another store's changes reads versions and then writes: it holds the
--   sync lock exclusive for its whole transaction, and every other write of a synced item
--   takes it shared (a statement trigger, before the statement touches a row), so nothing
--   changes an item between the page's read and its write.
-- The triggers stay silent in the transaction that applies a page (aletheia.sync_quiet = 'on',
-- set for that transaction only): sync_apply writes the log itself.

-- This store's global identity: the origin of the changes made here.
CREATE TABLE sync_identity (
    id smallint PRIMARY KEY CHECK (id = 1),
    store_id text NOT NULL
);
INSERT INTO sync_identity (id, store_id) VALUES (1, replace(gen_random_uuid()::text, '-', ''));

-- The change log: one row per syncable item, holding its latest version. (changed_at, origin)
-- is the version last-writer-wins compares; remote = 1 when it came from another store.
CREATE SEQUENCE sync_log_seq;
CREATE TABLE sync_log (
    kind text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    changed_at bigint NOT NULL,
    origin text NOT NULL,
    remote smallint NOT NULL DEFAULT 0,
    seq bigint UNIQUE,
    PRIMARY KEY (kind, key)
);
CREATE INDEX sync_log_unnumbered ON sync_log (kind, key) WHERE seq IS NULL;

-- A memory uid merged into another one (two stores saved the same memory or list).
CREATE TABLE sync_aliases (
    uid text PRIMARY KEY,
    canonical text NOT NULL
);

-- References (by uid) that arrived before the item they name; resolved when it arrives.
CREATE TABLE sync_pending (
    kind text NOT NULL,
    key text NOT NULL,
    field text NOT NULL,
    target text NOT NULL,
    PRIMARY KEY (kind, key, field, target)
);
CREATE INDEX sync_pending_target ON sync_pending (target);

-- Where this store stands with each hub (and token): both cursors move only after a page is
-- applied, in the same transaction.
CREATE TABLE sync_peers (
    hub_id text NOT NULL,
    token_id bigint NOT NULL,
    push_cursor bigint NOT NULL DEFAULT 0,
    pull_cursor bigint NOT NULL DEFAULT 0,
    last_sync_at bigint,
    PRIMARY KEY (hub_id, token_id)
);

-- A new local version of an item: now, or just after its last version if that is later.
CREATE FUNCTION sync_log_version(item_kind text, item_key text) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT item_kind, item_key, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
        store_id, 0
    FROM sync_identity
    ON CONFLICT (kind, key) DO UPDATE SET
        changed_at = greatest(excluded.changed_at, sync_log.changed_at + 1),
        origin = excluded.origin, remote = 0, seq = NULL;
$$;

-- Row trigger: log the item a row belongs to (TG_ARGV[0] is its kind).
CREATE FUNCTION sync_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('aletheia.sync_quiet', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'episode_requests' THEN
        PERFORM sync_log_version('episode', uid) FROM episodes WHERE id = NEW.episode_id;
    ELSIF TG_TABLE_NAME = 'rules' THEN
        PERFORM sync_log_version(TG_ARGV[0], NEW.id);
    ELSE
        PERFORM sync_log_version(TG_ARGV[0], NEW.uid);
    END IF;
    RETURN NULL;
END
$$;

-- Statement trigger: a write of synced items holds the sync lock shared (see above). A
-- two-key advisory lock: apart from every one-key lock.
CREATE FUNCTION sync_share_writes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('aletheia.sync_quiet', true) IS DISTINCT FROM 'on' THEN
        PERFORM pg_advisory_xact_lock_shared(1937337955, 1);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_sync_share BEFORE INSERT OR UPDATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION sync_share_writes();
CREATE TRIGGER facts_sync_share BEFORE INSERT OR UPDATE ON facts
    FOR EACH STATEMENT EXECUTE FUNCTION sync_share_writes();
CREATE TRIGGER rules_sync_share BEFORE INSERT OR UPDATE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION sync_share_writes();
CREATE TRIGGER episodes_sync_share BEFORE INSERT OR UPDATE ON episodes
    FOR EACH STATEMENT EXECUTE FUNCTION sync_share_writes();
CREATE TRIGGER episode_requests_sync_share BEFORE INSERT ON episode_requests
    FOR EACH STATEMENT EXECUTE FUNCTION sync_share_writes();

CREATE TRIGGER memories_sync_log AFTER INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION sync_log_row('memory');
CREATE TRIGGER facts_sync_log AFTER INSERT OR UPDATE ON facts
    FOR EACH ROW EXECUTE FUNCTION sync_log_row('fact');
CREATE TRIGGER rules_sync_log AFTER INSERT OR UPDATE ON rules
    FOR EACH ROW EXECUTE FUNCTION sync_log_row('rule');
CREATE TRIGGER episodes_sync_log AFTER INSERT OR UPDATE ON episodes
    FOR EACH ROW EXECUTE FUNCTION sync_log_row('episode');
CREATE TRIGGER episode_requests_sync_log AFTER INSERT ON episode_requests
    FOR EACH ROW EXECUTE FUNCTION sync_log_row('episode');

-- Number the committed changes not numbered yet, after every number given before; returns
-- how many. A change that a running transaction is changing again waits for a later turn.
-- Call it in a transaction of its own: the turn lasts until that transaction commits.
CREATE FUNCTION sync_number_changes() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    numbered bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1937337955, 2);
    UPDATE sync_log s SET seq = n.seq
    FROM (
        SELECT o.kind, o.key, nextval('sync_log_seq') AS seq
        FROM (
            SELECT kind, key FROM sync_log WHERE seq IS NULL
            ORDER BY changed_at, kind, key
            FOR UPDATE SKIP LOCKED
        ) o
    ) n
    WHERE s.kind = n.kind AND s.key = n.key;
    GET DIAGNOSTICS numbered = ROW_COUNT;
    RETURN numbered;
END
$$;

-- Items written before this step become changes too, so a first sync carries them.
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'memory', uid, greatest(updated_at, coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM memories;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'fact', uid, greatest(recorded_at, coalesce(valid_to, 0), coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM facts;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'rule', id, updated_at, (SELECT store_id FROM sync_identity) FROM rules;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'episode', uid, greatest(started_at, coalesce(ended_at, 0), coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM episodes;
