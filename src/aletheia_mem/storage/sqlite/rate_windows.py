"""Sliding-window request counts in the ``rate_hits`` table, shared by the hub's processes."""

from __future__ import annotations

from aletheia_mem.storage.connections import ThreadConnections


class SqliteRateWindows:
    """``RateWindows`` on a store's connections: each hit is one write transaction."""

    def __init__(self, pool: ThreadConnections) -> None:
        self._pool = pool

    def hit(self, key: str, count: int, limit: int, window_ms: int, now_ms: int) -> int | None:
        """Count ``count`` requests of ``key`` at ``now_ms`` (all or none): None when they may
        go on, else the milliseconds until they would fit (the whole window when ``count``
        exceeds ``limit``). Hits that have left their window are deleted on the way."""
        if count > limit:
            return window_ms
        with self._pool.write() as conn:
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
