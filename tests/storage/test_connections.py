"""A connection's memo outlives reads and forgets everything at any write; the connections of
threads that ended are closed."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.server.sessions import SessionState, SessionStore
from aletheia_mem.storage.connections import ThreadConnections
from aletheia_mem.storage.open import open_local_store


def test_memo_is_kept_across_reads_and_emptied_by_a_write_that_changes_no_row(
    tmp_path: Path,
) -> None:
    pool = ThreadConnections(tmp_path / "memo.db")
    try:
        pool.memo()["answer"] = 42
        pool.get().execute("SELECT 1").fetchone()
        assert pool.memo() == {"answer": 42}
        with pool.write() as conn:
            conn.execute("CREATE TABLE t (x)")
        assert pool.memo() == {}
    finally:
        pool.close()


def test_memo_is_emptied_when_another_connection_commits(tmp_path: Path) -> None:
    pool = ThreadConnections(tmp_path / "memo.db")
    other = sqlite3.connect(tmp_path / "memo.db", isolation_level=None)
    try:
        other.execute("CREATE TABLE t (x)")
        pool.memo()["answer"] = 42
        other.execute("INSERT INTO t VALUES (1)")
        assert pool.memo() == {}
    finally:
        other.close()
        pool.close()


def _open_fds_on(path: Path) -> int:
    """This process's descriptors open on ``path`` itself (not its -wal or -shm)."""
    fds = Path("/proc/self/fd")
    count = 0
    for fd in fds.iterdir():
        try:
            if Path(os.readlink(fd)) == path:
                count += 1
        except OSError:  # closed while listed
            continue
    return count


def _in_threads_one_after_another(work: Callable[[], object], threads: int) -> None:
    for _ in range(threads):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
def test_connections_of_ended_threads_are_closed(tmp_path: Path) -> None:
    """A server's worker threads come and go; each opens its own connection, and the ones of
    threads that ended must not stay open (a descriptor leak, per burst of load)."""
    path = tmp_path / "threads.db"
    pool = ThreadConnections(path)
    try:
        _in_threads_one_after_another(lambda: pool.get().execute("SELECT 1").fetchone(), 40)
        assert _open_fds_on(path) <= 2
    finally:
        pool.close()
    assert _open_fds_on(path) == 0


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
def test_a_store_and_its_sessions_keep_no_connection_of_an_ended_thread(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    store = open_local_store(path)
    sessions = SessionStore(store.sessions(), system_clock)
    try:

        def work() -> None:
            store.list_rules()
            sessions.add("", SessionState("2025-06-18", "pytest"))

        _in_threads_one_after_another(work, 40)
        # The store's own connection (opened here), and at most one of each part for the
        # last thread, whose connections go when the next new thread opens its own.
        assert _open_fds_on(path) <= 4
        assert len(sessions) == 40
    finally:
        sessions.close()
        store.close()
