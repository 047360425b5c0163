-- As SQLite's migration 0017: the projects a hub named for a token when this store last synced
-- with it (JSON list; NULL: every project), so that a hub naming more later is refused.
CREATE TABLE sync_scopes (
    hub_url text NOT NULL,
    token_digest text NOT NULL,
    projects text,
    PRIMARY KEY (hub_url, token_digest)
);
