-- The repositories the store's hosts work in (the session hook, `aletheia connect`/`install`, the
-- stdio server started inside a git work tree): the Rules page's Write to tools offers their
-- instruction files. ``path`` is the work tree's top folder as recorded (resolved, absolute); a
-- reader keeps only those that still are directories.
CREATE TABLE repositories (
    path TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
);

CREATE INDEX repositories_last_seen ON repositories (last_seen_at);
