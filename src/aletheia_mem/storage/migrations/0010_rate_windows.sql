-- Rate-limit hits of the hub, shared by every hub process on this file: one row per counted
-- request (or batch), kept until its window has passed.
CREATE TABLE rate_hits (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    at INTEGER NOT NULL,
    n INTEGER NOT NULL CHECK (n > 0),
    expires_at INTEGER NOT NULL
);
CREATE INDEX rate_hits_by_key ON rate_hits (key, at);
CREATE INDEX rate_hits_by_expiry ON rate_hits (expires_at);
