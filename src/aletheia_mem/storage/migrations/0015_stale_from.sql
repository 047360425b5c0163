-- ``stale_from`` replaces the ``stale`` flag: the instant from which every fact the memory stated
-- has ended (or been dismissed), NULL while one of them is open. A fact written for a later time
-- closes the current one at that time (the facts' timeline): the memory it came from stays
-- current until then, where the flag marked it stale at once. Search compares it with now.
-- 0: all of its facts are dismissed.
ALTER TABLE memory_rank ADD COLUMN stale_from INTEGER;

UPDATE memory_rank SET stale_from = (
    SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) > count(valid_to) THEN NULL
                ELSE max(valid_to) END
    FROM facts WHERE memory_id = memory_rank.id AND dismissed_at IS NULL
) WHERE id IN (SELECT memory_id FROM facts WHERE memory_id IS NOT NULL);

DROP TRIGGER facts_mark_stale;
DROP TRIGGER facts_mark_stale_insert;

ALTER TABLE memory_rank DROP COLUMN stale;

CREATE TRIGGER facts_mark_stale AFTER UPDATE OF valid_to, dismissed_at ON facts
WHEN NEW.memory_id IS NOT NULL
BEGIN
    UPDATE memory_rank SET stale_from = (
        SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) > count(valid_to) THEN NULL
                    ELSE max(valid_to) END
        FROM facts WHERE memory_id = NEW.memory_id AND dismissed_at IS NULL
    ) WHERE id = NEW.memory_id;
END;

CREATE TRIGGER facts_mark_stale_insert AFTER INSERT ON facts
WHEN NEW.memory_id IS NOT NULL
BEGIN
    UPDATE memory_rank SET stale_from = (
        SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) > count(valid_to) THEN NULL
                    ELSE max(valid_to) END
        FROM facts WHERE memory_id = NEW.memory_id AND dismissed_at IS NULL
    ) WHERE id = NEW.memory_id;
END;
