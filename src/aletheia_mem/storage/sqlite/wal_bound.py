"""The WAL file kept within a bound while readers overlap without a gap (checkpoint starvation).

SQLite's automatic checkpoint is PASSIVE: it copies the WAL into the database only up to the
oldest reader's snapshot, and the WAL starts over (and ``journal_size_limit`` cuts it back) only
once it was copied whole and no reader still reads from it. A server answering searches while
hooks and CLI commands save can keep a reader in the WAL at every commit, so that it never starts
over and grows for as long as the readers overlap (https://sqlite.org/wal.html, "Avoiding
Excessively Large WAL Files").

So a commit that leaves the WAL file past its bound runs a TRUNCATE checkpoint, which waits a
little (the readers of the moment finish within milliseconds; new ones read the database file
once the WAL is copied whole), copies the rest and empties the file. Readers that do not let it
(another process's long read, an export) are not waited for longer: the checkpoint gives up, and
is tried again once the WAL has grown by another eighth of the bound, so that a save pays that
wait rarely, and never below the bound (where nothing changes).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

# How long a checkpoint past the bound waits for the readers in the WAL (and for another
# process's write transaction): a search's read lasts milliseconds; a hook waits up to a second
# for the write lock, which the checkpoint holds meanwhile.
WAL_CHECKPOINT_WAIT_MS = 100


class WalBound:
    """Checks the WAL file's size after each commit, and empties it past ``limit`` bytes."""

    def __init__(self, wal: Path, limit: int, wait_ms: int | None = None) -> None:
        self._wal = str(wal)  # as text: ``os.stat`` of a ``Path`` calls its ``__fspath__``
        self.limit = limit
        self.wait_ms = WAL_CHECKPOINT_WAIT_MS if wait_ms is None else wait_ms
        self._next_try = limit  # the size at which a checkpoint is tried (again)
        self.truncated = 0  # checkpoints that emptied the WAL, for tests and benches
        self.refused = 0  # checkpoints the readers did not let finish

    def committed(self, conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
        """After a commit on ``conn`` (outside a transaction): empty the WAL if it has passed
        the bound and a try is due. A stat of the file when it has not."""
        try:
            size = os.stat(self._wal).st_size
        except OSError:
            return  # no WAL (another process closed the store last): nothing to bound
        if size <= self.limit:
            self._next_try = self.limit
            return
        if size < self._next_try or conn.in_transaction:
            return
        try:
            conn.execute(f"PRAGMA busy_timeout = {min(self.wait_ms, busy_timeout_ms)}")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.OperationalError:
            busy = 1  # upkeep: the save is committed whatever happens here
        finally:
            conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        if busy:
            self.refused += 1
            self._next_try = size + self.limit // 8
        else:
            self.truncated += 1
            self._next_try = self.limit
