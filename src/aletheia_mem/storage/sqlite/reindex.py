"""The full-text reindex a migration leaves owed (``full_text_reindex``), run when a store opens.

Migrations 0019 (CJK bigrams, ``search.cjk``) and 0020 (a break before each run's bigrams) name
one: the memories and facts holding CJK text are indexed again with the tokens ``index_text``
now adds; other rows index as they did and are left alone. The rows are found with reads, then
indexed again in one write transaction that deletes the step's row, so that of several
processes opening the store at once one does it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

from aletheia_mem.search.cjk import has_cjk
from aletheia_mem.storage import full_text
from aletheia_mem.storage.sqlite.memories import MEMORY_FTS_INSERT, memory_fts_row
from aletheia_mem.storage.sqlite.rows import read_memories

CJK_STEP = "cjk_bigrams"
_BATCH = 500  # ids per statement, within SQLite's limit on parameters


def _owed(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM full_text_reindex WHERE step = ?", (CJK_STEP,)).fetchone()
    return row is not None


def _cjk_rows(conn: sqlite3.Connection, sql: str, lists: int = 0) -> list[int]:
    """The ids of the rows ``sql`` reads (the id, then text columns, the last ``lists`` of them
    JSON lists) whose text holds CJK; a list written with escapes is read as its values."""
    found = []
    for row in conn.execute(sql):
        values = [str(value) for value in row[1:] if value]
        text = "\n".join(values)
        if lists and "\\u" in text:
            text += "\n".join(str(json.loads(value)) for value in row[len(row) - lists :])
        if has_cjk(text):
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
    if not _owed(conn):
        return 0
    memory_ids = _cjk_rows(
        conn, "SELECT id, title, text, narrative, facts, files FROM memories", lists=2
    )
    fact_ids = _cjk_rows(conn, "SELECT id, subject, predicate, object FROM facts")
    done = 0
    with write() as tx:
        if not _owed(tx):  # another process did it first
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
        tx.execute("DELETE FROM full_text_reindex WHERE step = ?", (CJK_STEP,))
    return done
