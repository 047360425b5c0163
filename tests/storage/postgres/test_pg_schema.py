"""Migration 0001: the data tables of the SQLite store, on PostgreSQL."""

from __future__ import annotations

from aletheia_mem.storage.postgres.database import PgDatabase, schema_version

SQLITE_DATA_TABLES = ("memories", "facts", "rules", "episodes", "episode_requests", "audit")


def test_the_first_migration_creates_the_data_tables_with_the_sqlite_columns(pg_url: str) -> None:
    db = PgDatabase(pg_url)
    try:
        with db.read() as conn:
            assert schema_version(conn) >= 1
            rows = conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema()"
            ).fetchall()
    finally:
        db.close()
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    for table in SQLITE_DATA_TABLES:
        assert table in columns
    assert {"path", "path_reversed"} <= columns["memory_files"]
    assert {"subject_key", "predicate_key", "superseded_by", "memory_id"} <= columns["facts"]


def test_opening_twice_applies_the_migration_once(pg_url: str) -> None:
    PgDatabase(pg_url).close()
    db = PgDatabase(pg_url)
    try:
        with db.read() as conn:
            versions = conn.execute("SELECT version FROM schema_migrations").fetchall()
    finally:
        db.close()
    assert [row[0] for row in versions] == sorted(row[0] for row in versions)
    assert len(versions) == len({row[0] for row in versions})
