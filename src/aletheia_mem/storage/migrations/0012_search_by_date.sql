-- Date-ordered searches (the search tool's order=date_desc/date_asc, the web UI's "Newest
-- first"): a query matching thousands of memories walks these newest (or oldest) first, checks
-- each against the full-text matches and stops at the end of the page, instead of sorting them
-- all. With a type filter, the walk reads only that type's memories.
CREATE INDEX memory_rank_dated ON memory_rank (created_at);
CREATE INDEX memory_rank_typed ON memory_rank (type, created_at);
