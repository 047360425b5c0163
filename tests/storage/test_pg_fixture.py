"""The PostgreSQL fixtures give each test an empty schema of its own."""

from __future__ import annotations

import psycopg


def test_a_test_schema_starts_empty_and_is_the_search_path(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone()
        conn.execute("CREATE TABLE probe (id int)")
    assert schema is not None and schema[0].startswith("t_")
    assert tables == (0,)
