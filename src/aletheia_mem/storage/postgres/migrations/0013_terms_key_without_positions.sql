-- A btree index row holds at most 2704 bytes, and SQLite's FTS5 takes what did not fit here:
-- * A term's positions in one column of one row are as many as its occurrences: a word said some
--   670 times (a to-do list of 700 {"task", "done": false} items, a log) made a key row of 0004's
--   (term, id, col) INCLUDE (positions) too long. The key keeps the terms alone; positions are
--   read from the table (postings.py holds a term's rows once read).
-- * A token of more than 1000 bytes (a hex dump, CJK text without punctuation) is now kept as
--   its first 200 characters, "#" and the SHA-256 of it (full_text.stored_token); the long
--   tokens earlier saves could store (the ones that compressed well) are rewritten so.
UPDATE memory_terms
    SET term = left(term, 200) || '#' || encode(sha256(convert_to(term, 'UTF8')), 'hex')
    WHERE octet_length(term) > 1000;
UPDATE fact_terms
    SET term = left(term, 200) || '#' || encode(sha256(convert_to(term, 'UTF8')), 'hex')
    WHERE octet_length(term) > 1000;
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey,
    ADD PRIMARY KEY (term, memory_id, col);
ALTER TABLE fact_terms DROP CONSTRAINT fact_terms_pkey,
    ADD PRIMARY KEY (term, fact_id, col);
