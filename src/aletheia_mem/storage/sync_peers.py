"""Where a store stands with each hub (and token): its push and pull cursors, in ``sync_peers``.

Both cursors only move after a page is applied: the pull cursor in the page's own transaction.
"""

from __future__ import annotations

from aletheia_mem.storage.sync_dialect import SyncConn


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
