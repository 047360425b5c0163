-- As SQLite's migration 0016: which token syncs each store. The first token to sync a store
-- holds it until that token is revoked, so that no other token can push versions naming that
-- store as their origin (which its pulls leave out).
CREATE TABLE sync_store_tokens (
    store_id text COLLATE "C" PRIMARY KEY,
    token_id bigint NOT NULL,
    bound_at bigint NOT NULL
);
