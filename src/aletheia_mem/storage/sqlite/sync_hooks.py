"""The SQLite dialect of the shared sync engine: the hooks ``storage.sync_apply`` calls.

Imported by ``SqliteSync.apply_changes`` when a page is first applied, so that a store that never
syncs does not load the engine's types on its start path.
"""

from __future__ import annotations

import sqlite3

from aletheia_mem.storage import full_text
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite.memories import index_memory
from aletheia_mem.storage.sync_dialect import SyncDialect

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


def _lock_fact_key(conn: sqlite3.Connection, key: tuple[str, str, str]) -> None:
    """Nothing to do: the page's write transaction is the store's one writer."""


SQLITE_DIALECT = SyncDialect(
    log_version=LOG_VERSION,
    set_quiet=_set_quiet,
    reserve_memory_ids=_reserve_memory_ids,
    index_memory=index_memory,
    index_new_memories=_index_new_memories,
    index_fact=_index_fact,
    lock_fact_key=_lock_fact_key,
)
