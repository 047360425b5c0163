"""The change feed's statement (postings.py) stays a few index probes on a large store: after a
save, a search reads back the handful of changed rows by index, whether or not PostgreSQL has
analysed the tables since a push filled them. Its generic plan once joined the changed memories
to all of memory_rank and all of memory_terms (a parallel scan): 47 ms at 10,000 memories, at
every search after a save."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql as sql_text

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.postgres.postings import refresh_statement
from aletheia_mem.storage.postgres.store import PostgresStore

NOW = 1_800_000_000_000
COPIES = 12_000
# Nodes that read a table whole, or start parallel workers to.
WHOLE_TABLE = ("Seq Scan on memory_rank", "Seq Scan on memory_terms", "Gather", "Hash Join")


def _memory(text: str) -> NewMemory:
    return NewMemory(
        project="alpha", type="decision", kind="memory", title="Feed plan", text=text,
        tool="test", created_at=NOW, dedupe_key=None, narrative=None, facts=(), files=(),
        pinned=False,
    )  # fmt: skip


def _copy_memory(conn: psycopg.Connection[Any], seed: int, count: int) -> None:
    """``count`` copies of memory ``seed``, its index rows included (the triggers write the
    rank rows and the change log as for any insert): a large store in seconds. Their terms
    take one of 997 suffixes, so that, as in a real store, a term is in few memories."""
    conn.execute(
        "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
        " updated_at) SELECT m.uid || '-' || n, m.project, m.type, m.kind, m.title, m.text,"
        " m.tool, m.created_at, m.updated_at FROM memories m, generate_series(1, %s) n"
        " WHERE m.id = %s",
        (count, seed),
    )
    conn.execute(
        "INSERT INTO memory_docs (memory_id, tokens) SELECT m.id, d.tokens"
        " FROM memories m, memory_docs d WHERE d.memory_id = %s AND m.id <> %s",
        (seed, seed),
    )
    conn.execute(
        "INSERT INTO memory_terms (term, memory_id, col, positions)"
        " SELECT t.term || (m.id %% 997), m.id, t.col, t.positions FROM memories m, memory_terms t"
        " WHERE t.memory_id = %s AND m.id <> %s",
        (seed, seed),
    )


def _plan(conn: psycopg.Connection[Any], horizon: str) -> str:
    """The generic plan of a refresh with changes since ``horizon`` and a term to load, run."""
    sql = refresh_statement(full=False, missing=True)
    sql = sql.replace("%(horizon)s", "$1").replace("%(terms)s", "$2")
    conn.execute("SET plan_cache_mode = force_generic_plan")
    conn.execute(f"PREPARE feed (xid8, text[]) AS {sql}")
    try:
        explain = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE feed ({}::xid8, ARRAY['cache'])"
        rows = conn.execute(sql_text.SQL(explain).format(horizon)).fetchall()
    finally:
        conn.execute("DEALLOCATE feed")
    return "\n".join(row[0] for row in rows)


@pytest.mark.parametrize("analysed", [False, True], ids=["before-analyze", "after-analyze"])
def test_a_search_after_a_save_reads_the_changed_rows_by_index(
    pg_store: PostgresStore, analysed: bool
) -> None:
    seed, _ = pg_store.add_memory(_memory("The cache keeps postings of every searched term."))
    with pg_store._db.write() as conn:
        _copy_memory(conn, seed.id, COPIES)
    with pg_store._db.read() as conn:
        if analysed:
            conn.execute("ANALYZE memories, memory_rank, memory_docs, memory_terms")
        # A transaction id after the copy's: the snapshot's xmin, as the store reads it, is
        # the whole cluster's, held back by any transaction still open in another database
        # (another test process), and then the copy counted as changed too.
        [(horizon,)] = conn.execute("SELECT pg_current_xact_id()::text")
    for n in range(3):
        pg_store.add_memory(_memory(f"A later save {n} about the cache and its terms."))
    with pg_store._db.read() as conn:
        plan = _plan(conn, horizon)
    assert "rows=3 " in plan or "rows=3)" in plan, plan  # the three saves were read back
    assert not [node for node in WHOLE_TABLE if node in plan], plan
