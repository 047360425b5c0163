"""The WAL stays within its bound while readers overlap without a gap (checkpoint starvation):
a commit past the bound runs a TRUNCATE checkpoint that waits for the readers of the moment."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore, database, wal_bound

pytestmark = pytest.mark.sqlite_only

LIMIT = 100 * 4120  # a hundred frames
MAX_SAVES = 3_000  # far more than the WAL takes to pass three times its bound


@pytest.fixture(autouse=True)
def _small_wal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database, "WAL_AUTOCHECKPOINT_PAGES", 50)
    monkeypatch.setattr(database, "WAL_SIZE_LIMIT_BYTES", LIMIT)


def _note(n: int) -> NewMemory:
    text = f"note {n}: the deploy script needs the VPN on staging " + "words " * 40
    return NewMemory("shop", "note", "note", f"note {n}", text, "mcp", 0, None)


@contextmanager
def _overlapping_readers(path: Path) -> Iterator[list[int]]:
    """A thread that passes a read transaction between two connections, opening the next
    before it closes the last, so that some reader is always in the WAL; yields the count of
    reads made (one item), for the caller to see they overlapped. Yields once the first hand-over
    is done, so the caller's writes always meet overlapping readers, however busy the machine."""
    stop = threading.Event()
    overlapping = threading.Event()
    reads = [0]

    def read() -> None:
        conns = [sqlite3.connect(path, isolation_level=None, timeout=30) for _ in range(2)]
        try:
            turn = 0
            conns[turn].execute("BEGIN")
            conns[turn].execute("SELECT count(*) FROM memories").fetchone()
            while not stop.wait(0.002):
                following = 1 - turn
                conns[following].execute("BEGIN")
                conns[following].execute("SELECT count(*) FROM memories").fetchone()
                conns[turn].execute("COMMIT")
                turn = following
                reads[0] += 1
                overlapping.set()
            conns[turn].execute("COMMIT")
        finally:
            for conn in conns:
                conn.close()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        overlapping.wait(timeout=60)
        yield reads
    finally:
        stop.set()
        reader.join()


def test_readers_that_overlap_without_a_gap_starve_the_automatic_checkpoint(tmp_path: Path):
    """What the bound is for: with it off, no checkpoint starts the WAL over."""
    path = tmp_path / "starved.db"
    wal = Path(f"{path}-wal")
    store = SqliteStore(path)
    store._wal_bound.limit = 2**62  # off
    try:
        store.add_memory(_note(0))
        with _overlapping_readers(path) as reads:
            saves = 1
            while wal.stat().st_size <= 3 * LIMIT and saves < MAX_SAVES:
                store.add_memory(_note(saves))
                saves += 1
        assert wal.stat().st_size > 3 * LIMIT
        assert reads[0] > 0
    finally:
        store.close()


def test_the_wal_stays_within_its_bound_while_readers_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Long enough that the readers of the moment always finish within it, however busy the
    # machine: what is tested is that the checkpoint waits for them, not how fast they are.
    monkeypatch.setattr(wal_bound, "WAL_CHECKPOINT_WAIT_MS", 5_000)
    path = tmp_path / "bounded.db"
    wal = Path(f"{path}-wal")
    store = SqliteStore(path)
    try:
        store.add_memory(_note(0))
        largest = 0
        with _overlapping_readers(path) as reads:
            for n in range(1, 6 * LIMIT // 4120):  # the WAL would pass its bound many times
                store.add_memory(_note(n))
                largest = max(largest, wal.stat().st_size)
        assert reads[0] > 0
        assert store._wal_bound.truncated >= 2
        # one save past the bound at most (the one that passes it, and then empties it)
        assert largest <= LIMIT + 50 * 4120
        assert store.count_memories(None) == 6 * LIMIT // 4120
    finally:
        store.close()


def test_a_reader_held_open_defers_the_checkpoint_which_runs_once_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A long read (another process's export) is not waited for beyond the short wait; the
    checkpoint is tried again as the WAL grows, and empties it once the read has ended."""
    monkeypatch.setattr(wal_bound, "WAL_CHECKPOINT_WAIT_MS", 0)
    path = tmp_path / "held.db"
    wal = Path(f"{path}-wal")
    store = SqliteStore(path)
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        store.add_memory(_note(0))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        n = 1
        while wal.stat().st_size <= 2 * LIMIT:
            store.add_memory(_note(n))
            n += 1
        assert store._wal_bound.refused >= 2  # tried again as it grew
        assert store._wal_bound.truncated == 0
        reader.execute("COMMIT")
        while store._wal_bound.truncated == 0 and n < MAX_SAVES:
            store.add_memory(_note(n))
            n += 1
        assert store._wal_bound.truncated == 1
        assert wal.stat().st_size == 0  # TRUNCATE empties the file
        store.add_memory(_note(n))
        assert store.count_memories(None) == n + 1
    finally:
        reader.close()
        store.close()
