"""The change log of the SQLite store: pages of changes out, records of other stores in.

Reading and applying records (``sync_export``, ``sync_apply``) are imported when first used:
a server that never syncs does not load them on its start path.
"""

from __future__ import annotations

from typing import Any

from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import index_memory
from aletheia_mem.storage.sync_records import ApplyStats, ExportPage


class SqliteSync(SqliteDatabase):
    """The change log other stores pull from and push to."""

    def sync_store_id(self) -> str:
        """This store's global id: the origin of the changes made here."""
        from aletheia_mem.storage.sync_export import store_id

        return store_id(self._conn)

    def export_changes(
        self,
        *,
        after: int,
        limit: int,
        max_bytes: int,
        local_only: bool,
        exclude_origin: str | None,
        projects: tuple[str, ...] | None,
    ) -> ExportPage:
        """One page of the change log after ``after``, read in one snapshot."""
        from aletheia_mem.storage.sync_export import export_page

        conn = self._conn
        conn.execute("BEGIN")
        try:
            return export_page(
                conn,
                after=after,
                limit=limit,
                max_bytes=max_bytes,
                local_only=local_only,
                exclude_origin=exclude_origin,
                projects=projects,
            )
        finally:
            conn.execute("COMMIT")

    def apply_changes(
        self,
        records: list[dict[str, Any]],
        *,
        projects: tuple[str, ...] | None,
        now: int,
        pull_cursor: tuple[str, int, int] | None = None,
        author: str | None = None,
    ) -> ApplyStats:
        """Apply remote records in one transaction, with the pull cursor when one is given.

        Args:
            records: checked sync records, in log order.
            projects: the projects the sender may write (None: all).
            now: the time new local versions start from.
            pull_cursor: ``(hub_id, token_id, cursor)`` to store with the page.
            author: the sender's name, recorded as the author of what it makes (a hub token).
        """
        from aletheia_mem.storage.sync_apply import apply_records
        from aletheia_mem.storage.sync_export import store_id

        with self._write() as conn:
            stats = apply_records(
                conn,
                records,
                self_id=store_id(conn),
                now=now,
                projects=projects,
                index_memory=index_memory,
                author=author,
            )
            if pull_cursor is not None:
                hub_id, token_id, cursor = pull_cursor
                conn.execute(
                    "INSERT INTO sync_peers (hub_id, token_id, pull_cursor, last_sync_at)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (hub_id, token_id) DO UPDATE SET"
                    " pull_cursor = excluded.pull_cursor, last_sync_at = excluded.last_sync_at",
                    (hub_id, token_id, cursor, now),
                )
            return stats

    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]:
        """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
        row = self._conn.execute(
            "SELECT push_cursor, pull_cursor FROM sync_peers WHERE hub_id = ? AND token_id = ?",
            (hub_id, token_id),
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sync_peers (hub_id, token_id, push_cursor, last_sync_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (hub_id, token_id) DO UPDATE SET"
                " push_cursor = max(push_cursor, excluded.push_cursor),"
                " last_sync_at = excluded.last_sync_at",
                (hub_id, token_id, cursor, now),
            )
