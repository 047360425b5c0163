"""Writes to the full-text indexes, kept in few b-trees so that searches read few of them.

Every write transaction adds a b-tree to each index it writes (``memory_fts``, ``fact_fts``).
FTS5 merges them in the background of later writes, but in proportion to what those write, so a
store written one memory at a time piles up a dozen or more b-trees, each read for every word of
every search (about 10 µs each per search). So each transaction that indexed something also
does a little merging of its own in each index it wrote (up to ``MERGE_PAGES`` pages, two
b-trees at a time; every ``UPKEEP_EVERY``-th, in every index), and once the rows indexed since
the last full merge reach a quarter of the memories (looked at every ``UPKEEP_EVERY``-th), it
merges each index into one b-tree (FTS5's ``optimize``): that costs time in proportion to the
index, so it comes rarer as the store grows and the cost per write stays the same.

A save writes nothing for this bookkeeping: which indexes a transaction wrote is kept by its
connection (``IndexingConnection``), and the rows indexed under new ids are counted by how far
the id sequences moved since the last full merge (see migration 0013).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from aletheia_mem.search.text import index_text

MIN_CHANGES = 64  # a small store is not worth a full merge after every few saves
# Merge fully once the changes since the last full merge reach 1/SHARE of the store. A full
# merge rewrites the whole index (~28 ms of CPU at 10,000 memories) and the checkpoint after it
# copies those pages again; at 8 the index averaged 5.8 b-trees over 3,000 saves, at 4 6.1
# (with none, 7.0), for half the full merges.
SHARE = 4
MERGE_PAGES = 16  # merge work per write transaction and index, in pages
INDEXES = ("memory_fts", "fact_fts")
# Every this many transactions that index, a connection also merges the indexes the
# transaction did not write (a fact-less save leaves ``fact_fts`` as it was: merging it again
# each time finds nothing to do, at a fiftieth of the save) and checks whether a full merge is
# due (at most this many transactions late, against thousands of rows).
UPKEEP_EVERY = 8


_SEQ = "coalesce((SELECT seq FROM sqlite_sequence WHERE name = '{}'), 0)"
_MEMORY_SEQ, _FACT_SEQ = _SEQ.format("memories"), _SEQ.format("facts")


class IndexingConnection(sqlite3.Connection):
    """A store connection that remembers which full-text indexes its open transaction wrote."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.indexes_written: set[str] = set()
        self.indexing_transactions = 0  # committed or not: it only spaces the upkeep out


def _written(conn: sqlite3.Connection) -> set[str]:
    """The indexes the open transaction wrote (none known on a plain connection)."""
    return conn.indexes_written if isinstance(conn, IndexingConnection) else set()


def note_indexed(conn: sqlite3.Connection, index: str, *, fresh: bool) -> None:
    """Note one row indexed in ``index`` in the open transaction. ``fresh``: under a new id,
    which the id sequences count; a row indexed again is counted in ``fts_upkeep.changes``."""
    _written(conn).add(index)
    if not fresh:
        conn.execute("UPDATE fts_upkeep SET changes = changes + 1")


def changes_since_merge(conn: sqlite3.Connection) -> tuple[int, int]:
    """The rows indexed since the last full merge, and how many memories there were then."""
    changes, merged_rows = conn.execute(
        f"SELECT changes + {_MEMORY_SEQ} - memory_seq + {_FACT_SEQ} - fact_seq, merged_rows"
        " FROM fts_upkeep"
    ).fetchone()
    return int(changes), int(merged_rows)


def forget_written(conn: sqlite3.Connection) -> None:
    """Forget the indexes a transaction wrote, when it rolls back."""
    _written(conn).clear()


def index_fact(
    conn: sqlite3.Connection,
    fact_id: int,
    subject: str,
    predicate: str,
    obj: str,
    *,
    fresh: bool = True,
) -> None:
    """Index a fact's words under its id (its earlier entry, if any, already removed);
    ``fresh``: the id is new."""
    conn.execute(
        "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
        (fact_id, index_text(subject), index_text(predicate), index_text(obj)),
    )
    note_indexed(conn, "fact_fts", fresh=fresh)


def index_title_again(conn: sqlite3.Connection, memory_id: int, title: str) -> None:
    """Index a memory's new title in place of its old one (its other columns as they are);
    nothing for a memory the index does not hold."""
    changed = conn.execute(
        "UPDATE memory_fts SET title = ? WHERE rowid = ?", (index_text(title), memory_id)
    ).rowcount
    if changed:
        note_indexed(conn, "memory_fts", fresh=False)


def tidy(conn: sqlite3.Connection) -> None:
    """The merging due from the current transaction, run in it just before it commits."""
    written = _written(conn)
    if not written:
        return
    if _upkeep_due(conn):
        changes, merged_rows = changes_since_merge(conn)
        if changes >= max(MIN_CHANGES, merged_rows // SHARE):
            merge_fully(conn)
            return
        indexes: tuple[str, ...] | set[str] = INDEXES
    else:
        indexes = written
    for index in indexes:
        conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
    written.clear()


def _upkeep_due(conn: sqlite3.Connection) -> bool:
    """Whether this transaction does the upkeep of every ``UPKEEP_EVERY``-th (a plain
    connection: always), the first of a connection included."""
    if not isinstance(conn, IndexingConnection):
        return True
    due = conn.indexing_transactions % UPKEEP_EVERY == 0
    conn.indexing_transactions += 1
    return due


def merge_fully(conn: sqlite3.Connection) -> None:
    """Merge each index into one b-tree (in the caller's transaction)."""
    for index in INDEXES:
        conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
    conn.execute(
        "UPDATE fts_upkeep SET changes = 0, merged_rows = (SELECT count(*) FROM memories),"
        f" memory_seq = {_MEMORY_SEQ}, fact_seq = {_FACT_SEQ}"
    )
    _written(conn).clear()
