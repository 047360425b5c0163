-- A hub's record of which token syncs each store (by the store id a sync names): the first token
-- to sync a store holds it until that token is revoked. A pull leaves out the versions a store
-- made itself, by their origin; without this, any sync token could push versions naming another
-- store as their origin, and that store would never pull the change.
CREATE TABLE sync_store_tokens (
    store_id TEXT PRIMARY KEY,
    token_id INTEGER NOT NULL,
    bound_at INTEGER NOT NULL
);
