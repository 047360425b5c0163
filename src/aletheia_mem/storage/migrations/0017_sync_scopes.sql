-- The projects a hub named for a token the last time this store synced with it (by the hub's URL
-- and the token's SHA-256, both the user's own choice): a token's projects never change, so a
-- hub that later names more (or every project: NULL) is refused before anything is pushed to it.
CREATE TABLE sync_scopes (
    hub_url TEXT NOT NULL,
    token_digest TEXT NOT NULL,
    projects TEXT,
    PRIMARY KEY (hub_url, token_digest)
);
