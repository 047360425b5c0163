"""Memory search of the SQLite store: FTS5 matches scored by bm25 and the priors of search/rank."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aletheia_mem.search.query import first_tier, fts_match_expression, prefix_bounds
from aletheia_mem.search.rank import DAY_MS, DEFAULT_RANKING, Ranking, rarest_within_budget
from aletheia_mem.storage.base import (
    Memory,
    MemoryQuery,
)
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.reindex import reindex_owed
from aletheia_mem.storage.sqlite.rows import (
    M_MEMORY_COLUMNS,
    in_clause,
    memory_from_row,
    read_memories,
)

# At most this many values (match counts) in a connection's memo: a few MB at worst.
_MAX_MEMO_ENTRIES = 10_000
_WALK_PAST_MATCHES = 5_000  # a date-ordered search with more matches walks the date index


class SqliteSearch(SqliteDatabase):
    """Ranked and filtered memory search over the FTS5 index."""

    def _on_open(self) -> None:
        super()._on_open()
        reindex_owed(self._conn, self._write)  # what a tokenizer change left (0019, 0020)

    def search_memories(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[Memory]:
        """One page of live memories matching the query, in the requested order."""
        where, params = self._filters(query)
        if query.file is not None:
            return self._memories_by_file(query, where, params)
        if query.terms:
            return self._memories_in_order(self.rank_memory_ids(query, now, ranking))
        sql = f"SELECT {M_MEMORY_COLUMNS} FROM memories m WHERE " + " AND ".join(where)
        direction = "ASC" if query.order == "date_asc" else "DESC"
        sql += f" ORDER BY m.created_at {direction}, m.id {direction} LIMIT ? OFFSET ?"
        params += [query.limit, query.offset]
        return [memory_from_row(row) for row in self._conn.execute(sql, params).fetchall()]

    def rank_memory_ids(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[int]:
        """The ids of one page of live memories matching ``query.terms``, best first.

        Scores and filters on the narrow ``memory_rank`` table (aliased ``m``, with the columns
        the filters use), so that ranking thousands of matches never reads whole memories.
        """
        where, params = self._filters(query)
        if query.order != "relevance":
            return self._dated_ids(query, where, params)
        expression, newest, scored = self._match(
            list(query.terms), ranking.score_budget, query.upto
        )
        # CROSS JOIN: the matches drive; never a walk of memory_rank's indexes probing the index.
        sql = (
            "SELECT m.id FROM memory_fts CROSS JOIN memory_rank m ON m.id = memory_fts.rowid"
            " WHERE memory_fts MATCH ? AND " + " AND ".join(where)
        )
        params = [expression, *params]
        if newest is not None:
            sql += " AND memory_fts.rowid >= ?"
            params.append(newest)
        sql += " ORDER BY " + self._id_tier(scored, params)
        sql += self._relevance(params, now, ranking) + " LIMIT ? OFFSET ?"
        params += [query.limit, query.offset]
        return [int(row[0]) for row in self._conn.execute(sql, params).fetchall()]

    def _dated_ids(self, query: MemoryQuery, where: list[str], params: list[Any]) -> list[int]:
        """A date-ordered page of matches, unscored. Few matches are read from the full-text
        index and sorted; many are looked up while walking the memories in date order (an index
        of migration 0012), which stops at the end of the page."""
        expression = fts_match_expression(list(query.terms))
        count = self._count_matches(self._pool.memo(), expression, _WALK_PAST_MATCHES)
        if count > _WALK_PAST_MATCHES and not query.dismissed:  # few are dismissed: no walk
            index = "memory_rank_typed" if query.type is not None else "memory_rank_dated"
            sql = (
                f"SELECT m.id FROM memory_rank m INDEXED BY {index} WHERE m.id IN"
                " (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?) AND "
            )
        else:
            sql = (
                "SELECT m.id FROM memory_fts CROSS JOIN memory_rank m ON m.id = memory_fts.rowid"
                " WHERE memory_fts MATCH ? AND "
            )
        direction = "ASC" if query.order == "date_asc" else "DESC"
        sql += " AND ".join(where) + f" ORDER BY m.created_at {direction}, m.id {direction}"
        rows = self._conn.execute(
            sql + " LIMIT ? OFFSET ?", [expression, *params, query.limit, query.offset]
        )
        return [int(row[0]) for row in rows.fetchall()]

    def tokens_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Indexed tokens longer than ``prefix`` that start with it, in order, at most ``limit``
        (read from an ``fts5vocab`` table of the connection's own: a range of terms, no scan)."""
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab"
            " USING fts5vocab(main, memory_fts, row)"
        )
        low, high = prefix_bounds(prefix)
        rows = self._conn.execute(
            "SELECT term FROM temp.memory_vocab WHERE term > ? AND term < ? ORDER BY term LIMIT ?",
            (low, high, limit),
        )
        return [str(row[0]) for row in rows.fetchall()]

    def _memories_in_order(self, ids: Sequence[int]) -> list[Memory]:
        by_id = {memory.id: memory for memory in read_memories(self._conn, ids)}
        return [by_id[i] for i in ids if i in by_id]

    @staticmethod
    def _id_tier(scored: list[str], params: list[Any]) -> str:
        """The first sort key of a relevance order: whether a memory holds one of the query's
        made-up ids among the terms it is ``scored`` by (``first_tier``), else nothing."""
        ids = [scored[i] for i in first_tier(scored)]
        if not ids:
            return ""
        params.append(fts_match_expression(ids))
        return "memory_fts.rowid NOT IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?), "

    def _match(
        self, terms: list[str], budget: int, upto: int | None = None
    ) -> tuple[str, int | None, list[str]]:
        """The MATCH expression to run, the lowest rowid to score (None: all of them), and the
        terms any one of which a memory matches by (none when it must match them all).

        bm25 costs microseconds per matching row, so a relevance search scores about ``budget``
        rows at most (0: no bound, for date orders that score nothing): its terms are taken rarest
        first while their matches fit. A word common enough to blow the budget says little about
        relevance (its idf is low) and is left out. When even the rarest term is that common, the
        query needs all of its terms that some memory holds (a word in none, a typo, must not
        turn the matches of the others into none), and if that still matches too much, its
        newest matches are the ones scored: the newest up to id ``upto`` when given, so that
        memories saved since a first page leave the matches a later page scores as they were.
        """
        if budget <= 0:
            return fts_match_expression(terms), None, terms
        memo = self._pool.memo()
        counts = [self._count_matches(memo, fts_match_expression([term]), budget) for term in terms]
        chosen = rarest_within_budget(counts, budget)
        if chosen or not any(counts):
            scored = [terms[i] for i in chosen] or terms
            return fts_match_expression(scored), None, scored
        present = [term for term, count in zip(terms, counts, strict=True) if count]
        expression = fts_match_expression(present, "AND")
        if self._count_matches(memo, expression, budget) <= budget:
            return expression, None, []
        bounded = "" if upto is None else " AND rowid <= ?"
        row = self._conn.execute(
            f"SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?{bounded}"
            " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expression, *([] if upto is None else [upto]), budget),
        ).fetchone()
        return expression, None if row is None else int(row[0]), []

    def _count_matches(self, counts: dict[Any, Any], expression: str, budget: int) -> int:
        """How many memories match (counting stops past ``budget``).

        ``counts`` is the connection's memo, which forgets them whenever the store changes: most
        searches share words with earlier ones, and counting is a fifth of a search's time.
        """
        key = ("match count", expression, budget)
        found = counts.get(key)
        if found is None:
            row = self._conn.execute(  # "SELECT 1", not the rowid: no rowid read per match
                "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
                (expression, budget + 1),
            ).fetchone()
            if len(counts) >= _MAX_MEMO_ENTRIES:
                counts.clear()
            found = counts[key] = int(row[0])
        return int(found)

    def _relevance(self, params: list[Any], now: int, ranking: Ranking) -> str:
        """The relevance order: bm25 (negative, lower is better) scaled by the priors of
        search/rank.py, the same formula as Ranking.prior: a pinned lift, a smooth recency decay,
        a stale penalty (every fact the memory stated had ended by ``now``).

        bm25 appears here only, not also as a result column: SQLite would compute it twice per
        matching row (once for the sort key, once for the column), and it is most of a search.
        The age is ``max(now - created_at, 0)`` written as a CASE: the same number, without
        a function call per scored row.
        """
        weights = ", ".join(repr(float(w)) for w in ranking.bm25_weights())
        scale = ranking.recency_scale_days * DAY_MS
        params += [ranking.pinned_boost, ranking.recency_boost * scale, scale, now, now]
        params += [now, ranking.stale_factor]
        return (
            f"bm25(memory_fts, {weights}) * (1.0 + ? * m.pinned)"
            " * (1.0 + ? / (? + CASE WHEN m.created_at < ? THEN ? - m.created_at ELSE 0 END))"
            " * (CASE WHEN m.stale_from <= ? THEN ? ELSE 1.0 END), m.created_at DESC, m.id DESC"
        )

    def _filters(self, query: MemoryQuery) -> tuple[list[str], list[Any]]:
        where = ["m.dismissed_at IS NOT NULL" if query.dismissed else "m.dismissed_at IS NULL"]
        params: list[Any] = []
        if query.projects is not None:
            where.append(in_clause("m.project", query.projects))
            params.extend(query.projects)
        for column, value in (("m.type", query.type), ("m.kind", query.kind)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if query.exclude_kinds:
            where.append("NOT " + in_clause("m.kind", query.exclude_kinds))
            params.extend(query.exclude_kinds)
        if query.since is not None:
            where.append("m.created_at >= ?")
            params.append(query.since)
        if query.until is not None:
            where.append("m.created_at < ?")
            params.append(query.until)
        if query.upto is not None:
            where.append("m.id <= ?")
            params.append(query.upto)
        return where, params

    def _memories_by_file(
        self, query: MemoryQuery, where: list[str], params: list[Any]
    ) -> list[Memory]:
        path = query.file or ""
        if query.file_suffix:
            reversed_path = path[::-1]
            match = "f.path_reversed >= ? AND f.path_reversed < ?"
            params = [reversed_path, reversed_path + "\U0010ffff", *params]
        else:
            match = "f.path_reversed = ?"  # the one index of paths (migration 0014)
            params = [path[::-1], *params]
        sql = (
            f"SELECT DISTINCT {M_MEMORY_COLUMNS} FROM memory_files f"
            " JOIN memories m ON m.id = f.memory_id"
            f" WHERE {match} AND "
            + " AND ".join(where)
            + " ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?"
        )
        rows = self._conn.execute(sql, [*params, query.limit, query.offset]).fetchall()
        return [memory_from_row(row) for row in rows]
