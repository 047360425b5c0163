-- A save looks its dedupe key up before inserting (memories.py), by project and key. The unique
-- index led with the project, and so did memories_project_created (project, created_at), at
-- about the same estimated cost: when the statistics were older than a project's memories (a new
-- project, up to a tenth of the table saved since the last ANALYZE) and the heap was no longer
-- all visible, a custom plan took the project index and read every memory of the project to find
-- one key. Which plan ran depended on the plan cache (a prepared statement's generic plan took
-- the key's index; custom plans, such as a connection's first ones, often did not). Measured at
-- 10,000 memories with 2,000 of them in a project the statistics had not seen, a connection
-- running custom plans: 1.27 ms of backend CPU per save, against 0.77 ms after an ANALYZE. The key
-- now leads the index, and the lookup compares the project under another collation
-- (memories.KEY_MATCH), which no index on the project can serve, so the key's index is the only
-- one that fits, whatever the statistics and the plan cache. ON CONFLICT (project, dedupe_key)
-- infers the index from its columns, in any order.
CREATE UNIQUE INDEX memories_dedupe_key ON memories (dedupe_key, project)
    WHERE dedupe_key IS NOT NULL;
DROP INDEX memories_dedupe;
ALTER INDEX memories_dedupe_key RENAME TO memories_dedupe;
