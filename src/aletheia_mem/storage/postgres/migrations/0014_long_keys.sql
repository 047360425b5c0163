-- A btree index row holds at most 2704 bytes (after compression), and SQLite's indexes take keys
-- of any length: a fact whose subject and predicate (up to 2,000 characters each) passed about
-- 2,700 bytes of text that does not compress, or a file path of 900 CJK characters (a path may
-- hold 1,000 characters, 4,000 bytes of UTF-8), saved on SQLite and failed here with the
-- database's error. The keys now indexed fit whatever the value's length:
-- * Keys looked up by equality alone (a fact's subject, a file's path) are indexed by hash:
--   the queries stay as they were.
-- * Keys that must be unique (one open fact per subject and predicate, a path once per memory)
--   are indexed by the SHA-256 of the value (key_digest).
-- * A reversed path is searched by range (a path's suffix): its first 500 characters (2,000
--   bytes at most) are indexed, and the search compares the rest on the row (memories.py).

-- Declared IMMUTABLE for the index: convert_to is STABLE only because of conversions between
-- encodings, and a database's encoding never changes.
CREATE FUNCTION key_digest(value text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
    AS $$ SELECT sha256(convert_to(value, 'UTF8')) $$;

DROP INDEX facts_current;
CREATE UNIQUE INDEX facts_current
    ON facts (project, key_digest(subject_key), key_digest(predicate_key))
    WHERE valid_to IS NULL;
DROP INDEX facts_subject;
CREATE INDEX facts_subject ON facts USING hash (subject_key);

-- The writers insert with ON CONFLICT DO NOTHING, which any unique index serves.
ALTER TABLE memory_files DROP CONSTRAINT memory_files_pkey;
CREATE UNIQUE INDEX memory_files_key ON memory_files (memory_id, key_digest(path));
DROP INDEX memory_files_path;
CREATE INDEX memory_files_path ON memory_files USING hash (path);
DROP INDEX memory_files_path_reversed;
CREATE INDEX memory_files_path_reversed ON memory_files (left(path_reversed, 500));
