"""The full-text reindex a migration leaves owed (``full_text_reindex``), run when a store opens,
as the SQLite store's (``storage.sqlite.reindex``).

Each owed step names the rows a tokenizer change altered (``storage.reindex_steps``):
``cjk_bigrams`` (migrations 0016 and 0017) those holding CJK text, ``id_parts`` (0018) those
holding a made-up id whose letter runs were indexed as words. They are indexed again with the
tokens ``index_text`` now gives, other rows are left alone. The rows
are found with reads, then indexed again in one transaction that locks and deletes the step's
row, so that of several hub processes starting at once one does it, the others waiting for it.
Each row indexed again is stamped in the change feed (migration 0009): every process's postings
catch up on it.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.reindex_steps import STEPS, known_steps

_OWED = "SELECT step FROM full_text_reindex"
_MEMORIES = (
    "SELECT m.id, m.title, m.text, coalesce(m.narrative, ''), m.facts, m.files FROM memories m"
    " JOIN memory_docs d ON d.memory_id = m.id"
)
_FACTS = (
    "SELECT f.id, f.subject, f.predicate, f.object FROM facts f"
    " JOIN fact_docs d ON d.fact_id = f.id"
)


def _owed(conn: psycopg.Connection[Any], lock: bool = False) -> list[str]:
    """The known steps the store owes, in ``STEPS``' order (their rows locked with ``lock``)."""
    return known_steps(
        {str(row[0]) for row in conn.execute(_OWED + (" FOR UPDATE" if lock else ""))}
    )


def _ids_for(conn: psycopg.Connection[Any], sql: str, steps: list[str]) -> list[int]:
    """The ids of the rows ``sql`` reads (the id, then text columns) whose text one of the
    ``steps``' tests finds."""
    tests = [STEPS[step] for step in steps]
    found = []
    for row in conn.execute(sql):
        text = "\n".join(str(value) for value in row[1:])
        if any(test(text) for test in tests):
            found.append(int(row[0]))
    return found


def _memory_texts(row: Any) -> tuple[str, ...]:
    """A memory's indexed columns (``memories.memory_texts``) from a row of ``_MEMORIES``."""
    facts, files = json.loads(row[4] or "[]"), json.loads(row[5] or "[]")
    return (row[1], row[2], row[3], "\n".join(facts), "\n".join(files))


def index_memories_again(conn: psycopg.Connection[Any], memory_ids: list[int]) -> int:
    """Index again the memories of ``memory_ids`` the index holds, in the caller's transaction;
    returns how many."""
    done = 0
    if not memory_ids:
        return done
    with full_text.indexing(conn) as totals:
        rows = conn.execute(_MEMORIES + " WHERE m.id = ANY (%s)", (memory_ids,))
        for row in rows.fetchall():
            full_text.index_row(
                conn, full_text.MEMORY_INDEX, int(row[0]), _memory_texts(row), totals
            )
            done += 1
    return done


def reindex_owed(db: PgDatabase) -> int:
    """Run the reindex the store owes, if any; returns how many rows were indexed again."""
    with db.read() as conn:
        steps = _owed(conn)
        if not steps:
            return 0
        memory_ids = _ids_for(conn, _MEMORIES, steps)
        fact_ids = _ids_for(conn, _FACTS, steps)
    with db.write() as conn:
        conn.execute("SET LOCAL lock_timeout = 0")  # wait for a process doing it already
        if _owed(conn, lock=True) != steps:
            return 0
        done = index_memories_again(conn, memory_ids)
        with full_text.indexing(conn) as totals:
            if fact_ids:
                rows = conn.execute(_FACTS + " WHERE f.id = ANY (%s)", (fact_ids,))
                for row in rows.fetchall():
                    texts = (row[1], row[2], row[3])
                    full_text.index_row(conn, full_text.FACT_INDEX, int(row[0]), texts, totals)
                    done += 1
        conn.execute("DELETE FROM full_text_reindex WHERE step = ANY (%s)", (steps,))
    return done
