"""The change log of the SQLite store: pages of changes out, records of other stores in.

The engine is shared with PostgreSQL (``storage.sync_apply``, ``storage.sync_export``); a
``sqlite3.Connection`` is its ``SyncConn`` as it is, and ``sync_hooks.py`` holds its dialect. The
engine is imported when first used: a server that never syncs does not load it on its start path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aletheia_mem.storage.sqlite.database import SqliteDatabase

if TYPE_CHECKING:  # the sync engine's types: off the start path of a store that never syncs
    from aletheia_mem.storage.sync_records import ApplyStats, ExportPage


class SqliteSync(SqliteDatabase):
    """The change log other stores pull from and push to."""

    def sync_store_id(self) -> str:
        """This store's global id: the origin of the changes made here."""
        from aletheia_mem.storage.sync_export import store_id

        return store_id(self._conn)

    def sync_item_number(self, kind: str, key: str) -> int | None:
        """The ``#N`` of the item with this global id here, or None (``item_number``)."""
        from aletheia_mem.storage.sync_export import item_number

        return item_number(self._conn, kind, key)

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
        shared_rules: bool = False,
        rewritten: frozenset[int] = frozenset(),
    ) -> ApplyStats:
        """Apply remote records in one transaction, with the pull cursor when one is given.

        Args:
            records: checked sync records, in log order.
            projects: the projects the sender may write (None: all).
            now: the time new local versions start from.
            pull_cursor: ``(hub_id, token_id, cursor)`` to store with the page.
            author: the sender's name, recorded as the author of what it makes (a hub token).
            shared_rules: rules for every project or a situation may come whatever
                ``projects`` says (a pull: a hub shares those with every token).
            rewritten: positions of records the receiver's checks changed (a redaction, a
                default title): kept with a version of this store's, so they travel back.
        """
        from aletheia_mem.storage.sqlite.sync_hooks import SQLITE_DIALECT
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
                shared_rules=shared_rules,
                rewritten=rewritten,
            )

    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]:
        """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
        from aletheia_mem.storage.sync_peers import sync_cursors

        return sync_cursors(self._conn, hub_id, token_id)

    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None:
        from aletheia_mem.storage.sync_peers import set_push_cursor

        with self._write() as conn:
            set_push_cursor(conn, hub_id, token_id, cursor, now)

    def sync_scope(self, hub_url: str, token_digest: str) -> tuple[bool, tuple[str, ...] | None]:
        """Whether this store synced with the hub and token before, and the projects named."""
        from aletheia_mem.storage.sync_peers import sync_scope

        return sync_scope(self._conn, hub_url, token_digest)

    def set_sync_scope(
        self, hub_url: str, token_digest: str, projects: tuple[str, ...] | None
    ) -> None:
        from aletheia_mem.storage.sync_peers import set_sync_scope

        with self._write() as conn:
            set_sync_scope(conn, hub_url, token_digest, projects)
