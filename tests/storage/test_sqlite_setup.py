"""How the SQLite store sets up each connection it opens."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore, database
from aletheia_mem.storage.sqlite.database import (
    WAL_AUTOCHECKPOINT_PAGES,
    WAL_FLUSH_COMMITS,
    WAL_SIZE_LIMIT_BYTES,
)
from tests.storage.test_match_counts import NOW

# About SQLite's own connection settings (PRAGMAs): SQLite alone.
pytestmark = pytest.mark.sqlite_only

_TEMP_STORE_MEMORY = 2


def test_every_connection_keeps_statement_journals_and_temporary_tables_in_memory(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "setup.db")
    try:
        assert _on_two_threads(store, "temp_store") == [_TEMP_STORE_MEMORY, _TEMP_STORE_MEMORY]
    finally:
        store.close()


def _on_two_threads(store: SqliteStore, pragma: str) -> list[int]:
    """A PRAGMA's value on this thread's connection, then on a new thread's."""
    seen = [store._conn.execute(f"PRAGMA {pragma}").fetchone()[0]]
    worker = threading.Thread(
        target=lambda: seen.append(store._conn.execute(f"PRAGMA {pragma}").fetchone()[0])
    )
    worker.start()
    worker.join()
    return seen


_SECURE_DELETE_FAST = 2


def test_every_connection_zeroes_deleted_bytes_only_on_pages_it_writes_anyway(
    tmp_path: Path,
) -> None:
    """``secure_delete = FAST`` on every connection, whatever the SQLite build's default
    (Debian's is ON, which zeroes every page a full-text merge frees and writes it to the WAL),
    also after a hub token an older version kept in the store was moved out (ON for that)."""
    path = tmp_path / "setup.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO sync_remote (id, url, token, ca_file)"
        " VALUES (1, 'https://hub.example', 'alt_sync_secret', NULL)"
    )
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    try:
        assert store.hub_token_path.read_text(encoding="utf-8") == "alt_sync_secret\n"
        fast = [_SECURE_DELETE_FAST, _SECURE_DELETE_FAST]
        assert _on_two_threads(store, "secure_delete") == fast
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
        # a store made now records where its sync id was made: one commit of the first
        for n in range(WAL_FLUSH_COMMITS - 2):
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


def test_every_connection_bounds_the_wal_file_past_what_it_reaches_between_checkpoints(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "setup.db")
    try:
        seen: list[tuple[int, ...]] = []

        def settings() -> None:
            conn = store._conn
            seen.append(
                tuple(
                    conn.execute(f"PRAGMA {name}").fetchone()[0]
                    for name in ("wal_autocheckpoint", "journal_size_limit")
                )
            )

        settings()
        worker = threading.Thread(target=settings)
        worker.start()
        worker.join()
        assert seen == [(WAL_AUTOCHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES)] * 2
        assert WAL_SIZE_LIMIT_BYTES > WAL_AUTOCHECKPOINT_PAGES * (4096 + 24)  # no shrink-and-grow
    finally:
        store.close()


def test_a_wal_grown_past_its_limit_is_cut_back_once_it_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "WAL_AUTOCHECKPOINT_PAGES", 50)
    monkeypatch.setattr(database, "WAL_SIZE_LIMIT_BYTES", 100 * 4120)
    path = tmp_path / "bounded.db"
    wal = Path(f"{path}-wal")
    store = SqliteStore(path)
    reader = sqlite3.connect(path, isolation_level=None)  # another process's long read
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        n = 0
        while wal.stat().st_size <= 3 * database.WAL_SIZE_LIMIT_BYTES:
            store.add_memory(_note(n))  # no checkpoint gets past the reader's snapshot
            n += 1
        reader.execute("COMMIT")
        for _ in range(40):  # a checkpoint copies it all; a later save starts the WAL over
            store.add_memory(_note(n))
            n += 1
        assert wal.stat().st_size <= database.WAL_SIZE_LIMIT_BYTES
    finally:
        reader.close()
        store.close()
    again = SqliteStore(path)
    try:
        assert again.count_memories(None) == n
    finally:
        again.close()
