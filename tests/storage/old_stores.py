"""SQLite stores as an older release left them, to test what a migration does to them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.storage import migrate


def store_before(path: Path, version: int) -> sqlite3.Connection:
    """A store at ``path`` with the migrations before ``version`` applied, on an autocommit
    connection (the caller closes it)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at)")
    for step, script in migrate._steps():
        if step < version:
            for statement in migrate._statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (step,))
    return conn
