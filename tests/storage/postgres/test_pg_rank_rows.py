"""Migrations 0005 and 0006: memory_rank holds what search reads of each memory, and a row's
index entries go with it, all kept by triggers."""

from __future__ import annotations

from dataclasses import replace

import psycopg

from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.postgres.test_pg_memories import NOW, _fact, _new

COPIED = "created_at, pinned, dismissed_at, project, type, kind"


def _mismatches(conn: psycopg.Connection[object]) -> list[object]:
    """Memories whose rank row differs from the memory and its token count (none: in step)."""
    return conn.execute(
        f"SELECT m.id FROM memories m JOIN memory_docs d ON d.memory_id = m.id"
        f" LEFT JOIN memory_rank r ON r.id = m.id"
        f" WHERE r.id IS NULL OR (r.tokens, {', '.join('r.' + c for c in COPIED.split(', '))})"
        f" IS DISTINCT FROM (d.tokens, {', '.join('m.' + c for c in COPIED.split(', '))})"
    ).fetchall()


def test_rank_rows_follow_saves_rewrites_pins_and_dismissals(pg_db: PgDatabase) -> None:
    memories = PgMemories(pg_db)
    saved, _ = memories.add_memory(_new("Deploy on Fridays", type="rule", kind="note"))
    todo = _new("todo", kind="work_state", dedupe_key="work:todo")
    work = memories.put_work_state(todo)
    memories.put_work_state(replace(todo, text="a much longer list than before, rewritten"))
    memories.set_pinned(saved.id, True, NOW + 1)
    with pg_db.write() as conn:
        conn.execute("UPDATE memories SET dismissed_at = %s WHERE id = %s", (NOW + 2, work))
        assert _mismatches(conn) == []
        rows = conn.execute(
            f"SELECT id, tokens > 0, {COPIED} FROM memory_rank ORDER BY id"
        ).fetchall()
    assert [tuple(row) for row in rows] == [
        (saved.id, True, NOW, 1, None, "shop", "rule", "note"),
        (work, True, NOW, 0, NOW + 2, "shop", "decision", "work_state"),
    ]
    assert memories.rank_memory_ids(MemoryQuery(terms=("fridays",), type="rule"), NOW) == [saved.id]
    assert memories.rank_memory_ids(MemoryQuery(terms=("rewritten",)), NOW) == []
    dismissed = MemoryQuery(terms=("rewritten",), dismissed=True)
    assert memories.rank_memory_ids(dismissed, NOW) == [work]


def test_a_store_on_the_schema_before_rank_rows_migrates_its_memories(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, 5)
        conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, tool, pinned,"
            " created_at, updated_at, dismissed_at) VALUES"
            " ('a', 'shop', 'decision', 'memory', 'old', 'old text', 'cli', 1, 5, 5, NULL),"
            " ('b', 'web', 'rule', 'note', 'gone', 'gone text', 'cli', 0, 7, 7, 9)"
        )
        conn.execute("INSERT INTO memory_docs (memory_id, tokens) SELECT id, 10 * id FROM memories")
    db = PgDatabase(pg_url)
    try:
        with db.read() as conn:
            assert _mismatches(conn) == []
            rows = conn.execute(f"SELECT tokens, {COPIED} FROM memory_rank ORDER BY id").fetchall()
    finally:
        db.close()
    assert [tuple(row) for row in rows] == [
        (10, 5, 1, None, "shop", "decision", "memory"),
        (20, 7, 0, 9, "web", "rule", "note"),
    ]


def test_deleting_a_memory_or_a_fact_deletes_its_index_entries(pg_db: PgDatabase) -> None:
    memories, facts = PgMemories(pg_db), PgFacts(pg_db)
    kept, _ = memories.add_memory(_new("Kept note"))
    gone, _ = memories.add_memory(_new("Gone note"))
    kept_fact, _ = facts.add_fact(_fact("k8s"))
    gone_fact, _ = facts.add_fact(replace(_fact("nomad"), subject="Billing"))
    tables = ("memory_terms", "memory_docs", "memory_rank", "fact_terms", "fact_docs")
    keys = ("memory_id", "memory_id", "id", "fact_id", "fact_id")
    with pg_db.write() as conn:
        conn.execute("DELETE FROM memories WHERE id = %s", (gone.id,))
        conn.execute("DELETE FROM facts WHERE id = %s", (gone_fact.id,))
        left = [
            {row[0] for row in conn.execute(f"SELECT DISTINCT {key} FROM {table}")}
            for table, key in zip(tables, keys, strict=True)
        ]
    assert left == [{kept.id}] * 3 + [{kept_fact.id}] * 2
