"""Migration 0008: a memory is looked up by its dedupe key through the key's own index, even in a
project the planner's statistics have not seen yet."""

from __future__ import annotations

from typing import Any

import psycopg

from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.memories import KEY_MATCH, PgMemories
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.postgres.test_pg_memories import NOW, _new


def _add_rows(conn: psycopg.Connection[Any], project: str, count: int) -> None:
    conn.execute(
        "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
        " updated_at, dedupe_key)"
        " SELECT %s || i, %s, 'decision', 'memory', 't', 'x', 'cli', i, i, %s || i"
        " FROM generate_series(1, %s) AS i",
        (project + "-", project, project + "-key-", count),
    )


def _plan(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...]) -> dict[str, Any]:
    row = conn.execute(f"EXPLAIN (FORMAT JSON) {sql}", params).fetchone()
    assert row is not None
    return dict(row[0][0]["Plan"])


def test_the_key_lookup_uses_the_key_index_in_a_project_the_statistics_missed(
    pg_db: PgDatabase,
) -> None:
    with pg_db.write() as conn:
        _add_rows(conn, "old", 300)
    with pg_db.read() as conn:
        conn.execute("ANALYZE memories")  # statistics that know only the project "old"
    with pg_db.write() as conn:
        _add_rows(conn, "new", 500)
        plan = _plan(conn, f"SELECT id FROM memories WHERE {KEY_MATCH}", ("new-key-7", "new"))
        # The project index looked as cheap, and read all 500 memories of "new" for one key.
        assert plan["Index Name"] == "memories_dedupe", plan
        assert plan["Index Cond"].startswith("(dedupe_key ="), plan
    memories = PgMemories(pg_db)
    found = memories.find_memory("new", "new-key-7")
    assert found is not None and found.title == "t"
    assert memories.find_memory("old", "new-key-7") is None


def test_a_store_before_the_key_index_keeps_its_keys_and_dedupes(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, 8)
        _add_rows(conn, "shop", 3)
    db = PgDatabase(pg_url)
    try:
        memories = PgMemories(db)
        kept = memories.find_memory("shop", "shop-key-2")
        assert kept is not None
        again, created = memories.add_memory(_new("t", dedupe_key="shop-key-2"))
        assert (again.id, created) == (kept.id, False)
        other, created = memories.add_memory(_new("t", dedupe_key="shop-key-2", project="web"))
        assert created and other.id != kept.id
        work = _new("todo", kind="work_state", dedupe_key="work:todo", at=NOW)
        first = memories.put_work_state(work)
        assert memories.put_work_state(work) == first
        with db.read() as conn:
            row = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_dedupe'"
                " AND schemaname = current_schema()"
            ).fetchone()
            assert row is not None
            assert "(dedupe_key, project) WHERE (dedupe_key IS NOT NULL)" in row[0]
            count = conn.execute("SELECT count(*) FROM memories").fetchone()
            assert count is not None and count[0] == 5
    finally:
        db.close()
