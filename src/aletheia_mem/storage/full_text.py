"""Writes to the full-text indexes, kept in few b-trees so that searches read few of them.

Every write transaction adds a b-tree to each index it writes (``memory_fts``, ``fact_fts``).
FTS5 merges them in the background of later writes, but in proportion to what those write, so a
store written one memory at a time piles up a dozen or more b-trees, each read for every word of
every search (about 10 µs each per search). So each transaction that indexed something also
does a little merging of its own (up to ``MERGE_PAGES`` pages per index, two b-trees at a
time), and once the rows indexed since the last full merge reach an eighth of the memories, it
merges each index into one b-tree (FTS5's ``optimize``): that costs time in proportion to the
index, so it comes rarer as the store grows and the cost per write stays the same.
"""

from __future__ import annotations

import sqlite3

from aletheia_mem.search.text import index_text

MIN_CHANGES = 64  # a small store is not worth a full merge after every few saves
SHARE = 8  # merge fully once the changes since the last full merge reach 1/SHARE of the store
MERGE_PAGES = 16  # merge work per write transaction and index, in pages
INDEXES = ("memory_fts", "fact_fts")


def note_indexed(conn: sqlite3.Connection) -> None:
    """Count one row indexed in the current transaction."""
    conn.execute("UPDATE fts_upkeep SET changes = changes + 1, pending = 1")


def index_fact(
    conn: sqlite3.Connection, fact_id: int, subject: str, predicate: str, obj: str
) -> None:
    """Index a fact's words under its id (its earlier entry, if any, already removed)."""
    conn.execute(
        "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
        (fact_id, index_text(subject), index_text(predicate), index_text(obj)),
    )
    note_indexed(conn)


def tidy(conn: sqlite3.Connection) -> None:
    """The merging due from the current transaction, run in it just before it commits."""
    pending, changes, merged_rows = conn.execute(
        "SELECT pending, changes, merged_rows FROM fts_upkeep"
    ).fetchone()
    if not pending:
        return
    if changes >= max(MIN_CHANGES, merged_rows // SHARE):
        merge_fully(conn)
    else:
        for index in INDEXES:
            conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
        conn.execute("UPDATE fts_upkeep SET pending = 0")


def merge_fully(conn: sqlite3.Connection) -> None:
    """Merge each index into one b-tree (in the caller's transaction)."""
    for index in INDEXES:
        conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
    rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    conn.execute("UPDATE fts_upkeep SET changes = 0, merged_rows = ?, pending = 0", (rows,))
