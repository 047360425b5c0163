-- MCP sessions of the HTTP transport, shared by every worker process of a server: a session
-- begun on one worker is used and ended on any other. Only the SHA-256 of a session id is kept.
-- ``owner`` is who may use the session ('' on the local server, the token's id on a hub).
CREATE TABLE mcp_sessions (
    id_hash TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    protocol_version TEXT NOT NULL,
    client_name TEXT,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX mcp_sessions_last_used ON mcp_sessions (last_used_at);
