"""Relevance search of memories on PostgreSQL, as the SQLite store ranks them.

``SqliteStore.rank_memory_ids`` step by step, in SQL (``rank_memory_ids``) or, the same steps
on postings held in memory (``rank_in_memory``, see ``postings``): the score budget picks the
phrases (rarest first while their matches fit, else all of them, cut to the newest matches),
FTS5's bm25 scores them
with the column weights of ``search.rank`` (``full_text.Bm25``), the priors of
``SqliteStore._order`` scale the score in the same order of operations, and ties go to the
newest, then the highest id: both stores return the same ids in the same order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from aletheia_mem.search.query import first_tier, prefix_bounds
from aletheia_mem.search.rank import DAY_MS, Ranking, rarest_within_budget
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgDatabase, Row
from aletheia_mem.storage.postgres.phrases import PhraseMatches
from aletheia_mem.storage.postgres.postings import Postings, RankRow


@dataclass(frozen=True)
class _Selection:
    """The phrases a search matches rows with (all of them, or any), their indexes among the
    query's, and the lowest id it scores (None: all); from held postings, when it matches all
    phrases, the ids it scores (``matched``)."""

    phrases: list[list[str]]
    indexes: list[int]
    match_all: bool = False
    newest: int | None = None
    matched: set[int] | None = None


def rank_memory_ids(
    conn: psycopg.Connection[Row], query: MemoryQuery, now: int, ranking: Ranking
) -> list[int]:
    """The ids of one page of live memories matching ``query.terms``, best first."""
    if not query.terms:
        return []
    phrases = [full_text.phrase_tokens(term) for term in query.terms]
    index = full_text.MEMORY_INDEX
    if query.order != "relevance":
        return _ids_by_date(conn, query, phrases)
    budget = ranking.score_budget
    cap = budget + 1 if budget > 0 else None
    counts, (docs, tokens) = full_text.counts_and_totals(conn, index, phrases, cap)
    selection = _select(conn, phrases, counts, budget, query.upto)
    if selection is None:
        return []
    if selection.match_all:  # counts past the budget were cut short: count them all
        counts = full_text.phrase_counts(conn, index, phrases)
    chosen = [counts[i] for i in selection.indexes]
    bm25 = full_text.Bm25.with_totals(chosen, ranking.bm25_weights(), docs, tokens)
    hits, rows = _scored_rows(conn, query, selection)
    first = _id_tier(query, selection)
    return _page(_rank(hits, rows, bm25, now, ranking, first), query)


def rank_in_memory(
    db: PgDatabase, postings: Postings, query: MemoryQuery, now: int, ranking: Ranking
) -> list[int]:
    """``rank_memory_ids`` for a relevance search, computed from ``postings`` brought up to
    date in one snapshot: the same counts, selection, hits and rows, so the same scores."""
    phrases = [full_text.phrase_tokens(term) for term in query.terms]
    with postings.fresh(db, {token for tokens in phrases for token in tokens}) as held:
        matches = [PhraseMatches(held.term, tokens) for tokens in phrases]
        budget = ranking.score_budget
        counts = [len(match.docs) for match in matches]
        if budget > 0:  # counted no further than budget + 1, as in SQL
            counts = [min(count, budget + 1) for count in counts]
        selection = _select_in_memory(matches, counts, budget, query.upto)
        if selection is None:
            return []
        if selection.match_all:
            counts = [len(match.docs) for match in matches]
        chosen = [counts[i] for i in selection.indexes]
        bm25 = full_text.Bm25.with_totals(chosen, ranking.bm25_weights(), *held.totals)
        scored = [matches[i] for i in selection.indexes]
        hits, rows = _rows_in_memory(held, query, scored, selection)
    first = _id_tier(query, selection)
    return _page(_rank(hits, rows, bm25, now, ranking, first), query)


def _id_tier(query: MemoryQuery, selection: _Selection) -> list[int]:
    """The positions, among the phrases a memory is scored by, of the query's made-up ids that
    rank a memory holding one first (``first_tier``; ``SqliteStore._id_tier``): none when a
    memory must match every phrase."""
    if selection.match_all:
        return []
    scored = [query.terms[i] for i in selection.indexes]
    return first_tier(scored)


def tokens_with_prefix(conn: psycopg.Connection[Row], prefix: str, limit: int) -> list[str]:
    """Indexed memory tokens longer than ``prefix`` that start with it, in order, at most
    ``limit``: a range of the terms' primary key (``COLLATE "C"``: code-point order)."""
    low, high = prefix_bounds(prefix)
    rows = conn.execute(
        "SELECT DISTINCT term FROM memory_terms WHERE term > %s AND term < %s"
        " ORDER BY term LIMIT %s",
        (low, high, limit),
    ).fetchall()
    return [str(row[0]) for row in rows]


