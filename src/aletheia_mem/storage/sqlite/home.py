"""Where the local store's sync id was made (``sync_home``), and a new id for a store found
elsewhere (``storage.store_home``, ``sync.home``)."""

from __future__ import annotations

import sqlite3
import time
from contextlib import suppress
from typing import TYPE_CHECKING

from aletheia_mem.storage.sqlite.database import SqliteDatabase

if TYPE_CHECKING:  # imported when a place is looked at: off every command's start path
    from aletheia_mem.storage.store_home import StoreHome

_RECORD = (
    "INSERT OR REPLACE INTO sync_home (id, store_id, device, inode, born, path, machine, made_at)"
    " VALUES (1, ?, ?, ?, ?, ?, ?, ?)"
)


class SqliteHome(SqliteDatabase):
    """The file and machine this store's sync id belongs to."""

    def _on_open(self) -> None:
        super()._on_open()
        # Recorded when the store is made (or first opened by this version), so that a copy
        # made before its first sync is told from the original too.
        known = self._conn.execute(
            "SELECT 1 FROM sync_home h, sync_identity i WHERE h.store_id = i.store_id"
        ).fetchone()
        if known is None:
            from aletheia_mem.storage.store_home import home_of

            with suppress(OSError, sqlite3.OperationalError):  # read-only: its sync records it
                self.record_store_home(home_of(self.path), int(time.time() * 1000))

    def store_home(self) -> StoreHome | None:
        """Where the current sync id was made; None when not recorded (a store of an earlier
        release, or one whose id was set since)."""
        return _home(self._conn)

    def record_store_home(self, home: StoreHome, now: int) -> None:
        """Remember ``home`` as where the current sync id belongs."""
        with self._write() as conn:
            store_id = conn.execute("SELECT store_id FROM sync_identity").fetchone()[0]
            conn.execute(_RECORD, (store_id, *_fields(home), now))

    def take_new_store_id(
        self, home: StoreHome, now: int, *, again: bool = True
    ) -> tuple[str, str] | None:
        """Give the store a new sync id made for ``home``, in one transaction, and forget every
        pull cursor: the next pull brings every item again, the old id's versions too (those
        this store holds change nothing). Push cursors stay: changes made here and not yet
        pushed go under the new id (a push sends its versions as the pushing store's).
        Returns ``(old_id, new_id)``; None, without ``again``, when the current id was made
        for ``home`` already (another sync of this store took it a moment ago)."""
        import secrets

        new_id = secrets.token_hex(16)  # as 0005_hub_sync.sql makes one
        with self._write() as conn:
            old_id = str(conn.execute("SELECT store_id FROM sync_identity").fetchone()[0])
            if not again and _home(conn) == home:
                return None
            conn.execute("UPDATE sync_identity SET store_id = ?", (new_id,))
            conn.execute("UPDATE sync_peers SET pull_cursor = 0")
            conn.execute(_RECORD, (new_id, *_fields(home), now))
        return old_id, new_id


def _home(conn: sqlite3.Connection) -> StoreHome | None:
    row = conn.execute(
        "SELECT h.device, h.inode, h.born, h.path, h.machine"
        " FROM sync_home h, sync_identity i WHERE h.store_id = i.store_id"
    ).fetchone()
    if row is None:
        return None
    from aletheia_mem.storage.store_home import StoreHome

    return StoreHome(*row)


def _fields(home: StoreHome) -> tuple[int, int, int, str, str]:
    return home.device, home.inode, home.born, home.path, home.machine
