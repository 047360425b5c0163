-- ``stale_from`` replaces the ``stale`` flag, as SQLite's migration 0015 does: the instant from
-- which every fact the memory stated has ended (or been dismissed), NULL while one of them is
-- open, 0 when all are dismissed. A fact written for a later time closes the current one at
-- that time: the memory stays current until then. Search compares it with now.
ALTER TABLE memory_rank ADD COLUMN stale_from bigint;

UPDATE memory_rank SET stale_from = s.stale_from FROM (
    SELECT memory_id, CASE WHEN count(*) FILTER (WHERE dismissed_at IS NULL) = 0 THEN 0
        WHEN count(*) FILTER (WHERE dismissed_at IS NULL AND valid_to IS NULL) > 0 THEN NULL
        ELSE max(valid_to) FILTER (WHERE dismissed_at IS NULL) END AS stale_from
    FROM facts WHERE memory_id IS NOT NULL GROUP BY memory_id
) AS s WHERE memory_rank.id = s.memory_id;

CREATE OR REPLACE FUNCTION facts_mark_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.memory_id IS NOT NULL THEN
        UPDATE memory_rank SET stale_from = (
            SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) > count(valid_to) THEN NULL
                        ELSE max(valid_to) END
            FROM facts WHERE memory_id = NEW.memory_id AND dismissed_at IS NULL
        ) WHERE id = NEW.memory_id;
    END IF;
    RETURN NULL;
END
$$;

ALTER TABLE memory_rank DROP CONSTRAINT memory_rank_pkey,
    ADD PRIMARY KEY (id) INCLUDE (stale_from);
ALTER TABLE memory_rank DROP COLUMN stale;
