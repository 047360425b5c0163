-- Speed without a change of behaviour (bench/pg_store_bench.py measures it).

-- The full-text totals bm25 reads: one row per index and slot, summed when read. A writer adds to
-- the slot of its connection (pg_backend_pid() % 32), so concurrent saves rarely wait on one row
-- lock until the other commits; the sums stay exact.
ALTER TABLE full_text_totals RENAME TO full_text_counts;
ALTER TABLE full_text_counts ADD COLUMN slot smallint NOT NULL DEFAULT 0;
ALTER TABLE full_text_counts DROP CONSTRAINT full_text_totals_pkey;
ALTER TABLE full_text_counts ADD PRIMARY KEY (index_name, slot);
INSERT INTO full_text_counts (index_name, slot, docs, tokens)
SELECT index_name, s, 0, 0 FROM full_text_counts, generate_series(1, 31) AS s;
CREATE VIEW full_text_totals AS
SELECT index_name, sum(docs)::bigint AS docs, sum(tokens)::bigint AS tokens
FROM full_text_counts GROUP BY index_name;

-- Search reads from indexes alone (index-only scans) once the visibility map is set: the
-- positions of a term's rows, a row's token count and stale flag.
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey,
    ADD PRIMARY KEY (term, memory_id, col) INCLUDE (positions);
ALTER TABLE fact_terms DROP CONSTRAINT fact_terms_pkey,
    ADD PRIMARY KEY (term, fact_id, col) INCLUDE (positions);
ALTER TABLE memory_docs DROP CONSTRAINT memory_docs_pkey,
    ADD PRIMARY KEY (memory_id) INCLUDE (tokens);
ALTER TABLE memory_rank DROP CONSTRAINT memory_rank_pkey,
    ADD PRIMARY KEY (id) INCLUDE (stale);
-- The term tables only grow between vacuums: vacuum (and so mark visible) after fewer inserts
-- than the default fifth of the table, where autovacuum runs.
ALTER TABLE memory_terms SET (autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE fact_terms SET (autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02);

-- One rate-limit hit in one statement (one round trip, its own transaction): what
-- rate_windows.py did in five. The hits of one key take turns under an advisory lock.
CREATE FUNCTION rate_hit(hit_key text, hit_count integer, hit_limit integer, window_ms bigint,
    now_ms bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    held bigint;
    over bigint;
    batch record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(hit_key, 0));
    DELETE FROM rate_hits WHERE key = hit_key AND expires_at <= now_ms;
    SELECT coalesce(sum(n), 0) INTO held FROM rate_hits WHERE key = hit_key;
    over := held + hit_count - hit_limit;
    IF over <= 0 THEN
        INSERT INTO rate_hits (key, expires_at, n) VALUES (hit_key, now_ms + window_ms, hit_count);
        RETURN NULL;
    END IF;
    -- The wait until enough of the oldest batches have left the window.
    held := 0;
    FOR batch IN SELECT expires_at, n FROM rate_hits WHERE key = hit_key ORDER BY expires_at, id
    LOOP
        held := held + batch.n;
        IF held >= over THEN
            RETURN greatest(1, batch.expires_at - now_ms);
        END IF;
    END LOOP;
    RETURN window_ms;
END
$$;
