"""The change log of the SQLite store: pages of changes out, records of other stores in.

The engine is shared with PostgreSQL (``storage.sync_apply``, ``storage.sync_export``); a
``sqlite3.Connection`` is its ``SyncConn`` as it is, and the hooks below are its dialect. The
engine is imported when first used: a server that never syncs does not load it on its start path.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import NewMemory
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import index_memory
from aletheia_mem.storage.sync_dialect import SyncDialect
from aletheia_mem.storage.sync_peers import set_push_cursor, sync_cursors
from aletheia_mem.storage.sync_records import ApplyStats, ExportPage

# REPLACE deletes the item's row and inserts a new one: a new seq from AUTOINCREMENT.
LOG_VERSION = (
    "INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote) VALUES (?, ?, ?, ?, ?)"
)


def _set_quiet(conn: sqlite3.Connection, quiet: bool) -> None:
    """The triggers of 0005_hub_sync.sql stay silent while ``sync_control.quiet`` is 1."""
    conn.execute("UPDATE sync_control SET quiet = ?", (int(quiet),))


def _reserve_memory_ids(conn: sqlite3.Connection, count: int) -> list[int]:
    """The next ``count`` ids AUTOINCREMENT would give (one writer: nobody takes them first)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])
    first = max(int(row[0]) if row else 0, top) + 1
    return list(range(first, first + count))


def _index_new_memories(conn: sqlite3.Connection, rows: list[tuple[int, NewMemory]]) -> None:
    for memory_id, new in rows:
        index_memory(conn, memory_id, new)


def _index_fact(
    conn: sqlite3.Connection, fact_id: int, subject: str, predicate: str, obj: str, known: bool
) -> None:
    if known:
        conn.execute("DELETE FROM fact_fts WHERE rowid = ?", (fact_id,))
    full_text.index_fact(conn, fact_id, subject, predicate, obj, fresh=not known)


SQLITE_DIALECT = SyncDialect(
    log_version=LOG_VERSION,
    set_quiet=_set_quiet,
    reserve_memory_ids=_reserve_memory_ids,
    index_memory=index_memory,
    index_new_memories=_index_new_memories,
    index_fact=_index_fact,
)


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
        from aletheia_mem.storage.sync_apply import apply_page

        with self._write() as conn:
            return apply_page(
                conn,
                records,
                dialect=SQLITE_DIALECT,
                projects=projects,
                now=now,
                pull_cursor=pull_cursor,
                author=author,
            )

    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]:
        """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
        return sync_cursors(self._conn, hub_id, token_id)

    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None:
        with self._write() as conn:
            set_push_cursor(conn, hub_id, token_id, cursor, now)
