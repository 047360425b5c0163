"""The shared base of the SQLite store's parts: one file, one connection per thread, WAL, a busy
timeout, one writer at a time through ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import inspect
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, Literal, TypeVar

from aletheia_mem.storage import full_text
from aletheia_mem.storage.connections import ThreadConnections
from aletheia_mem.storage.migrate import SchemaGuard, migrate, upgraded_store
from aletheia_mem.storage.riders import pending_rider
from aletheia_mem.storage.sqlite.wal_bound import WalBound
from aletheia_mem.storage.store_file import (
    check_header,
    create_store,
    foreign,
    is_foreign,
    store_problem,
    tighten_store,
)

T = TypeVar("T")
WAL_AUTOCHECKPOINT_PAGES = 10_000  # ~40 MB of WAL between checkpoints (SQLite's default: 1000)
# What the WAL file is cut back to when a checkpoint lets it start over: twice what it reaches
# between checkpoints, so that it is not shrunk and grown again each time, while a WAL grown
# long behind a reader (another process's read transaction holds a checkpoint back) does not
# keep its size until the store is closed.
WAL_SIZE_LIMIT_BYTES = 2 * WAL_AUTOCHECKPOINT_PAGES * (4096 + 24)  # a frame: page and header
WAL_FLUSH_COMMITS = 32  # ~3.5 MB of WAL at ~28 pages a save
# Deleted bytes are zeroed where that writes no page more (FAST). SQLite's own default is OFF;
# Debian's and Ubuntu's builds turn it ON, which also zeroes each page a full-text merge frees
# and writes it to the WAL: 3.4 of a save's 31 pages at 10,000 memories, and 2.6% of its CPU.
SECURE_DELETE = "FAST"
_flush_file: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)  # none on macOS


def _configure(conn: sqlite3.Connection) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # A save dirties ~25 pages; checkpointing every 1000 (the default) costs two fsyncs
    # per ~40 saves. The WAL is checkpointed and removed when the last connection closes.
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
    conn.execute("PRAGMA foreign_keys = ON")
    # Statement journals (a full-text merge's can pass 64 KiB) and temporary b-trees in memory,
    # not in files under /var/tmp that are created, written and deleted within a save.
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")


def _configure_ours(path: Path) -> Callable[[sqlite3.Connection], None]:
    """``_configure`` for an existing file, once it is known to be an Aletheia store: another
    program's database is refused before anything (such as WAL mode) changes it."""

    def configure(conn: sqlite3.Connection) -> None:
        if is_foreign(conn):
            conn.close()
            raise foreign(path)
        _configure(conn)

    return configure


class WalFlusher:
    """A thread that flushes the WAL to disk (``fdatasync``) every ``every`` commits.

    With ``synchronous = NORMAL`` a commit only writes the WAL; the checkpoint, every
    ``WAL_AUTOCHECKPOINT_PAGES`` pages, first flushes all of it: ~40 MB at once stalled the save
    that ran it by 30-45 ms, most of it in that flush. Flushed a few MB at a time by this thread
    (waiting on the disk without the GIL, while the store's thread goes on), the checkpoint
    finds little left to flush. It only makes writes durable sooner: it never writes, and a
    commit never waits for it. The thread starts at the ``every``-th commit (a process that
    writes less never starts it) and ``close`` stops it.

    It flushes through a descriptor of its own on the ``-wal`` file: closing a descriptor drops
    the process's POSIX locks on that file, and SQLite locks the database and ``-shm`` files,
    never the WAL.
    """

    def __init__(self, wal: Path, every: int = WAL_FLUSH_COMMITS) -> None:
        self._wal = wal
        self._every = every
        self._commits = 0  # counted without a lock: a count a little off only moves a flush
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.flushes = 0  # flushes done, for tests
        self.flushed = threading.Event()  # set after each flush, for tests

    def committed(self) -> None:
        """Count a commit; every ``every``-th wakes the thread (started at the first)."""
        self._commits += 1
        if self._commits < self._every:
            return
        self._commits = 0
        if self._thread is None:
            with self._lock:
                if self._closed or self._thread is not None:
                    return
                self._thread = threading.Thread(
                    target=self._run, name="aletheia-wal-flush", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        fd = -1
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                fd = self._flush(fd)
        finally:
            if fd >= 0:
                os.close(fd)

    def _flush(self, fd: int) -> int:
        """Flush the WAL through ``fd``, opened again if the WAL is a new file; the fd kept."""
        try:
            if fd < 0 or os.fstat(fd).st_ino != os.stat(self._wal).st_ino:
                if fd >= 0:
                    os.close(fd)
                    fd = -1
                fd = os.open(self._wal, os.O_RDONLY)
            _flush_file(fd)
        except OSError:
            return fd  # no WAL just now (another process closed the store): nothing to flush
        self.flushes += 1
        self.flushed.set()
        return fd

    def close(self) -> None:
        """Stop the thread (after the flush it is in, if any)."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()


def _build(conn: sqlite3.Connection) -> None:
    _configure(conn)
    migrate(conn)


class _WriteBlock:
    """``SqliteDatabase._write``: a class, not a generator's context manager, which costs
    twice the instructions (two hundredths of a save). It does what that generator did: the
    upkeep and the rider in the transaction, forgetting the indexes written when the block
    fails, each error handed to the transaction's block (rolled back, told as a store
    problem), the WAL's upkeep after the commit."""

    __slots__ = ("_block", "_conn", "_db", "_rider")

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._rider = pending_rider()
        self._block = self._db._pool.write()
        self._conn = self._block.__enter__()
        return self._conn

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: Any
    ) -> Literal[False]:
        """Commit, or roll back and let the error through (the transaction's block never
        swallows one: it raises it again, or the store problem it is)."""
        conn, rider = self._conn, self._rider
        if error is not None:
            full_text.forget_written(conn)
            self._block.__exit__(kind, error, trace)
            return False
        try:
            full_text.tidy(conn)
            result = None if rider is None else conn.execute(rider.sql, rider.params).lastrowid
        except BaseException as failed:
            self._block.__exit__(type(failed), failed, failed.__traceback__)
            raise
        self._block.__exit__(None, None, None)
        if rider is not None:
            rider.result, rider.done = result, True
        self._db._wal_flusher.committed()
        self._db._wal_bound.committed(conn, self._db._pool.busy_timeout_ms)
        return False


