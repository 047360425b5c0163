-- The team hub's tokens and the bookkeeping of sync between stores.

-- Bearer tokens of the hub: only a SHA-256 hash of each is kept. projects NULL means all.
CREATE TABLE hub_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    scope TEXT NOT NULL,
    projects TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

-- This store's global identity: the origin of the changes made here.
CREATE TABLE sync_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL
);
INSERT INTO sync_identity (id, store_id) VALUES (1, lower(hex(randomblob(16))));

-- While 1 (only ever inside the transaction that applies remote changes) the triggers below
-- stay silent: the applying code writes the change log itself.
CREATE TABLE sync_control (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    quiet INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sync_control (id, quiet) VALUES (1, 0);

-- The change log: one row per syncable item, holding its latest version. seq grows with every
-- change, so "everything changed since cursor N" is a range scan. (changed_at, origin) is the
-- version that last-writer-wins compares; remote = 1 when the version came from the hub.
CREATE TABLE sync_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    changed_at INTEGER NOT NULL,
    origin TEXT NOT NULL,
    remote INTEGER NOT NULL DEFAULT 0,
    UNIQUE (kind, key)
);

-- A memory uid merged into another one (two stores saved the same memory or list).
CREATE TABLE sync_aliases (
    uid TEXT PRIMARY KEY,
    canonical TEXT NOT NULL
);

-- References (by uid) that arrived before the item they name; resolved when it arrives.
CREATE TABLE sync_pending (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    field TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (kind, key, field, target)
);
CREATE INDEX sync_pending_target ON sync_pending (target);

-- Where this store stands with each hub (and token): both cursors move only after a page is
-- applied, in the same transaction.
CREATE TABLE sync_peers (
    hub_id TEXT NOT NULL,
    token_id INTEGER NOT NULL,
    push_cursor INTEGER NOT NULL DEFAULT 0,
    pull_cursor INTEGER NOT NULL DEFAULT 0,
    last_sync_at INTEGER,
    PRIMARY KEY (hub_id, token_id)
);

-- The hub `aletheia sync` uses when none is named.
CREATE TABLE sync_remote (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL,
    token TEXT NOT NULL,
    ca_file TEXT
);

CREATE TRIGGER sync_memories_insert AFTER INSERT ON memories
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'memory', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'memory' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_memories_update AFTER UPDATE ON memories
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'memory', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'memory' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_facts_insert AFTER INSERT ON facts
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'fact', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'fact' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_facts_update AFTER UPDATE ON facts
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'fact', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'fact' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_rules_insert AFTER INSERT ON rules
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'rule', NEW.id,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'rule' AND key = NEW.id), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_rules_update AFTER UPDATE ON rules
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'rule', NEW.id,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'rule' AND key = NEW.id), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_episodes_insert AFTER INSERT ON episodes
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'episode', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'episode' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_episodes_update AFTER UPDATE ON episodes
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'episode', NEW.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'episode' AND key = NEW.uid), 0)),
        store_id, 0
    FROM sync_identity;
END;

CREATE TRIGGER sync_episode_requests_insert AFTER INSERT ON episode_requests
WHEN (SELECT quiet FROM sync_control) = 0
BEGIN
    INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
    SELECT 'episode', e.uid,
        max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),
            coalesce((SELECT changed_at + 1 FROM sync_log
                      WHERE kind = 'episode' AND key = e.uid), 0)),
        i.store_id, 0
    FROM episodes e, sync_identity i WHERE e.id = NEW.episode_id;
END;

-- Items written before this step become changes too, so a first sync carries them.
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'memory', uid, max(updated_at, coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM memories ORDER BY id;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'fact', uid, max(recorded_at, coalesce(valid_to, 0), coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM facts ORDER BY id;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'rule', id, updated_at, (SELECT store_id FROM sync_identity)
    FROM rules ORDER BY added_at, id;
INSERT INTO sync_log (kind, key, changed_at, origin)
    SELECT 'episode', uid, max(started_at, coalesce(ended_at, 0), coalesce(dismissed_at, 0)),
        (SELECT store_id FROM sync_identity)
    FROM episodes ORDER BY id;
