"""A store's schema as a release before a given migration left it: for the tests that a
migration converts an existing hub."""

from __future__ import annotations

from typing import Any

import psycopg

from aletheia_mem.storage.postgres.database import _steps


def migrate_before(conn: psycopg.Connection[Any], version: int) -> None:
    """Apply, on ``conn`` (autocommit), the migrations numbered below ``version``."""
    conn.execute(
        "CREATE TABLE schema_migrations"
        " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for step, script in _steps():
        if step < version:
            conn.execute(script.encode())
            conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (step,))
