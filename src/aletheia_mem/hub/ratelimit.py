"""Requests per minute per token: a sliding window, safe across the threads of one process."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

DEFAULT_PER_MINUTE = 60
WINDOW_SECONDS = 60.0


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

    def hit(self, key: Hashable) -> int | None:
        """Count one request; None when it may go on, else the seconds to wait (at least 1)."""
        if self.limit <= 0:
            return None
        now = self._monotonic()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) >= self.limit:
                return max(1, math.ceil(hits[0] + self.window - now))
            hits.append(now)
            return None
