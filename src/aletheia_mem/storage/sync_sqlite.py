"""The SQLite side of sync: the hooks of ``SyncDialect`` for a store on one SQLite file."""

from __future__ import annotations

import sqlite3

from aletheia_mem.storage import full_text
from aletheia_mem.storage.sync_dialect import IndexMemory, SyncDialect

# REPLACE deletes the item's row and inserts a new one: a new seq from AUTOINCREMENT.
LOG_VERSION = (
    "INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote) VALUES (?, ?, ?, ?, ?)"
)


def set_quiet(conn: sqlite3.Connection, quiet: bool) -> None:
    """The triggers of 0005_hub_sync.sql stay silent while ``sync_control.quiet`` is 1."""
    conn.execute("UPDATE sync_control SET quiet = ?", (int(quiet),))


def reserve_memory_ids(conn: sqlite3.Connection, count: int) -> list[int]:
    """The next ``count`` ids AUTOINCREMENT would give (one writer: nobody takes them first)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])
    first = max(int(row[0]) if row else 0, top) + 1
    return list(range(first, first + count))


def index_fact(
    conn: sqlite3.Connection, fact_id: int, subject: str, predicate: str, obj: str, known: bool
) -> None:
    if known:
        conn.execute("DELETE FROM fact_fts WHERE rowid = ?", (fact_id,))
    full_text.index_fact(conn, fact_id, subject, predicate, obj)


def sqlite_dialect(index_memory: IndexMemory) -> SyncDialect:
    """Sync on a SQLite store whose memories ``index_memory`` indexes."""
    return SyncDialect(
        log_version=LOG_VERSION,
        set_quiet=set_quiet,
        reserve_memory_ids=reserve_memory_ids,
        index_memory=index_memory,
        index_fact=index_fact,
    )
