"""Audit rows written without holding up a read's answer on a busy SQLite hub.

A read (a search, a pull) writes nothing but its audit row. While the hub's writers (pushes,
saves) hold their turns, that row would make the read wait behind all of them: so when the turn
is not free at once, the row is queued and a background thread writes the queued rows together
in its next turn, moments later. A row written at once is written before the answer, as before;
queued rows are written before the process exits (``close``). On PostgreSQL (no turns) every row
is written at once.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import AbstractContextManager
from typing import Any

from aletheia_mem.errors import StoreUnavailableError
from aletheia_mem.storage.contracts import AuditLog
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.write_waits import waiting_at_most

logger = logging.getLogger(__name__)
# How long a row written at once waits for another process's write lock before it is queued.
NOW_WAIT_MS = 50
# How long the writer waits after the store was busy before it tries again.
RETRY_SECONDS = 0.5


class AuditQueue:
    """``write`` an audit row now if the writers' turn is free, else soon after.

    Args:
        store: where the rows go.
        writes: the hub's write turns: a lock on SQLite; anything else is never queued behind.
    """

    def __init__(self, store: AuditLog, writes: AbstractContextManager[Any]) -> None:
        self._store = store
        self._writes = writes
        self._lock = writes if isinstance(writes, type(threading.Lock())) else None
        self._pending: list[AuditEntry] = []
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def write(self, entry: AuditEntry) -> None:
        """Write ``entry``: at once when the turn is free (or there are no turns), else queued."""
        if self._lock is None:
            self._store.add_audit(entry)
            return
        if self._lock.acquire(blocking=False):
            try:
                with waiting_at_most(NOW_WAIT_MS):
                    self._store.add_audit(entry)
                return
            except StoreUnavailableError:
                pass  # another process holds the file: queued like the rest
            finally:
                self._lock.release()
        self._queue(entry)

    def pending(self) -> int:
        """Rows queued and not yet written."""
        with self._guard:
            return len(self._pending)

    def close(self) -> None:
        """Write every queued row (waiting as long as a write does) and stop the writer."""
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        self._flush()

    def _queue(self, entry: AuditEntry) -> None:
        with self._guard:
            self._pending.append(entry)
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="aletheia-audit-queue", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            try:
                self._flush()
            except StoreUnavailableError:
                time.sleep(RETRY_SECONDS)  # busy elsewhere: the rows stay queued
                self._wake.set()
            except Exception:
                logger.exception("Queued audit rows could not be written")

    def _flush(self) -> None:
        """The queued rows in one turn of the writers; those not written stay queued."""
        with self._guard:
            rows, self._pending = self._pending, []
        if not rows:
            return
        written = 0
        try:
            with self._writes:
                for entry in rows:
                    self._store.add_audit(entry)
                    written += 1
        finally:
            if written < len(rows):
                with self._guard:
                    self._pending = rows[written:] + self._pending
