-- A save indexes a memory in one statement with a few dozen memory_terms rows (full_text.py),
-- and the foreign key on them ran a check per row (a lookup of the memory, locked FOR KEY SHARE):
-- EXPLAIN ANALYZE of a save at 10,000 memories gave those checks 0.69 ms for 29 rows, more than
-- the rest of the insert. The store writes index rows only for the row it has just inserted or
-- updated, in the same statement or transaction, so the checks cannot fail; what the keys did
-- besides, delete a row's index entries with the row, a trigger does now.
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_memory_id_fkey;
ALTER TABLE memory_docs DROP CONSTRAINT memory_docs_memory_id_fkey;
ALTER TABLE fact_terms DROP CONSTRAINT fact_terms_fact_id_fkey;
ALTER TABLE fact_docs DROP CONSTRAINT fact_docs_fact_id_fkey;

-- Arguments: the terms table, the docs table, their column naming the row. The tables are named
-- in the deleted row's own schema, whatever the deleting connection's search_path.
CREATE FUNCTION index_rows_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I.%I WHERE %I = $1', TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[2])
        USING OLD.id;
    EXECUTE format('DELETE FROM %I.%I WHERE %I = $1', TG_TABLE_SCHEMA, TG_ARGV[1], TG_ARGV[2])
        USING OLD.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER memories_index_delete AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION index_rows_delete('memory_terms', 'memory_docs', 'memory_id');
CREATE TRIGGER facts_index_delete AFTER DELETE ON facts
    FOR EACH ROW EXECUTE FUNCTION index_rows_delete('fact_terms', 'fact_docs', 'fact_id');
