"""Sliding-window rate limits on PostgreSQL, one window per key shared by every hub process.

Each hit is one call of the SQL function ``rate_hit`` (migration 0004), one statement: it takes
a transaction-scoped advisory lock on its key, so the hits of one key take turns (other keys go
on) and the count is exact however many processes serve the hub, prunes what left the window,
counts the rest, then adds the batch or tells the wait.
"""

from __future__ import annotations

import itertools

from aletheia_mem.storage.postgres.database import PgDatabase

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
        [row] = self._db.statement(  # rate_hit (migration 0004): one round trip
            "SELECT rate_hit(%s, %s, %s, %s, %s)", (key, count, limit, window_ms, now_ms)
        )
        wait = None if row[0] is None else int(row[0])
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
