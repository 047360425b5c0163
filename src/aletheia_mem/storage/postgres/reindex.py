"""The full-text reindex a migration leaves owed (``full_text_reindex``), run when a store opens,
as the SQLite store's (``storage.sqlite.reindex``).

Migrations 0016 (CJK bigrams, ``search.cjk``) and 0017 (a break before each run's bigrams) name
one: the memories and facts holding CJK text are indexed again with the tokens ``index_text``
now adds, other rows are left alone. The rows
are found with reads, then indexed again in one transaction that locks and deletes the step's
row, so that of several hub processes starting at once one does it, the others waiting for it.
Each row indexed again is stamped in the change feed (migration 0009): every process's postings
catch up on it.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from aletheia_mem.search.cjk import has_cjk
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgDatabase

CJK_STEP = "cjk_bigrams"
_OWED = "SELECT 1 FROM full_text_reindex WHERE step = %s"
_MEMORIES = (
    "SELECT m.id, m.title, m.text, coalesce(m.narrative, ''), m.facts, m.files FROM memories m"
    " JOIN memory_docs d ON d.memory_id = m.id"
)
_FACTS = (
    "SELECT f.id, f.subject, f.predicate, f.object FROM facts f"
    " JOIN fact_docs d ON d.fact_id = f.id"
)


def _cjk_ids(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> list[int]:
    """The ids of the rows ``sql`` reads (the id, then text columns) whose text holds CJK."""
    return [
        int(row[0])
        for row in conn.execute(sql, params)
        if has_cjk("\n".join(str(value) for value in row[1:]))
    ]


def _memory_texts(row: Any) -> tuple[str, ...]:
    """A memory's indexed columns (``memories.memory_texts``) from a row of ``_MEMORIES``."""
    facts, files = json.loads(row[4] or "[]"), json.loads(row[5] or "[]")
    return (row[1], row[2], row[3], "\n".join(facts), "\n".join(files))


def reindex_owed(db: PgDatabase) -> int:
    """Run the reindex the store owes, if any; returns how many rows were indexed again."""
    with db.read() as conn:
        if conn.execute(_OWED, (CJK_STEP,)).fetchone() is None:
            return 0
        memory_ids = _cjk_ids(conn, _MEMORIES)
        fact_ids = _cjk_ids(conn, _FACTS)
    with db.write() as conn:
        conn.execute("SET LOCAL lock_timeout = 0")  # wait for a process doing it already
        if conn.execute(_OWED + " FOR UPDATE", (CJK_STEP,)).fetchone() is None:
            return 0
        done = 0
        with full_text.indexing(conn) as totals:
            if memory_ids:
                rows = conn.execute(_MEMORIES + " WHERE m.id = ANY (%s)", (memory_ids,))
                for row in rows.fetchall():
                    full_text.index_row(
                        conn, full_text.MEMORY_INDEX, int(row[0]), _memory_texts(row), totals
                    )
                    done += 1
            if fact_ids:
                rows = conn.execute(_FACTS + " WHERE f.id = ANY (%s)", (fact_ids,))
                for row in rows.fetchall():
                    texts = (row[1], row[2], row[3])
                    full_text.index_row(conn, full_text.FACT_INDEX, int(row[0]), texts, totals)
                    done += 1
        conn.execute("DELETE FROM full_text_reindex WHERE step = %s", (CJK_STEP,))
    return done
