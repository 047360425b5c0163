"""Requests per minute per key, in a sliding window.

``SharedRateLimiter`` counts in the hub's store, so that every hub process on one database
shares each token's limit; ``RateLimiter`` counts in this process only, for limits that are
per process by nature (failed sign-ins per client address).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Protocol

from aletheia_mem.clock import Clock
from aletheia_mem.storage.contracts import RateWindows

DEFAULT_PER_MINUTE = 60
WINDOW_SECONDS = 60.0
# Past this many keys (client addresses, tokens) the ones idle for a window are forgotten.
PRUNE_ABOVE_KEYS = 10_000


class Limiter(Protocol):
    """What the hub's token check and batch meter ask of a limiter."""

    @property
    def limit(self) -> int: ...

    def hit(self, key: int, count: int = 1) -> int | None: ...


class SharedRateLimiter:
    """At most ``limit`` requests per token in any minute, counted in the store's rate windows
    (0 turns it off). Each hit is one write transaction; call it off the event loop.

    Args:
        windows: the store's ``rate_windows()``.
        limit: requests per window per token.
        clock: milliseconds since the epoch, the same in every process (not a monotonic clock).
        window: the window's length in seconds.
    """

    def __init__(
        self,
        windows: RateWindows,
        limit: int = DEFAULT_PER_MINUTE,
        *,
        clock: Clock,
        window: float = WINDOW_SECONDS,
    ) -> None:
        self.limit = limit
        self._windows = windows
        self._clock = clock
        self._window_ms = round(window * 1000)

    def hit(self, key: int, count: int = 1) -> int | None:
        """Count ``count`` requests of token ``key`` at once (all or none); None when they may
        go on, else the whole seconds to wait (at least 1)."""
        if self.limit <= 0:
            return None
        wait_ms = self._windows.hit(
            f"token:{key}", count, self.limit, self._window_ms, self._clock()
        )
        return None if wait_ms is None else max(1, math.ceil(wait_ms / 1000))


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

    def waiting(self, key: Hashable) -> int | None:
        """The seconds ``key`` must wait before one more request may go on, without counting
        one; None when it may go on now."""
        if self.limit <= 0:
            return None
        now = self._monotonic()
        with self._lock:
            hits = [at for at in self._hits.get(key, ()) if at > now - self.window]
            if len(hits) < self.limit:
                return None
            return max(1, math.ceil(hits[len(hits) - self.limit] + self.window - now))

    def _prune(self, now: float) -> None:
        """Forget the keys with no hit in the window (called with the lock held)."""
        idle = [
            key for key, hits in self._hits.items() if not hits or hits[-1] <= now - self.window
        ]
        for key in idle:
            del self._hits[key]
