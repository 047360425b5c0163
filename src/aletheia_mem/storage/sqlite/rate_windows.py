"""Sliding-window request counts in a ``rate_hits`` table, shared by the hub's processes.

The table lives in a small file of its own beside the store (``<store>-rate``), so that counting
a request never waits for the store's write lock: a read on a hub busy with pushes and saves
would otherwise queue behind them for its count (and answer 503 past the 2 s a request waits).
Every hub process on the store opens the same file, so the limit stays exact across them. Where
that file cannot be made (a folder this user may not write), the store's own ``rate_hits`` table
is used, as before.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from aletheia_mem.storage.connections import ThreadConnections

RATE_FILE_SUFFIX = "-rate"
_TABLE = (
    "CREATE TABLE IF NOT EXISTS rate_hits (id INTEGER PRIMARY KEY, key TEXT NOT NULL,"
    " at INTEGER NOT NULL, n INTEGER NOT NULL CHECK (n > 0), expires_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS rate_hits_by_key ON rate_hits (key, at);"
    "CREATE INDEX IF NOT EXISTS rate_hits_by_expiry ON rate_hits (expires_at);"
)


def rate_file(store: Path) -> Path:
    """The file of the windows of the store at ``store``."""
    return store.with_name(store.name + RATE_FILE_SUFFIX)


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")


def beside(store: Path) -> ThreadConnections | None:
    """Connections on the windows' own file beside ``store`` (made ``0600`` with its table if
    missing), or None when it cannot be made or opened."""
    path = rate_file(store)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    except OSError:
        return None
    pool = ThreadConnections(path, _configure)
    try:
        pool.get().executescript(_TABLE)
    except (OSError, sqlite3.Error):
        pool.close()  # the connection it opened, not left to the garbage collector
        return None
    return pool


class SqliteRateWindows:
    """``RateWindows`` on SQLite connections: each hit is one short write transaction, and this
    process's hits take turns on a lock (woken at once) rather than in SQLite's busy handler."""

    def __init__(self, pool: ThreadConnections) -> None:
        self._pool = pool
        self._turns = threading.Lock()

    def close(self) -> None:
        self._pool.close()

    def hit(self, key: str, count: int, limit: int, window_ms: int, now_ms: int) -> int | None:
        """Count ``count`` requests of ``key`` at ``now_ms`` (all or none): None when they may
        go on, else the milliseconds until they would fit (the whole window when ``count``
        exceeds ``limit``). Hits that have left their window are deleted on the way."""
        if count > limit:
            return window_ms
        with self._turns, self._pool.write() as conn:
            conn.execute("DELETE FROM rate_hits WHERE expires_at <= ?", (now_ms,))
            rows = conn.execute(
                "SELECT at, n FROM rate_hits WHERE key = ? AND at > ? ORDER BY at, id",
                (key, now_ms - window_ms),
            ).fetchall()
            over = sum(int(row[1]) for row in rows) + count - limit
            if over <= 0:
                conn.execute(
                    "INSERT INTO rate_hits (key, at, n, expires_at) VALUES (?, ?, ?, ?)",
                    (key, now_ms, count, now_ms + window_ms),
                )
                return None
        freed = 0
        for at, n in rows:  # the oldest hits leave the window first
            freed += int(n)
            if freed >= over:
                return max(1, int(at) + window_ms - now_ms)
        return window_ms  # not reached: the rows in the window sum to more than ``over``
