"""Requests per minute per token: a sliding window, safe across the threads of one process."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

DEFAULT_PER_MINUTE = 60
WINDOW_SECONDS = 60.0
# Past this many keys (client addresses, tokens) the ones idle for a window are forgotten.
PRUNE_ABOVE_KEYS = 10_000


class RateLimiter:
    """At most ``limit`` requests per key in any ``window`` seconds (0 turns it off)."""

    def __init__(
        self,
        limit: int = DEFAULT_PER_MINUTE,
        window: float = WINDOW_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self._monotonic = monotonic
        self._hits: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: Hashable, count: int = 1) -> int | None:
        """Count ``count`` requests at once (a batch: all of them or none); None when they may
        go on, else the seconds to wait (at least 1; the whole window when ``count`` is over
        the limit, which no wait would let through)."""
        if self.limit <= 0:
            return None
        now = self._monotonic()
        with self._lock:
            if len(self._hits) > PRUNE_ABOVE_KEYS:
                self._prune(now)
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if count > self.limit:
                return max(1, math.ceil(self.window))
            over = len(hits) + count - self.limit
            if over > 0:
                return max(1, math.ceil(hits[over - 1] + self.window - now))
            hits.extend([now] * count)
            return None

    def _prune(self, now: float) -> None:
        """Forget the keys with no hit in the window (called with the lock held)."""
        idle = [
            key for key, hits in self._hits.items() if not hits or hits[-1] <= now - self.window
        ]
        for key in idle:
            del self._hits[key]