def _select_in_memory(
    matches: list[PhraseMatches], counts: list[int], budget: int, upto: int | None
) -> _Selection | None:
    """``_select`` on held postings."""
    if not any(counts):
        return None
    everything = list(range(len(matches)))
    if budget <= 0:
        return _Selection([], everything)
    chosen = rarest_within_budget(counts, budget)
    if chosen:
        return _Selection([], chosen)
    present = _present(counts)
    docs = set(matches[present[0]].docs).intersection(*(matches[i].docs for i in present[1:]))
    newest = heapq.nlargest(budget + 1, docs if upto is None else (d for d in docs if d <= upto))
    if len(newest) <= budget:
        return _Selection([], present, match_all=True, matched=docs)
    return _Selection([], present, match_all=True, newest=newest[budget], matched=set(newest))


def _present(counts: list[int]) -> list[int]:
    """The indexes of the phrases some memory holds: those a search that needs all of its
    phrases needs (a word in none, a typo, must not turn the others' matches into none)."""
    return [i for i, count in enumerate(counts) if count]


def _rows_in_memory(
    held: Postings, query: MemoryQuery, matches: list[PhraseMatches], selection: _Selection
) -> tuple[dict[int, list[Sequence[tuple[int, int]]]], dict[int, tuple[int, int, int, int | None]]]:
    """``_scored_rows`` on held postings and rank rows."""
    if selection.matched is not None:
        docs = selection.matched
    else:
        docs = set().union(*(match.docs for match in matches))
    keeps = _kept_by(query)
    hits: dict[int, list[Sequence[tuple[int, int]]]] = {}
    rows: dict[int, tuple[int, int, int, int | None]] = {}
    for doc in docs:
        row = held.rank.get(doc)
        if row is not None and keeps(doc, row):
            hits[doc] = [match.hits(doc) for match in matches]
            rows[doc] = row[:4]
    return hits, rows


def _kept_by(query: MemoryQuery) -> Callable[[int, RankRow], bool]:
    """``filters(query)`` as a test of a memory's id and held rank row."""
    projects = None if query.projects is None else set(query.projects)
    excluded = set(query.exclude_kinds)

    def keeps(doc: int, row: RankRow) -> bool:
        _, created_at, _, _, dismissed_at, project, type_, kind = row
        return (
            (dismissed_at is not None) == query.dismissed
            and (projects is None or project in projects)
            and (query.type is None or type_ == query.type)
            and (query.kind is None or kind == query.kind)
            and kind not in excluded
            and (query.since is None or created_at >= query.since)
            and (query.until is None or created_at < query.until)
            and (query.upto is None or doc <= query.upto)
        )

    return keeps


def filters(query: MemoryQuery) -> tuple[list[str], list[Any]]:
    """The conditions on ``m`` (memories, or memory_rank: it has the columns) of the query's
    filters, and their parameters."""
    where = ["m.dismissed_at IS NOT NULL" if query.dismissed else "m.dismissed_at IS NULL"]
    params: list[Any] = []
    conditions = (
        ("m.project = ANY (%s)", None if query.projects is None else list(query.projects)),
        ("m.type = %s", query.type),
        ("m.kind = %s", query.kind),
        ("NOT (m.kind = ANY (%s))", list(query.exclude_kinds) or None),
        ("m.created_at >= %s", query.since),
        ("m.created_at < %s", query.until),
        ("m.id <= %s", query.upto),
    )
    for condition, value in conditions:
        if value is not None:
            where.append(condition)
            params.append(value)
    return where, params


def date_order(query: MemoryQuery) -> str:
    if query.order == "date_asc":
        return "m.created_at ASC, m.id ASC"
    return "m.created_at DESC, m.id DESC"


def _select(
    conn: psycopg.Connection[Row],
    phrases: list[list[str]],
    counts: list[int],
    budget: int,
    upto: int | None,
) -> _Selection | None:
    """The phrases to match and score, as ``SqliteStore._match`` picks them; None: no match.

    A relevance search scores about ``budget`` rows: its phrases rarest first while their
    matches fit (counts above the budget all count as ``budget + 1``, as SQLite's bounded
    counts do). When even the rarest is too common, every phrase some memory holds must match
    (``_present``), and if that still matches too much, the newest ``budget + 1`` matches are
    the ones scored (the newest up to id ``upto`` when given).
    """
    if not any(counts):
        return None
    if budget <= 0:
        return _Selection(phrases, list(range(len(phrases))))
    chosen = rarest_within_budget(counts, budget)
    if chosen:
        return _Selection([phrases[i] for i in chosen], chosen)
    present = _present(counts)
    needed = [phrases[i] for i in present]
    hits, params = full_text.hits_sql(full_text.MEMORY_INDEX, needed)
    bounded = "" if upto is None else " WHERE doc <= %s"
    row = conn.execute(
        f"SELECT doc FROM ({hits}) AS h{bounded} GROUP BY doc HAVING count(DISTINCT i) = %s"
        " ORDER BY doc DESC LIMIT 1 OFFSET %s",
        [*params, *([] if upto is None else [upto]), len(needed), budget],
    ).fetchone()
    newest = None if row is None else int(row[0])
    return _Selection(needed, present, match_all=True, newest=newest)


