"""Time as the domain sees it: integer milliseconds since the epoch, UTC."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]


def system_clock() -> int:
    """The wall clock in epoch milliseconds."""
    return time.time_ns() // 1_000_000
