"""Turns for the hub's writing threads: one at a time on a SQLite file, none on PostgreSQL.

On SQLite a writer waiting for another sleeps in the busy handler in steps of milliseconds, so the
hub's threads take turns on a lock that wakes the next at once. PostgreSQL runs concurrent
transactions itself (rows lock, not the database): there a lock per process would only make one
process's saves, and the audit row of every call, wait for each other.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any

WriteTurns = AbstractContextManager[Any]


def write_turns(serial: bool) -> WriteTurns:
    """A lock when writers must take turns (``serial``: a SQLite store), else nothing to wait."""
    return threading.Lock() if serial else nullcontext()