class SqliteDatabase:
    """One SQLite file shared by every process on the machine: what every part builds on."""

    def __init__(self, path: Path, *, upkeep: bool = True) -> None:
        """Open the store at ``path``, made whole (0600, in a 0700 folder) if there is none.
        Without ``upkeep`` the parts' upkeep (``_on_open``: a reindex a migration owes, an old
        hub token moved out) is left to the next process that opens the store: a capture hook,
        which must be done in a second, saves what it came for and goes.

        Raises:
            StoreBrokenError: the file is empty, damaged, cut short or another program's.
            StoreReadOnlyError: the store needs a change this user may not write.
            StoreTooNewError: a newer version of Aletheia made the store; nothing was changed.
        """
        self.path = path
        if not check_header(path):
            create_store(path, _build)
        self._pool = ThreadConnections(
            path, _configure_ours(path), factory=full_text.IndexingConnection
        )
        self._wal_flusher = WalFlusher(Path(f"{path}-wal"))
        self._wal_bound = WalBound(Path(f"{path}-wal"), WAL_SIZE_LIMIT_BYTES)
        try:
            known = migrate(self._conn, str(path))
            self._guard = SchemaGuard(self._conn, str(path), known)
            self._pool.write_check = self._guard.check
            if upkeep:
                self._on_open()
        except sqlite3.Error as error:
            self._pool.close()
            raise store_problem(path, error) or error from None
        except BaseException:
            self._pool.close()
            raise
        tighten_store(path)

    def _on_open(self) -> None:
        """Upkeep a part runs once the store is open and migrated (inside the open's guard)."""

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._pool.get()

    def _write(self) -> _WriteBlock:
        """One write transaction; the full-text index's upkeep runs in it before the commit
        (with a ``riding_next_write`` block's rider, if none rode before)."""
        return _WriteBlock(self)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one state of the store (one read transaction), cheaper than as many
        statements in autocommit; see ``ThreadConnections.snapshot``."""
        with self._pool.snapshot():
            yield

    def close(self) -> None:
        self._wal_flusher.close()
        self._pool.close()

    def set_busy_timeout(self, ms: int) -> None:
        """How long this thread's connection, and each one opened after, waits for another writer
        (hooks wait little)."""
        self._pool.busy_timeout_ms = int(ms)
        self._conn.execute(f"PRAGMA busy_timeout = {int(ms)}")

    def schema_version(self) -> int:
        row = self._conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def check_schema(self) -> int:
        """The store's schema; see ``HubStore.check_schema`` (writes refuse on their own here).

        Raises:
            StoreTooNewError: a newer version migrated the store while this process ran.
        """
        found = self.schema_version()
        if found > self._guard.known:
            raise upgraded_store(str(self.path), found, self._guard.known)
        return found

    def health(self) -> dict[str, Any]:
        """SQLite's integrity check (its first problems), version and journal mode, for
        ``aletheia doctor``."""
        conn = self._conn
        rows = conn.execute("PRAGMA integrity_check(5)").fetchall()
        problems = [
            line for row in rows for line in str(row[0]).splitlines() if not line.startswith("***")
        ]
        return {
            "integrity_check": "; ".join(problems),
            "schema": self.schema_version(),
            "sqlite_version": sqlite3.sqlite_version,
            "journal_mode": str(conn.execute("PRAGMA journal_mode").fetchone()[0]),
        }


def _told_as_store_problems(method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def guarded(self: SqliteDatabase, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:  # a page found damaged while reading, say
            problem = store_problem(self.path, error)
            if problem is None:
                raise
            raise problem from None

    return guarded


def tells_store_problems(cls: type[T]) -> type[T]:
    """Make every public method of a store class raise SQLite errors that are store problems
    (a damaged page, a read-only file) as ``StoreBrokenError`` or ``StoreReadOnlyError``, so
    that the layers above never see ``sqlite3``. Writes already do (``ThreadConnections``);
    this covers reads. Rows a generator yields later are not covered."""
    for name in dir(cls):
        method = getattr(cls, name)
        if not name.startswith("_") and inspect.isfunction(method):
            setattr(cls, name, _told_as_store_problems(method))
    return cls
