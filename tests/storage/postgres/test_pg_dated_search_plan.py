"""A date-ordered search (memory_search.dated_page_sql) reads each term's postings once, however
many memories its project holds and whether or not PostgreSQL has analysed them. Written as
``m.id IN (SELECT doc FROM h)``, the planner took the unanalysed memories for a few rows and read
the postings again for every memory of the project: 30 s a search at 7,000 memories, found by
running the same calls on a SQLite and a PostgreSQL stdio server (SQLite: 10 ms)."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.memory_search import dated_page_sql
from aletheia_mem.storage.postgres.store import PostgresStore

NOW = 1_800_000_000_000
MEMORIES = 1_500
LOOPS = re.compile(r"on memory_terms.*loops=(\d+)")
WORDS = ("cache", "retry", "queue", "token", "deploy", "schema")


def _fill(store: PostgresStore, count: int) -> None:
    """``count`` memories, nearly all in one project, each holding a few of the same words."""
    for n in range(count):
        text = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(n % 4 + 1))
        store.add_memory(
            NewMemory(
                project="shop" if n % 10 else "ops",
                type="note",
                kind="note",
                title=f"{text} {n}",
                text=text,
                tool="cli",
                created_at=NOW - n * 60_000,
                dedupe_key=None,
            )
        )


def _plan(conn: psycopg.Connection[Any], query: MemoryQuery) -> str:
    phrases = [full_text.phrase_tokens(term) for term in query.terms]
    sql, params = dated_page_sql(query, phrases)
    rows = conn.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql, params).fetchall()
    return "\n".join(row[0] for row in rows)


@pytest.mark.parametrize("analysed", [False, True], ids=["before-analyze", "after-analyze"])
@pytest.mark.parametrize("order", ["date_desc", "date_asc"])
def test_dated_search_reads_the_postings_once(
    pg_store: PostgresStore, analysed: bool, order: str
) -> None:
    _fill(pg_store, MEMORIES)
    query = MemoryQuery(
        terms=tuple(query_terms("cache retry queue token")),
        projects=("shop",),
        order=order,  # type: ignore[arg-type]
        offset=10,
        exclude_kinds=("work_state",),
    )
    with pg_store._db.read() as conn:
        if analysed:
            conn.execute("ANALYZE memories, memory_terms")
        plan = _plan(conn, query)
    loops = [int(found) for found in LOOPS.findall(plan)]
    assert loops, plan
    assert max(loops) == 1, plan
    page = pg_store.search_memories(query, NOW)
    assert len(page) == 20
    dates = [memory.created_at for memory in page]
    assert dates == sorted(dates, reverse=order == "date_desc")
