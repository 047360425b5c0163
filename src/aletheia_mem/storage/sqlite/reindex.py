"""The full-text reindex a migration leaves owed (``full_text_reindex``), run when a store opens.

Each owed step (``storage.reindex_steps``: migrations 0019 and 0020 owe ``cjk_bigrams``, 0021
``id_parts``) names the memories and facts whose index a tokenizer change altered, found by
their text. Those rows are indexed again with the tokens ``index_text`` now gives; other rows
are left alone. The rows are found with reads, then indexed again in one write transaction
that deletes the steps' rows, so that of several processes opening the store at once one does
it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

from aletheia_mem.storage import full_text
from aletheia_mem.storage.reindex_steps import STEPS, known_steps
from aletheia_mem.storage.sqlite.memories import MEMORY_FTS_INSERT, memory_fts_row
from aletheia_mem.storage.sqlite.rows import read_memories

_BATCH = 500  # ids per statement, within SQLite's limit on parameters


def owed_steps(conn: sqlite3.Connection) -> list[str]:
    """The known steps the store owes, in ``STEPS``' order."""
    return known_steps({str(row[0]) for row in conn.execute("SELECT step FROM full_text_reindex")})


def _rows_for(
    conn: sqlite3.Connection, sql: str, tests: list[Callable[[str], bool]], lists: int = 0
) -> list[int]:
    """The ids of the rows ``sql`` reads (the id, then text columns, the last ``lists`` of them
    JSON lists) whose text one of ``tests`` finds; a list written with escapes is read as its
    values."""
    found = []
    for row in conn.execute(sql):
        values = [str(value) for value in row[1:] if value]
        text = "\n".join(values)
        if lists and "\\u" in text:
            text += "\n".join(str(json.loads(value)) for value in row[len(row) - lists :])
        if any(test(text) for test in tests):
            found.append(int(row[0]))
    return found


def _batches(ids: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), _BATCH):
        yield ids[start : start + _BATCH]


def reindex_owed(
    conn: sqlite3.Connection, write: Callable[[], AbstractContextManager[sqlite3.Connection]]
) -> int:
    """Run the reindex the store owes, if any (``write``: the store's write transaction);
    returns how many rows were indexed again."""
    steps = owed_steps(conn)
    if not steps:
        return 0
    tests = [STEPS[step] for step in steps]
    memory_ids = _rows_for(
        conn, "SELECT id, title, text, narrative, facts, files FROM memories", tests, lists=2
    )
    fact_ids = _rows_for(conn, "SELECT id, subject, predicate, object FROM facts", tests)
    done = 0
    with write() as tx:
        if owed_steps(tx) != steps:  # another process did it first
            return 0
        for batch in _batches(memory_ids):
            for memory in read_memories(tx, batch):
                if tx.execute("SELECT 1 FROM memory_fts WHERE rowid = ?", (memory.id,)).fetchone():
                    tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (memory.id,))
                    tx.execute(MEMORY_FTS_INSERT, memory_fts_row(memory.id, memory))
                    full_text.note_indexed(tx, "memory_fts", fresh=False)
                    done += 1
        for fact_id in fact_ids:
            row = tx.execute(
                "SELECT f.subject, f.predicate, f.object FROM facts f"
                " JOIN fact_fts ON fact_fts.rowid = f.id WHERE f.id = ?",
                (fact_id,),
            ).fetchone()
            if row is not None:
                tx.execute("DELETE FROM fact_fts WHERE rowid = ?", (fact_id,))
                full_text.index_fact(tx, fact_id, row[0], row[1], row[2], fresh=False)
                done += 1
        tx.executemany("DELETE FROM full_text_reindex WHERE step = ?", [(s,) for s in steps])
    return done
