"""How the SQLite store sets up each connection it opens."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.database import WAL_FLUSH_COMMITS
from tests.storage.test_match_counts import NOW

# About SQLite's own connection settings (PRAGMAs): SQLite alone.
pytestmark = pytest.mark.sqlite_only

_TEMP_STORE_MEMORY = 2


def test_every_connection_keeps_statement_journals_and_temporary_tables_in_memory(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "setup.db")
    try:
        seen = [store._conn.execute("PRAGMA temp_store").fetchone()[0]]
        worker = threading.Thread(
            target=lambda: seen.append(store._conn.execute("PRAGMA temp_store").fetchone()[0])
        )
        worker.start()
        worker.join()
        assert seen == [_TEMP_STORE_MEMORY, _TEMP_STORE_MEMORY]
    finally:
        store.close()


def _note(n: int) -> NewMemory:
    return NewMemory(
        project="shop",
        type="note",
        kind="note",
        title=f"note {n}",
        text=f"the flusher keeps note number {n}",
        tool="cli",
        created_at=NOW + n,
        dedupe_key=f"note-{n}",
    )


def test_the_wal_is_flushed_by_a_thread_every_so_many_commits_and_it_stops_with_the_store(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "flush.db")
    flusher = store._wal_flusher
    try:
        for n in range(WAL_FLUSH_COMMITS - 1):
            store.add_memory(_note(n))
        assert flusher._thread is None  # a process that writes little starts no thread
        store.add_memory(_note(WAL_FLUSH_COMMITS))
        assert flusher.flushed.wait(60)
        assert flusher.flushes >= 1
        thread = flusher._thread
        assert thread is not None and thread.is_alive()
    finally:
        store.close()
    assert not thread.is_alive()
    assert thread not in threading.enumerate()


def test_no_save_is_lost_while_the_wal_is_flushed(tmp_path: Path) -> None:
    path = tmp_path / "flush.db"
    store = SqliteStore(path)
    saves = 3 * WAL_FLUSH_COMMITS + 5
    try:
        for n in range(saves):
            store.add_memory(_note(n))
        assert store._wal_flusher.flushed.wait(60)
    finally:
        store.close()
    again = SqliteStore(path)
    try:
        assert again.count_memories(None) == saves
        for n in range(saves):
            assert again.find_memory("shop", f"note-{n}") is not None
    finally:
        again.close()


def test_a_closed_store_starts_no_flusher(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "flush.db")
    store.close()
    for _ in range(WAL_FLUSH_COMMITS):
        store._wal_flusher.committed()
    assert store._wal_flusher._thread is None
