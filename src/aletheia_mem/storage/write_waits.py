"""A bound on how long this thread's or task's SQLite writes wait for another writer.

A request that should answer soon (a hub's sync page) waits a little for another process's
write lock and then gets the store's busy error, rather than the 30 s every other write waits.
PostgreSQL bounds its own lock waits (``lock_timeout``) and ignores this.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_WAIT_MS: ContextVar[int | None] = ContextVar("aletheia_write_wait_ms", default=None)


@contextmanager
def waiting_at_most(ms: int) -> Iterator[None]:
    """Within the block, each write waits at most ``ms`` for another writer's lock."""
    token = _WAIT_MS.set(ms)
    try:
        yield
    finally:
        _WAIT_MS.reset(token)


def bounded_wait(wait_ms: int) -> int:
    """``wait_ms``, or less within a ``waiting_at_most`` block."""
    bound = _WAIT_MS.get()
    return wait_ms if bound is None else min(wait_ms, bound)
