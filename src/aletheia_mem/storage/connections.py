"""One SQLite connection per thread on one file: short write transactions, closed together.

A server's worker threads come and go (anyio retires one idle for 10 s and starts another under
the next burst), so the connection of a thread that ended is closed when a new one is opened:
the open connections stay as many as the live threads that use them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aletheia_mem.errors import StoreFullError
from aletheia_mem.storage.store_file import disk_full, has_wal, readable_only, store_problem
from aletheia_mem.storage.write_waits import bounded_wait

BUSY_TIMEOUT_MS = 30_000


class ThreadConnections:
    """Connections in autocommit mode, one per thread, each set up once by ``configure``."""

    def __init__(
        self,
        path: Path,
        configure: Callable[[sqlite3.Connection], None] | None = None,
        factory: type[sqlite3.Connection] = sqlite3.Connection,
    ) -> None:
        self.path = path
        self._configure = configure
        self._factory = factory
        self._local = threading.local()
        # Each connection with the thread it belongs to.
        self._connections: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._lock = threading.Lock()
        self.busy_timeout_ms = BUSY_TIMEOUT_MS
        # Run in each write transaction once it holds the write lock; raising rolls it back.
        self.write_check: Callable[[sqlite3.Connection], None] | None = None
        # A store in a folder this user cannot write is opened as it stands on disk: SQLite can
        # make no -wal or -shm file there, and without them it opens a WAL store only so.
        # Writes then fail as read-only (exit 9) while reads work.
        self._target = str(path)
        if readable_only(path):
            self._target = _as_it_stands(path)
        # Set while the store is read as it stands because its disk was full when a connection
        # was opened (SQLite could make no -shm file): reads work, writes are refused as full
        # until there is room again, when every thread's connection is opened anew.
        self._full_read = False
        self._stood: tuple[int, int] | None = None  # the file's state then (see _file_state)
        self._generation = 0

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        if self._full_read and self._stands_changed():
            self._full_read, self._target = False, str(self.path)
            self._generation += 1  # each thread opens its connection anew
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        outdated = getattr(self._local, "generation", self._generation) != self._generation
        if conn is not None and outdated and not conn.in_transaction:
            self._forget(conn)
            conn = None
        if conn is None:
            try:
                conn = self._open()
            except sqlite3.OperationalError as error:
                if not self._may_read_as_it_stands(error):
                    raise
                self._full_read, self._target = True, _as_it_stands(self.path)
                self._stood = _file_state(self.path)
                conn = self._open()
            self._local.conn = conn
            self._local.generation = self._generation
            self._local.memo = {}
            self._local.stamp = None
            with self._lock:
                ended = [c for thread, c in self._connections if not thread.is_alive()]
                self._connections = [pair for pair in self._connections if pair[1] not in ended]
                self._connections.append((threading.current_thread(), conn))
            for stale in ended:  # its thread is gone: nothing uses it any more
                stale.close()
        return conn

    @contextmanager
    def write(self, *, wait_ms: int | None = None) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any error.
        ``wait_ms``: how long this one waits for another process's write lock (None: as every
        write does, ``busy_timeout_ms``), less within a ``waiting_at_most`` block; past it, the
        store's busy error."""
        conn = self._writable()
        memo: dict[Any, Any] = self._local.memo
        wait = bounded_wait(self.busy_timeout_ms if wait_ms is None else wait_ms)
        own_wait = wait != self.busy_timeout_ms
        if own_wait:
            conn.execute(f"PRAGMA busy_timeout = {int(wait)}")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.write_check is not None:
                    self.write_check(conn)
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
        except sqlite3.Error as error:
            problem = store_problem(self.path, error)
            if problem is None:
                raise
            raise problem from None  # a read-only or damaged store, told in one line
        finally:
            memo.clear()  # a write may change what it holds, even one that changes no row
            if own_wait:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")

    def _writable(self) -> sqlite3.Connection:
        """This thread's connection for a write; raises ``StoreFullError`` while the store is
        read as it stands because its disk is full (found on opening it, this first use too)."""
        conn = self.get()
        if self._full_read:
            raise StoreFullError(str(self.path))
        return conn

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: the reads in the block see one state of the store, and the
        file's read locks are taken once for them all, not once per statement (autocommit).
        Inside a transaction already (a write, another snapshot), the block simply joins it."""
        conn = self.get()
        if conn.in_transaction:
            yield conn
            return
        try:
            conn.execute("BEGIN")
        except sqlite3.Error as error:
            raise store_problem(self.path, error) or error from None
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if conn.in_transaction:
            conn.execute("COMMIT")  # a read: nothing to write, the locks are released

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._target,
            uri=self._target.startswith("file:"),
            isolation_level=None,
            timeout=self.busy_timeout_ms / 1000,
            check_same_thread=False,
            factory=self._factory,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if self._configure is not None:
                self._configure(conn)
            else:  # a first read, which opens the -shm file: a full disk is found here
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()  # a store refused while setting up (foreign, broken) leaks nothing
            raise
        return conn

    def _may_read_as_it_stands(self, error: sqlite3.Error) -> bool:
        """Whether a connection that could not be opened because the store's disk is full may be
        opened on the file as it stands: only with no WAL, whose changes it would not see.

        Raises:
            StoreFullError: a WAL holds changes. Reading them needs SQLite's index of the WAL
                (its -shm file), with no room to make it; read without one (in exclusive
                locking mode), the store would be locked against every other process for as
                long as the connection is open: so even reads are refused, saying why.
        """
        full = isinstance(store_problem(self.path, error), StoreFullError)
        if not full or self._target.startswith("file:"):
            return False
        if has_wal(self.path):
            raise StoreFullError(str(self.path), reading=True) from None
        return True

    def _stands_changed(self) -> bool:
        """While the store is read as it stands: whether that must end, as there is room again,
        or the store changed since (another process wrote it, into a WAL or the file), which a
        connection reading it as it stands would not see, or would see half done."""
        if not disk_full(self.path) or has_wal(self.path):
            return True
        return _file_state(self.path) != self._stood

    def _forget(self, conn: sqlite3.Connection) -> None:
        """Close this thread's connection, opened before the store's disk had room again."""
        with self._lock:
            self._connections = [pair for pair in self._connections if pair[1] is not conn]
        conn.close()
        self._local.conn = None

    def memo(self) -> dict[Any, Any]:
        """A dict for values read from this thread's connection, emptied when they may be stale.

        That is whenever the database may have changed since the last call: another connection
        (of this process or another) committed, which ``PRAGMA data_version`` tells, or this
        connection changed rows (which that pragma does not count).
        """
        conn = self.get()
        stamp = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        if stamp != self._local.stamp:
            self._local.memo.clear()
            self._local.stamp = stamp
        memo: dict[Any, Any] = self._local.memo
        return memo

    def close(self) -> None:
        with self._lock:
            for _, conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()


def _as_it_stands(path: Path) -> str:
    """The URI that opens ``path`` read-only as it stands on disk (no -wal, -shm or locks)."""
    return f"file:{quote(str(path))}?mode=ro&immutable=1"


def _file_state(path: Path) -> tuple[int, int] | None:
    """The file's size and change time: another than before means it was written."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns
