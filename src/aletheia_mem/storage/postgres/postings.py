"""What relevance search reads of the database, kept in this process's memory and brought up to
date from the change feed of migration 0009 before every search.

A search on PostgreSQL matched and scored in SQL cost the database more CPU than the hub process
that asked, so hub processes on one machine could not share it. Here each store keeps the
narrow ``memory_rank`` rows of every memory, and the postings (per memory, each column's
positions) of the terms searches used, so the database answers a search with a few index
probes that find nothing changed, and Python does the rest (``memory_search.rank_in_memory``).

Exactness: a refresh is one statement, so it reads one snapshot S. It reads back every
``memory_rank`` and ``memory_docs`` row and every tombstone whose ``changed`` (the writing
transaction's id) is at least the horizon H, the ``xmin`` of the previous refresh's snapshot,
and then takes S's ``xmin`` as H. A transaction the previous snapshot did not see has an id of
at least its ``xmin`` (ids below it had ended), whatever order transactions commit in, so no
change is missed; reading a row twice is harmless. The totals and any term not held yet are
read in S too, so everything a search computes is what S holds. A reader whose horizon is not
above ``memory_feed.purged`` (old tombstones purged, or a table truncated) loads afresh.

Memory: the rank rows are a tuple of eight small values per memory. The postings are bounded by
``max_postings``, counted as (term, memory) pairs: past it, the terms least recently searched
are dropped whole (a search's own terms are kept even if they alone pass the bound). Equal
entries are held once, so a pair costs about 100 bytes: measured at 10,000 memories
(bench/pg_postings_bench.py), 10,000 rank rows and 188,161 pairs of 384 terms took 18 MB, and
the default bound of 500,000 pairs holds about 50 MB.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from aletheia_mem.storage.postgres.database import PgDatabase, rows_on_generic_plan
from aletheia_mem.storage.postgres.phrases import Entries, grouped

DEFAULT_MAX_POSTINGS = 500_000
PAIRS_PER_MB = 10_000  # a held pair costs about 100 bytes
# Tombstones older than this are purged (readers idle longer load afresh), once an hour.
PURGE_AFTER = "1 day"
PURGE_EVERY_S = 3600.0

# tokens, created_at, pinned, stale_from, dismissed_at, project, type, kind
RankRow = tuple[int, int, int, int | None, int | None, str, str, str]

# One statement reads everything a refresh needs (one snapshot, one round trip), as rows of one
# shape whose first column says what each is:
#   0  the snapshot's xmin (term), memory_feed.purged (project), the index's rows and tokens
#   1  a rank row: id, tokens, created_at, pinned, stale_from, dismissed_at, project, type, kind
#   2  a memory whose terms may have changed (id), and whether it has a rank row (pinned)
#   3  a term row of such a memory: id, col (pinned), term, positions
#   4  a term row of a term not held yet, the same
_HEAD = (
    "SELECT 0::smallint AS part, NULL::bigint AS id, t.docs AS tokens, t.tokens AS created_at,"
    " NULL::smallint AS pinned, NULL::bigint AS stale_from, NULL::bigint AS dismissed_at,"
    " (SELECT purged::text FROM memory_feed) AS project, NULL::text AS type,"
    " NULL::text AS kind, pg_snapshot_xmin(pg_current_snapshot())::text AS term,"
    " NULL::text AS positions"
    " FROM (SELECT coalesce(sum(docs), 0)::bigint AS docs,"
    " coalesce(sum(tokens), 0)::bigint AS tokens FROM full_text_counts"
    " WHERE index_name = 'memories') AS t"
)
_RANK = (
    " UNION ALL SELECT 1, id, tokens, created_at, pinned, stale_from, dismissed_at, project, type,"
    " kind, NULL, NULL FROM memory_rank"
)
# The statement is prepared (psycopg does it after 5 runs), and runs on its generic plan: planned
# again for every run (as PostgreSQL chose, a custom plan's estimate being lower), it cost the
# backend 260 us where the generic plan's run costs 55 (bench, 2,000 runs). ``changed`` from the
# horizon up to the highest id is a range, which a generic plan takes for a few rows and so
# reads by index (``changed >= $1`` it took for a third of the table, and read memory_terms
# whole).
_SINCE = "changed BETWEEN %(horizon)s::xid8 AND '18446744073709551615'::xid8"
# The changed memories are a handful, whatever the store's size, so both of their lookups are
# written as index probes: a join or an IN there was planned (generic plan, tables analysed or
# not) as a scan of all of memory_rank (4 ms at 27,000 memories) or of all of memory_terms in
# parallel (47 ms at 10,000, before the first ANALYZE after a push), at every search after a save.
_CHANGED = (
    f" WHERE {_SINCE}"
    " UNION ALL SELECT 2, c.memory_id, NULL, NULL,"
    " coalesce((SELECT 1::smallint FROM memory_rank r WHERE r.id = c.memory_id), 0),"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL"
    f" FROM (SELECT memory_id FROM memory_docs WHERE {_SINCE}"
    f" UNION SELECT memory_id FROM memory_tombstones WHERE {_SINCE}) AS c"
    " UNION ALL SELECT 3, memory_id, NULL, NULL, col, NULL, NULL, NULL, NULL, NULL, term,"
    " positions::text FROM memory_terms WHERE memory_id = ANY (ARRAY"
    f" (SELECT memory_id FROM memory_docs WHERE {_SINCE}))"
)
_TERMS = (
    " UNION ALL SELECT 4, memory_id, NULL, NULL, col, NULL, NULL, NULL, NULL, NULL, term,"
    " positions::text FROM memory_terms WHERE term = ANY (%(terms)s)"
)


def refresh_statement(full: bool, missing: bool) -> str:
    """The one statement of a refresh: a full load, or the changes since the horizon; with the
    postings of the terms not held yet when ``missing``. Parameters: horizon, terms."""
    return _HEAD + _RANK + ("" if full else _CHANGED) + (_TERMS if missing else "")


_PURGE = (
    "WITH d AS (DELETE FROM memory_tombstones"
    f" WHERE deleted_at < now() - interval '{PURGE_AFTER}' RETURNING changed)"
    " UPDATE memory_feed SET purged = greatest(purged, (SELECT max(changed) FROM d))"
    " WHERE EXISTS (SELECT FROM d)"
)


class Postings:
    """One store's copy of the rank rows and of the postings of recently searched terms.

    Thread-safe: ``fresh`` holds a lock while it refreshes and while the caller reads, so a
    search reads one snapshot's state."""

    def __init__(self, max_postings: int = DEFAULT_MAX_POSTINGS) -> None:
        self.max_postings = max_postings
        self.rank: dict[int, RankRow] = {}
        self.totals = (0, 0)
        self._terms: OrderedDict[str, dict[int, Entries]] = OrderedDict()
        self._size = 0
        self._shared: dict[Entries, Entries] = {}  # equal entries held once
        self._horizon: int | None = None
        self._next_purge = 0.0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """The (term, memory) pairs held."""
        return self._size

    def held_terms(self) -> list[str]:
        return list(self._terms)

    def term(self, term: str) -> dict[int, Entries]:
        """The postings of a term of the current search (``fresh`` loaded them)."""
        return self._terms[term]

    @contextmanager
    def fresh(self, db: PgDatabase, terms: Collection[str]) -> Iterator[Postings]:
        """The postings brought up to date, with ``terms`` loaded, for the block's reads."""
        with self._lock:
            with db.read() as conn:
                if not self._refresh(conn, terms):  # tombstones were purged: load afresh
                    self._horizon = None
                    self._refresh(conn, terms)
                if self._horizon is not None and time.monotonic() >= self._next_purge:
                    self._next_purge = time.monotonic() + PURGE_EVERY_S
                    conn.execute(_PURGE)
            try:
                yield self
            finally:
                self._evict(terms)

    def _refresh(self, conn: psycopg.Connection[Any], terms: Collection[str]) -> bool:
        """Read the changes since the horizon and the missing terms in one statement (one
        snapshot) on its generic plan, and apply them. False (nothing applied): this reader
        must load afresh."""
        full = self._horizon is None
        missing = list(terms) if full else [t for t in terms if t not in self._terms]
        sql = refresh_statement(full, bool(missing))
        params = {"horizon": str(self._horizon), "terms": missing}
        parts: list[list[tuple[Any, ...]]] = [[], [], [], [], []]
        for row in rows_on_generic_plan(conn, sql, params):
            parts[row[0]].append(row)
        [(_, _, docs, tokens, _, _, _, purged, _, _, xmin, _)] = parts[0]
        if not full and int(purged) >= int(str(self._horizon)):
            return False
        rank = [row[1:10] for row in parts[1]]
        if full:
            self.rank = {row[0]: row[1:] for row in rank}
            self._terms.clear()
            self._size = 0
        else:
            self._apply(rank, [(row[1], row[4]) for row in parts[2]], parts[3])
        for term, postings in self._grouped(parts[4], missing).items():
            self._size += len(postings) - len(self._terms.get(term, ()))
            self._terms[term] = postings
        for term in terms:
            self._terms.move_to_end(term)
        self.totals = (int(docs), int(tokens))
        self._horizon = int(xmin)
        return True

    def _apply(
        self,
        rank: list[tuple[Any, ...]],
        docs: list[tuple[int, int]],
        changed: list[tuple[Any, ...]],
    ) -> None:
        """Changed rank rows replace the held ones, deleted ones go; the memories whose terms
        may have changed leave every held term and join again from their fresh rows."""
        for row in rank:
            self.rank[row[0]] = row[1:]
        for memory_id, live in docs:
            if not live:
                self.rank.pop(memory_id, None)
        if not docs or not self._terms:
            return
        ids = [memory_id for memory_id, _ in docs]
        for postings in self._terms.values():
            for memory_id in ids:
                if postings.pop(memory_id, None) is not None:
                    self._size -= 1
        held = [row for row in changed if row[10] in self._terms]
        for term, postings in self._grouped(held, ()).items():
            self._terms[term].update(postings)
            self._size += len(postings)

    def _evict(self, keep: Collection[str]) -> None:
        """Drop the least recently searched terms (not ``keep``) while past the bound."""
        for term in list(self._terms):
            if self._size <= self.max_postings:
                return
            if term not in keep:
                self._size -= len(self._terms.pop(term))

    def _grouped(
        self, rows: list[tuple[Any, ...]], terms: Iterable[str]
    ) -> dict[str, dict[int, Entries]]:
        """Term rows of the refresh (parts 3 and 4) as postings: per term (each of ``terms``
        at least, if empty), per memory, its entries. Equal entries are one object (most are
        alike: a term once in a title...): the postings take a third of the memory they took
        unshared."""
        if len(self._shared) > self.max_postings:  # many entries held no more
            self._shared.clear()
        term_rows = ((row[10], row[1], row[4], row[11]) for row in rows)
        return grouped(term_rows, {term: {} for term in terms}, self._shared)
