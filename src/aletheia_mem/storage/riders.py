"""A statement that rides the next write transaction of this thread or task.

A hub call's audit row is committed with the call's own write, in one transaction: one commit
where there were two, and a process killed between two commits never leaves the write without
its row. Each store runs the pending rider just before its write's COMMIT (PostgreSQL may also
join it to a single statement as one more CTE).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass
class Rider:
    """An INSERT of one row (``params`` as the store's driver takes them: named on PostgreSQL,
    positional on SQLite); ``result`` is the row's id once committed, ``done`` then."""

    sql: str
    params: Any
    result: int | None = None
    done: bool = False


_RIDER: ContextVar[Rider | None] = ContextVar("aletheia_rider", default=None)


@contextmanager
def riding_next_write(rider: Rider) -> Iterator[Rider]:
    """Within the block, the first write that commits runs the rider's INSERT just before its
    COMMIT; a transaction rolled back leaves it for the next."""
    token = _RIDER.set(rider)
    try:
        yield rider
    finally:
        _RIDER.reset(token)


def pending_rider() -> Rider | None:
    """The rider waiting for this context's next commit, if any."""
    rider = _RIDER.get()
    return None if rider is None or rider.done else rider
