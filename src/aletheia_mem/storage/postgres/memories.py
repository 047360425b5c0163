"""Memories on PostgreSQL: saving (with the facts they state), reading, ranking, pinning.

Relevance search finds and ranks as the SQLite store does (``storage.sqlite.SqliteStore``):
the same score budget (terms rarest first while their matches fit), FTS5's bm25 with the
column weights of ``search.rank`` (``full_text.Bm25``), the same priors and the same tie-breaks,
so both stores return the same ids in the same order.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import psycopg

from aletheia_mem.search.rank import DAY_MS, DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import Memory, MemoryHead, MemoryQuery, NewFact, NewMemory
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgPart, Row
from aletheia_mem.storage.postgres.facts import put_fact, write_retrying

_COLUMNS = ", ".join(field.name for field in fields(Memory))
_M_COLUMNS = ", ".join(f"m.{field.name}" for field in fields(Memory))
_LAST = "\U0010ffff"  # above every character: the end of a prefix range


def _json_list(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _json_tuple(text: str) -> tuple[Any, ...]:
    return () if text == "[]" else tuple(json.loads(text))


def memory_from_row(row: Row) -> Memory:
    """A memory from a row of ``_COLUMNS``, read by position."""
    values = list(row[:16])
    values[8], values[9] = _json_tuple(values[8]), _json_tuple(values[9])
    values[11] = bool(values[11])
    return Memory(*values)


@dataclass(frozen=True)
class _Selection:
    """The phrases a search matches rows with (all of them, or any), their indexes among the
    query's, and the lowest id it scores (None: all)."""

    phrases: list[list[str]]
    indexes: list[int]
    match_all: bool = False
    newest: int | None = None


def memory_texts(new: NewMemory) -> tuple[str, ...]:
    """The columns of ``memory_terms`` a memory is indexed under, in order."""
    return (new.title, new.text, new.narrative or "", "\n".join(new.facts), "\n".join(new.files))


