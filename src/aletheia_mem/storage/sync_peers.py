"""Where a store stands with each hub (and token): its push and pull cursors, in ``sync_peers``,
and the projects the hub named for the token, in ``sync_scopes``.

Both cursors only move after a page is applied: the pull cursor in the page's own transaction.
"""

from __future__ import annotations

import json

from aletheia_mem.storage.sync_dialect import SyncConn

Projects = tuple[str, ...] | None  # a token's projects; None: every project


def sync_cursors(conn: SyncConn, hub_id: str, token_id: int) -> tuple[int, int]:
    """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
    row = conn.execute(
        "SELECT push_cursor, pull_cursor FROM sync_peers WHERE hub_id = ? AND token_id = ?",
        (hub_id, token_id),
    ).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def set_push_cursor(conn: SyncConn, hub_id: str, token_id: int, cursor: int, now: int) -> None:
    """Move the push cursor forward (never back), in the caller's write transaction."""
    conn.execute(
        "INSERT INTO sync_peers (hub_id, token_id, push_cursor, last_sync_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (hub_id, token_id) DO UPDATE SET"
        " push_cursor = CASE WHEN excluded.push_cursor > sync_peers.push_cursor"
        " THEN excluded.push_cursor ELSE sync_peers.push_cursor END,"
        " last_sync_at = excluded.last_sync_at",
        (hub_id, token_id, cursor, now),
    )


def set_pull_cursor(conn: SyncConn, hub_id: str, token_id: int, cursor: int, now: int) -> None:
    """Keep the cursor of the page just pulled, in that page's write transaction."""
    conn.execute(
        "INSERT INTO sync_peers (hub_id, token_id, pull_cursor, last_sync_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (hub_id, token_id) DO UPDATE SET"
        " pull_cursor = excluded.pull_cursor, last_sync_at = excluded.last_sync_at",
        (hub_id, token_id, cursor, now),
    )


def sync_scope(conn: SyncConn, hub_url: str, token_digest: str) -> tuple[bool, Projects]:
    """Whether this store synced with the hub and token before, and the projects it named then
    (None: every project)."""
    row = conn.execute(
        "SELECT projects FROM sync_scopes WHERE hub_url = ? AND token_digest = ?",
        (hub_url, token_digest),
    ).fetchone()
    if row is None:
        return False, None
    return True, None if row[0] is None else tuple(json.loads(row[0]))


def set_sync_scope(conn: SyncConn, hub_url: str, token_digest: str, projects: Projects) -> None:
    """Remember the projects a hub names for a token, in the caller's write transaction."""
    named = None if projects is None else json.dumps(sorted(projects))
    conn.execute(
        "INSERT INTO sync_scopes (hub_url, token_digest, projects) VALUES (?, ?, ?)"
        " ON CONFLICT (hub_url, token_digest) DO UPDATE SET projects = excluded.projects",
        (hub_url, token_digest, named),
    )
