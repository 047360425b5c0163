"""A newer version of Aletheia migrating a PostgreSQL store while processes of this version run
on it (a rolling upgrade of a hub), and what the store holds, to tell that nothing was written."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from aletheia_mem.storage.postgres.database import _steps
from aletheia_mem.storage.postgres.schema_guard import MIGRATION_LOCK

LATEST = _steps()[-1][0]


def migrate_one_step_further(url: str, *, commit: bool = True) -> psycopg.Connection[Any]:
    """What a newer version's first process does, as ``database.migrate`` does it: under the
    migrations' advisory lock, one more numbered step and its record, in one transaction.
    Committed unless ``commit`` is false: the caller then holds the migration open, on the
    connection returned, until it commits."""
    conn = psycopg.connect(url)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    conn.execute("CREATE TABLE future_things (id integer PRIMARY KEY)")
    conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (LATEST + 1,))
    if commit:
        conn.commit()
        conn.close()
    return conn


def contents(url: str) -> dict[str, tuple[int, int]]:
    """Each table's rows and the last transaction that wrote one (an insert or an update)."""
    with psycopg.connect(url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        ]
        found = {}
        for table in tables:
            count = sql.SQL("SELECT count(*), coalesce(max(xmin::text::bigint), 0) FROM {}")
            row = conn.execute(count.format(sql.Identifier(table))).fetchone()
            assert row is not None
            found[table] = (int(row[0]), int(row[1]))
    return found