class PgMemories(PgPart):
    """The ``MemoryStore`` of the PostgreSQL store, with the work-state lists' two methods."""

    # -- writes ----------------------------------------------------------------------------

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]:
        """Insert a memory, and the facts it states, unless its dedupe key exists (then the
        facts still count, for the memory found). Returns the memory and whether it is new."""

        def work(conn: psycopg.Connection[Row]) -> tuple[Memory, bool]:
            with full_text.indexing(conn) as totals:
                memory_id = self._insert_memory(conn, new, totals)
                created = memory_id is not None
                if memory_id is None:
                    row = conn.execute(
                        "SELECT id FROM memories WHERE project = %s AND dedupe_key = %s",
                        (new.project, new.dedupe_key),
                    ).fetchone()
                    memory_id = int(_one(row)[0])  # the conflicting row, committed
                for fact in facts:  # facts sent again still count: new ones supersede
                    put_fact(conn, fact, memory_id, totals)
                return self._read_memory(conn, memory_id), created

        return write_retrying(self._db, work)

    def _insert_memory(
        self, conn: psycopg.Connection[Row], new: NewMemory, totals: full_text.Totals
    ) -> int | None:
        """The new memory's id; None when its dedupe key is taken (by a committed memory)."""
        row = conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, narrative, facts, files,"
            " tool, pinned, created_at, updated_at, dedupe_key)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (project, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"
            " RETURNING id",
            (
                uuid.uuid4().hex,
                new.project,
                new.type,
                new.kind,
                new.title,
                new.text,
                new.narrative,
                _json_list(new.facts),
                _json_list(new.files),
                new.tool,
                int(new.pinned),
                new.created_at,
                new.created_at,
                new.dedupe_key,
            ),
        ).fetchone()
        if row is None:
            return None
        memory_id = int(row[0])
        self._index_memory(conn, memory_id, new, totals)
        return memory_id

    @staticmethod
    def _index_memory(
        conn: psycopg.Connection[Row], memory_id: int, new: NewMemory, totals: full_text.Totals
    ) -> None:
        full_text.index_row(conn, full_text.MEMORY_INDEX, memory_id, memory_texts(new), totals)
        conn.execute("DELETE FROM memory_files WHERE memory_id = %s", (memory_id,))
        if new.files:
            conn.execute(
                "INSERT INTO memory_files (memory_id, path, path_reversed)"
                " SELECT %s, p, reverse(p) FROM unnest(%s::text[]) AS u (p)"
                " ON CONFLICT DO NOTHING",
                (memory_id, list(new.files)),
            )

    @staticmethod
    def _read_memory(conn: psycopg.Connection[Row], memory_id: int) -> Memory:
        row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = %s", (memory_id,))
        return memory_from_row(_one(row.fetchone()))

    def put_work_state(self, new: NewMemory) -> int:
        """Create or replace the work-state list named by ``new.dedupe_key``; its id stays."""

        def work(conn: psycopg.Connection[Row]) -> int:
            with full_text.indexing(conn) as totals:
                memory_id = self._insert_memory(conn, new, totals)
                if memory_id is not None:
                    return memory_id
                row = conn.execute(
                    "UPDATE memories SET title = %s, text = %s, tool = %s, updated_at = %s,"
                    " dismissed_at = NULL, dismiss_reason = NULL"
                    " WHERE project = %s AND dedupe_key = %s RETURNING id",
                    (new.title, new.text, new.tool, new.created_at, new.project, new.dedupe_key),
                ).fetchone()
                memory_id = int(_one(row)[0])
                self._index_memory(conn, memory_id, new, totals)
                return memory_id

        return write_retrying(self._db, work)

    def set_pinned(self, memory_id: int, pinned: bool, at: int) -> Memory | None:
        """Pin or unpin a memory; None when there is no such memory."""
        with self._db.write() as conn:
            conn.execute(
                "UPDATE memories SET pinned = %s, updated_at = %s WHERE id = %s AND pinned != %s",
                (int(pinned), at, memory_id, int(pinned)),
            )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE id = %s", (memory_id,)
            ).fetchone()
        return None if row is None else memory_from_row(row)

    # -- reads -----------------------------------------------------------------------------

    def _memories(self, sql: str, params: Sequence[Any]) -> list[Memory]:
        with self._db.read() as conn:
            return [memory_from_row(row) for row in conn.execute(sql, params).fetchall()]

    def _ids(self, sql: str, params: Sequence[Any]) -> set[int]:
        with self._db.read() as conn:
            return {int(row[0]) for row in conn.execute(sql, params).fetchall()}

    def find_memory(self, project: str, dedupe_key: str) -> Memory | None:
        found = self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE project = %s AND dedupe_key = %s",
            (project, dedupe_key),
        )
        return found[0] if found else None

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        """The memories with these ids, newest first; unknown ids are skipped."""
        if not ids:
            return []
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ANY (%s)"
            " ORDER BY created_at DESC, id DESC",
            (list(ids),),
        )

    def get_memory(self, memory_id: int) -> Memory | None:
        found = self.get_memories([memory_id])
        return found[0] if found else None

    def memory_heads(self, ids: Sequence[int]) -> list[MemoryHead]:
        """The heads of the memories with these ids, in that order; unknown ids are skipped."""
        if not ids:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, project, type, title, tool, pinned, created_at FROM memories"
                " WHERE id = ANY (%s)",
                (list(ids),),
            ).fetchall()
        by_id = {
            row[0]: MemoryHead(row[0], row[1], row[2], row[3], row[4], bool(row[5]), row[6])
            for row in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        return self._ids("SELECT id FROM memories WHERE id = ANY (%s)", (list(ids),))

    def dismissed_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        return self._ids(
            "SELECT id FROM memories WHERE dismissed_at IS NOT NULL AND id = ANY (%s)", (list(ids),)
        )

    def stale_memory_ids(self, ids: Sequence[int]) -> set[int]:
        """Those of ``ids`` whose stated facts have all been superseded."""
        if not ids:
            return set()
        return self._ids(
            "SELECT id FROM memory_rank WHERE stale = 1 AND id = ANY (%s)", (list(ids),)
        )

    def has_memories(self, projects: tuple[str, ...] | None) -> bool:
        """Whether any live memory exists (in these projects)."""
        sql, params = "SELECT 1 FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND project = ANY (%s)"
            params.append(list(projects))
        return bool(self._ids(sql + " LIMIT 1", params))

    def count_memories(self, projects: tuple[str, ...] | None) -> int:
        sql, params = "SELECT count(*) FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND project = ANY (%s)"
            params.append(list(projects))
        with self._db.read() as conn:
            row = conn.execute(sql, params).fetchone()
        return int(row[0]) if row is not None else 0

    def project_names(self, limit: int = 500) -> list[str]:
        """The projects that have memories, by name: one index seek per project."""
        with self._db.read() as conn:
            rows = conn.execute(
                "WITH RECURSIVE p (name, n) AS ("
                " SELECT min(project), 1 FROM memories"
                " UNION ALL SELECT (SELECT min(project) FROM memories WHERE project > p.name),"
                " n + 1 FROM p WHERE p.name IS NOT NULL AND n < %s)"
                " SELECT name FROM p WHERE name IS NOT NULL",
                (limit,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def keyed_memories(self, project: str, key_prefix: str, kind: str, limit: int) -> list[Memory]:
        """A project's live memories of one kind whose dedupe key starts with ``key_prefix``
        (the work-state lists), newest write first."""
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE project = %s AND dedupe_key >= %s"
            " AND dedupe_key < %s AND kind = %s AND dismissed_at IS NULL"
            " ORDER BY updated_at DESC, id DESC LIMIT %s",
            (project, key_prefix, key_prefix + _LAST, kind, limit),
        )

    def neighbours(
        self, anchor: Memory, project: str | None, count: int, later: bool
    ) -> list[Memory]:
        """Live memories just before (or after) the anchor in time, nearest first."""
        sign, direction = (">", "ASC") if later else ("<", "DESC")
        sql = (
            f"SELECT {_COLUMNS} FROM memories WHERE dismissed_at IS NULL AND id != %s"
            f" AND (created_at, id) {sign} (%s, %s)"
        )
        params: list[Any] = [anchor.id, anchor.created_at, anchor.id]
        if project is not None:
            sql += " AND project = %s"
            params.append(project)
        sql += f" ORDER BY created_at {direction}, id {direction} LIMIT %s"
        return self._memories(sql, [*params, count])

    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]:
        """The newest live memories of a project, pinned or unpinned."""
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories"
            " WHERE project = %s AND pinned = %s AND dismissed_at IS NULL"
            " AND NOT (kind = ANY (%s)) ORDER BY created_at DESC, id DESC LIMIT %s",
            (project, int(pinned), list(exclude_kinds), limit),
        )

    # -- search ----------------------------------------------------------------------------

    def search_memories(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[Memory]:
        """One page of live memories matching the query, in the requested order."""
        where, params = _filters(query)
        if query.file is not None:
            return self._memories_by_file(query, where, params)
        if query.terms:
            ids = self.rank_memory_ids(query, now, ranking)
            by_id = {memory.id: memory for memory in self.get_memories(ids)}
            return [by_id[i] for i in ids if i in by_id]
        sql = f"SELECT {_M_COLUMNS} FROM memories m WHERE " + " AND ".join(where)
        sql += f" ORDER BY {_date_order(query)} LIMIT %s OFFSET %s"
        return self._memories(sql, [*params, query.limit, query.offset])

    def _memories_by_file(
        self, query: MemoryQuery, where: list[str], params: list[Any]
    ) -> list[Memory]:
        path = query.file or ""
        if query.file_suffix:
            match = "f.path_reversed >= %s AND f.path_reversed < %s"
            values: list[Any] = [path[::-1], path[::-1] + _LAST]
        else:
            match, values = "f.path = %s", [path]
        sql = (
            f"SELECT {_M_COLUMNS} FROM memories m WHERE m.id IN"
            f" (SELECT f.memory_id FROM memory_files f WHERE {match}) AND "
            + " AND ".join(where)
            + " ORDER BY m.created_at DESC, m.id DESC LIMIT %s OFFSET %s"
        )
        return self._memories(sql, [*values, *params, query.limit, query.offset])

    def rank_memory_ids(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[int]:
        """The ids of one page of live memories matching ``query.terms``, best first."""
        if not query.terms:
            return []
        phrases = [full_text.phrase_tokens(term) for term in query.terms]
        scored = query.order == "relevance"
        with self._db.read() as conn:
            counts = full_text.phrase_counts(conn, full_text.MEMORY_INDEX, phrases)
            selection = _select(conn, phrases, counts, ranking.score_budget if scored else 0)
            if selection is None:
                return []
            if not scored:
                return _ids_by_date(conn, query, selection)
            chosen = [counts[i] for i in selection.indexes]
            bm25 = full_text.Bm25.of(conn, full_text.MEMORY_INDEX, chosen, ranking.bm25_weights())
            rows = _candidates(conn, query, selection)
        return _page(_rank(rows, len(selection.phrases), bm25, now, ranking), query)


def _one(row: Row | None) -> Row:
    """The row a statement of this module always finds (in the transaction that wrote it)."""
    if row is None:
        raise RuntimeError("a row written in this transaction is missing")
    return row


def _filters(query: MemoryQuery) -> tuple[list[str], list[Any]]:
    """The conditions on ``m`` (memories) of the query's filters, and their parameters."""
    where = ["m.dismissed_at IS NOT NULL" if query.dismissed else "m.dismissed_at IS NULL"]
    params: list[Any] = []
    conditions = (
        ("m.project = ANY (%s)", None if query.projects is None else list(query.projects)),
        ("m.type = %s", query.type),
        ("m.kind = %s", query.kind),
        ("NOT (m.kind = ANY (%s))", list(query.exclude_kinds) or None),
        ("m.created_at >= %s", query.since),
        ("m.created_at < %s", query.until),
    )
    for condition, value in conditions:
        if value is not None:
            where.append(condition)
            params.append(value)
    return where, params


def _date_order(query: MemoryQuery) -> str:
    if query.order == "date_asc":
        return "m.created_at ASC, m.id ASC"
    return "m.created_at DESC, m.id DESC"


def _select(
    conn: psycopg.Connection[Row], phrases: list[list[str]], counts: list[int], budget: int
) -> _Selection | None:
    """The phrases to match and score, as ``SqliteStore._match`` picks them; None: no match.

    A relevance search scores about ``budget`` rows: its phrases rarest first while their
    matches fit (counts above the budget all count as ``budget + 1``, as SQLite's bounded
    counts do). When even the rarest is too common, every phrase must match, and if that still
    matches too much, the newest ``budget + 1`` matches are the ones scored.
    """
    if not any(counts):
        return None
    if budget <= 0:
        return _Selection(phrases, list(range(len(phrases))))
    counted = sorted((min(count, budget + 1), i) for i, count in enumerate(counts))
    chosen: list[int] = []
    total = 0
    for matches, index in counted:
        if matches > 0 and total + matches <= budget:
            chosen.append(index)
            total += matches
    if chosen:
        return _Selection([phrases[i] for i in sorted(chosen)], sorted(chosen))
    hits, params = full_text.hits_sql(full_text.MEMORY_INDEX, phrases)
    row = conn.execute(
        f"SELECT doc FROM ({hits}) AS h GROUP BY doc HAVING count(DISTINCT i) = %s"
        " ORDER BY doc DESC LIMIT 1 OFFSET %s",
        [*params, len(phrases), budget],
    ).fetchone()
    newest = None if row is None else int(row[0])
    return _Selection(phrases, list(range(len(phrases))), match_all=True, newest=newest)


def _matching_sql(selection: _Selection, query: MemoryQuery) -> tuple[str, str, list[Any]]:
    """The hits CTE of the selection, and the conditions on ``m`` its matches meet."""
    hits, params = full_text.hits_sql(full_text.MEMORY_INDEX, selection.phrases)
    where, values = _filters(query)
    params += values
    if selection.match_all:
        where.append("m.id IN (SELECT doc FROM h GROUP BY doc HAVING count(DISTINCT i) = %s)")
        params.append(len(selection.phrases))
    if selection.newest is not None:
        where.append("m.id >= %s")
        params.append(selection.newest)
    return hits, " AND ".join(where), params


def _ids_by_date(
    conn: psycopg.Connection[Row], query: MemoryQuery, selection: _Selection
) -> list[int]:
    hits, where, params = _matching_sql(selection, query)
    rows = conn.execute(
        f"WITH h AS ({hits}) SELECT m.id FROM memories m"
        f" WHERE m.id IN (SELECT doc FROM h) AND {where}"
        f" ORDER BY {_date_order(query)} LIMIT %s OFFSET %s",
        [*params, query.limit, query.offset],
    ).fetchall()
    return [int(row[0]) for row in rows]


def _candidates(
    conn: psycopg.Connection[Row], query: MemoryQuery, selection: _Selection
) -> list[Row]:
    """Per matching row, phrase and column: the hits, with what the priors read."""
    hits, where, params = _matching_sql(selection, query)
    return conn.execute(
        f"WITH h AS ({hits}) SELECT h.doc, h.i, h.col, h.hits, d.tokens, m.created_at,"
        " m.pinned, r.stale FROM h JOIN memories m ON m.id = h.doc"
        " JOIN memory_rank r ON r.id = h.doc JOIN memory_docs d ON d.memory_id = h.doc"
        f" WHERE {where}",
        params,
    ).fetchall()


def _rank(
    rows: Sequence[Row], phrases: int, bm25: full_text.Bm25, now: int, ranking: Ranking
) -> list[int]:
    """Ids best first: bm25 times the priors, computed in the order of SQLite's expression
    (``SqliteStore._order``), so equal scores stay equal; then newest, then highest id."""
    docs: dict[int, tuple[list[list[tuple[int, int]]], Row]] = {}
    for row in rows:
        entry = docs.setdefault(int(row[0]), ([[] for _ in range(phrases)], row))
        entry[0][int(row[1])].append((int(row[2]), int(row[3])))
    scale = ranking.recency_scale_days * DAY_MS
    boost = ranking.recency_boost * scale
    keyed = []
    for doc, (hits, row) in docs.items():
        for per_phrase in hits:
            per_phrase.sort()
        created_at, pinned, stale = int(row[5]), int(row[6]), int(row[7])
        value = (
            bm25.score(hits, int(row[4]))
            * (1.0 + ranking.pinned_boost * pinned)
            * (1.0 + boost / (scale + max(now - created_at, 0)))
            * (ranking.stale_factor if stale else 1.0)
        )
        keyed.append((value, -created_at, -doc))
    keyed.sort()
    return [-key[2] for key in keyed]


def _page(ids: list[int], query: MemoryQuery) -> list[int]:
    return ids[query.offset : query.offset + query.limit]
