"""Sliding-window rate limits on PostgreSQL, one window per key shared by every hub process.

Each hit takes a transaction-scoped advisory lock on its key, so the hits of one key take turns
(other keys go on) and the count is exact however many processes serve the hub: prune what
left the window, count the rest, then add the batch or tell the wait.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate

from aletheia_mem.storage.postgres.database import PgDatabase, Row

# Every this many hits a process also drops the expired rows of every key (idle keys included).
SWEEP_EVERY = 1000
_SWEEP_BATCH = 10_000


class PgRateWindows:
    """``RateWindows`` on the store's pool."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._hits = itertools.count(1)

    def hit(self, key: str, count: int, limit: int, window_ms: int, now_ms: int) -> int | None:
        """Count ``count`` requests at once (all or none): None when they may go on, else the
        milliseconds until they would fit (the whole window when ``count`` exceeds ``limit``)."""
        if count > limit:
            return window_ms
        with self._db.write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
            conn.execute("DELETE FROM rate_hits WHERE key = %s AND expires_at <= %s", (key, now_ms))
            rows = conn.execute(
                "SELECT expires_at, n FROM rate_hits WHERE key = %s ORDER BY expires_at, id",
                (key,),
            ).fetchall()
            wait = _wait(rows, count, limit, now_ms)
            if wait is None:
                conn.execute(
                    "INSERT INTO rate_hits (key, expires_at, n) VALUES (%s, %s, %s)",
                    (key, now_ms + window_ms, count),
                )
        if next(self._hits) % SWEEP_EVERY == 0:
            self.sweep(now_ms)
        return wait

    def sweep(self, now_ms: int) -> int:
        """Drop expired rows of every key, skipping rows a hit holds; returns how many went."""
        with self._db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM rate_hits WHERE id IN (SELECT id FROM rate_hits"
                " WHERE expires_at <= %s LIMIT %s FOR UPDATE SKIP LOCKED)",
                (now_ms, _SWEEP_BATCH),
            )
            return cursor.rowcount


def _wait(rows: Sequence[Row], count: int, limit: int, now_ms: int) -> int | None:
    """None when ``count`` more fit beside ``rows`` (expiry, size; oldest first), else the ms
    until enough of them have left the window (``count <= limit``, so the rows hold enough)."""
    held = list(accumulate(int(row[1]) for row in rows))
    over = (held[-1] if held else 0) + count - limit
    if over <= 0:
        return None
    return max(1, int(rows[bisect_left(held, over)][0]) - now_ms)