def _ids_by_date(
    conn: psycopg.Connection[Row], query: MemoryQuery, phrases: list[list[str]]
) -> list[int]:
    """A page of the memories any phrase occurs in, by date (nothing is scored)."""
    sql, params = dated_page_sql(query, phrases)
    return [int(row[0]) for row in conn.execute(sql, params).fetchall()]


def dated_page_sql(query: MemoryQuery, phrases: list[list[str]]) -> tuple[str, list[Any]]:
    """The statement of a date-ordered page, and its parameters.

    The matching ids are gathered once (``MATERIALIZED``, ``DISTINCT``), then each memory is
    probed by key. Written as ``m.id IN (SELECT doc FROM h)``, the planner inlined the hits, and
    on row estimates from before the memories were analysed (a bulk import or sync push, or
    autovacuum off) it re-read every term's postings once per memory of the project: 30 s at
    7,000 memories where SQLite takes 10 ms.
    """
    hits, params = full_text.hits_sql(full_text.MEMORY_INDEX, phrases)
    where, values = filters(query)
    sql = (
        f"WITH h AS MATERIALIZED (SELECT DISTINCT doc FROM ({hits}) AS u)"
        f" SELECT m.id FROM h JOIN memories m ON m.id = h.doc WHERE {' AND '.join(where)}"
        f" ORDER BY {date_order(query)} LIMIT %s OFFSET %s"
    )
    return sql, [*params, *values, query.limit, query.offset]


def _scored_rows(
    conn: psycopg.Connection[Row], query: MemoryQuery, selection: _Selection
) -> tuple[dict[int, list[list[tuple[int, int]]]], dict[int, tuple[int, int, int, int | None]]]:
    """In one statement, the matching memories the filters keep: per memory, each phrase's
    ``(col, hits)`` in column order (``full_text.phrase_hits``), and its token count,
    creation time, pinned flag and stale_from (what ranking reads besides the hits), all read
    with the filtered columns from the narrow ``memory_rank`` (migration 0005), as ``m``: one
    index probe per match (``OFFSET 0`` keeps the planner from a hash join, which reads the
    whole table to score a few hundred matches)."""
    sql, params = full_text.hits_sql(full_text.MEMORY_INDEX, selection.phrases)
    where, values = filters(query)
    if selection.match_all:
        where.append("h.doc IN (SELECT doc FROM h GROUP BY doc HAVING count(DISTINCT i) = %s)")
        values.append(len(selection.phrases))
    if selection.newest is not None:
        where.append("h.doc >= %s")
        values.append(selection.newest)
    cursor = conn.cursor(row_factory=tuple_row)  # plain tuples: rows by the thousand
    found = cursor.execute(
        f"WITH h AS ({sql}) SELECT h.doc, h.i, h.col, h.hits, m.tokens, m.created_at, m.pinned,"
        " m.stale_from FROM h CROSS JOIN LATERAL"
        " (SELECT * FROM memory_rank m WHERE m.id = h.doc OFFSET 0) AS m"
        f" WHERE {' AND '.join(where)} ORDER BY h.doc, h.i, h.col",
        [*params, *values],
    ).fetchall()
    hits: dict[int, list[list[tuple[int, int]]]] = {}
    rows: dict[int, tuple[int, int, int, int | None]] = {}
    phrases = len(selection.phrases)
    for doc, i, col, count, tokens, created_at, pinned, stale_from in found:
        per_phrase = hits.get(doc)
        if per_phrase is None:
            per_phrase = hits[doc] = [[] for _ in range(phrases)]
            rows[doc] = (tokens, created_at, pinned, stale_from)
        per_phrase[i].append((col, count))
    return hits, rows


def _rank(
    hits: Mapping[int, Sequence[Sequence[tuple[int, int]]]],
    rows: dict[int, tuple[int, int, int, int | None]],
    bm25: full_text.Bm25,
    now: int,
    ranking: Ranking,
    first: Sequence[int] = (),
) -> list[int]:
    """Ids best first: those holding a phrase at the positions ``first`` (``_id_tier``) before
    the others, then bm25 times the priors, computed in the order of SQLite's expression
    (``SqliteStore._order``), so equal scores stay equal; then newest, then highest id."""
    scale = ranking.recency_scale_days * DAY_MS
    boost = ranking.recency_boost * scale
    keyed = []
    for doc, (tokens, created_at, pinned, stale_from) in rows.items():
        value = (
            bm25.score(hits[doc], tokens)
            * (1.0 + ranking.pinned_boost * pinned)
            * (1.0 + boost / (scale + max(now - created_at, 0)))
            * (ranking.stale_factor if stale_from is not None and stale_from <= now else 1.0)
        )
        tier = 0 if any(hits[doc][i] for i in first) else 1
        keyed.append((tier, value, -created_at, -doc))
    keyed.sort()
    return [-key[3] for key in keyed]


def _page(ids: list[int], query: MemoryQuery) -> list[int]:
    return ids[query.offset : query.offset + query.limit]
