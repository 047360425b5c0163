"""Full text on PostgreSQL, tokenised and ranked as the SQLite store's FTS5 tables do it.

Tokens come from FTS5 itself (``porter unicode61``, in a private in-memory SQLite database):
a re-implementation would drift from it on Unicode categories (SQLite's tables are of an older
Unicode than Python's) and on its Porter stemmer's byte-level details, and then one store would
find what the other misses. Each row's tokens are kept per column with their positions
(``memory_terms``, ``fact_terms``), so a query term of several tokens matches as an FTS5 phrase
(the tokens adjacent and in order), and bm25 is computed as FTS5's ``fts5Bm25Function`` does:
the same inputs (rows and tokens of the whole index, rows per phrase, weighted hits, the row's
token count) in the same order of floating-point operations, so scores are equal to the bit.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import math
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

from aletheia_mem.search.text import index_text

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6


@dataclass(frozen=True)
class TextIndex:
    """One full-text index: its tables, the column naming its rows, how many text columns."""

    name: str
    terms: str
    docs: str
    key: str
    columns: int


# The row of ``full_text_counts`` a connection adds to (migration 0004 made 32 per index), in
# SQL with psycopg's placeholders (hence ``%%``).
OWN_SLOT = "slot = pg_backend_pid() %% 32"

MEMORY_INDEX = TextIndex("memories", "memory_terms", "memory_docs", "memory_id", 5)
FACT_INDEX = TextIndex("facts", "fact_terms", "fact_docs", "fact_id", 3)

# Per column of one row: token -> its positions in the column.
ColumnTokens = list[dict[str, list[int]]]


class _Fts5Tokenizer:
    """FTS5's ``porter unicode61`` tokenizer, reached through a contentless in-memory table."""

    def __init__(self, columns: int) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        names = ", ".join(f"c{i}" for i in range(columns))
        self._conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5 ({names}, content='',"
            " tokenize = 'porter unicode61')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
        self._insert = f"INSERT INTO t (rowid, {names}) VALUES (1, {', '.join('?' * columns)})"
        self._columns = columns
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def tokens(self, texts: Sequence[str]) -> ColumnTokens:
        found: ColumnTokens = [{} for _ in range(self._columns)]
        with self._lock:
            self._conn.execute(self._insert, list(texts))
            rows = self._conn.execute("SELECT term, col, offset FROM v").fetchall()
            self._conn.execute("INSERT INTO t (t) VALUES ('delete-all')")
        for term, col, offset in rows:
            found[int(col[1:])].setdefault(stored_token(term), []).append(int(offset))
        for column in found:
            for positions in column.values():
                positions.sort()
        return found


# A row of a btree index holds at most 2704 bytes (the terms tables' key is the term): a token
# longer than this (a hex dump, CJK text without punctuation) is kept as its start and a digest of
# it, when a row is indexed and when a query is tokenized alike, so that it is found as FTS5 finds
# it. Tokens never hold "#" (unicode61 splits there), so no token is taken for another.
_LONG_TOKEN_BYTES = 1000
_LONG_TOKEN_START = 200
_LONG_TOKEN = re.compile(rf".{{{_LONG_TOKEN_START}}}#[0-9a-f]{{64}}")


def stored_token(token: str) -> str:
    """The token as the terms tables hold it: itself, or a long one's start and digest."""
    if len(token) * 4 <= _LONG_TOKEN_BYTES or len(token.encode()) <= _LONG_TOKEN_BYTES:
        return token
    return f"{token[:_LONG_TOKEN_START]}#{hashlib.sha256(token.encode()).hexdigest()}"


_tokenizers: dict[int, _Fts5Tokenizer] = {}
_tokenizers_lock = threading.Lock()


@atexit.register
def _close_tokenizers() -> None:
    """The tokenizers' in-memory connections, kept for the process's life, closed as it ends
    (not left to the garbage collector, which Python 3.13 reports as unclosed databases)."""
    with _tokenizers_lock:
        for tokenizer in _tokenizers.values():
            tokenizer.close()
        _tokenizers.clear()


def column_tokens(texts: Sequence[str]) -> ColumnTokens:
    """The tokens of each text (one per column) with their positions, as FTS5 makes them."""
    with _tokenizers_lock:
        tokenizer = _tokenizers.get(len(texts))
        if tokenizer is None:
            tokenizer = _tokenizers[len(texts)] = _Fts5Tokenizer(len(texts))
    return tokenizer.tokens(texts)


# Query terms recur (agents search the same words), and a search tokenizes each twice, for
# memories and for facts: 0.07 ms a term through SQLite. Terms this long or shorter are kept, the
# least recently used going first.
_CACHED_TERM_CHARS = 256


def phrase_tokens(term: str) -> list[str]:
    """The tokens of one query term, in order: the phrase FTS5 makes of ``"term"``."""
    if _LONG_TOKEN.fullmatch(term):  # a held long token (tokens_with_prefix found it)
        return [term]
    if len(term) <= _CACHED_TERM_CHARS:
        return list(_cached_phrase_tokens(term))
    return list(_phrase_tokens(term))


@functools.lru_cache(maxsize=4096)
def _cached_phrase_tokens(term: str) -> tuple[str, ...]:
    return _phrase_tokens(term)


def _phrase_tokens(term: str) -> tuple[str, ...]:
    positions = column_tokens([term])[0]
    return tuple(token for _, token in sorted((p, t) for t, ps in positions.items() for p in ps))


# -- writing ---------------------------------------------------------------------------------


@dataclass
class Totals:
    """Changes to the row and token counts of each index, written once, last, in a fixed order:
    every writer takes the counters' row locks at the end and in the same order, so concurrent
    transactions never wait on each other in a cycle. Each connection adds to a slot of its own
    (``full_text_counts``, summed by the view ``full_text_totals``), so writers on other
    connections seldom wait for its commit."""

    changes: dict[str, list[int]] = field(default_factory=dict)

    def add(self, index: TextIndex, docs: int, tokens: int) -> None:
        change = self.changes.setdefault(index.name, [0, 0])
        change[0] += docs
        change[1] += tokens

    def write(self, conn: psycopg.Connection[Any]) -> None:
        for name in sorted(self.changes):
            docs, tokens = self.changes[name]
            conn.execute(
                "UPDATE full_text_counts SET docs = docs + %s, tokens = tokens + %s"
                f" WHERE index_name = %s AND {OWN_SLOT}",
                (docs, tokens, name),
            )
        self.changes.clear()


@contextmanager
def indexing(conn: psycopg.Connection[Any]) -> Iterator[Totals]:
    """Totals for the rows indexed in the block, written when it ends (in its transaction)."""
    totals = Totals()
    yield totals
    totals.write(conn)


def row_terms(texts: Sequence[str]) -> tuple[int, list[str], list[int], list[str]]:
    """A row's token count and, per (term, column), the term, the column and its positions
    (as array literals): the rows of a terms table, as ``unnest`` arrays."""
    tokens = column_tokens([index_text(text) for text in texts])
    terms: list[str] = []
    cols: list[int] = []
    positions: list[str] = []
    for col, column in enumerate(tokens):
        for term, found in column.items():
            terms.append(term)
            cols.append(col)
            positions.append("{" + ",".join(map(str, found)) + "}")
    count = sum(len(found) for column in tokens for found in column.values())
    return count, terms, cols, positions


def index_row(
    conn: psycopg.Connection[Any],
    index: TextIndex,
    row_id: int,
    texts: Sequence[str],
    totals: Totals,
) -> None:
    """Index one row's columns (``index_text`` adds the identifier tokens), replacing any
    earlier entry of the row."""
    count, terms, cols, positions = row_terms(texts)
    old = conn.execute(
        f"DELETE FROM {index.docs} WHERE {index.key} = %s RETURNING tokens",
        (row_id,),
    ).fetchone()
    if old is not None:
        conn.execute(f"DELETE FROM {index.terms} WHERE {index.key} = %s", (row_id,))
    conn.execute(
        f"INSERT INTO {index.docs} ({index.key}, tokens) VALUES (%s, %s)",
        (row_id, count),
    )
    if terms:
        conn.execute(
            f"INSERT INTO {index.terms} (term, {index.key}, col, positions)"
            " SELECT t, %s, c, p::integer[]"
            " FROM unnest(%s::text[], %s::smallint[], %s::text[]) AS u (t, c, p)",
            (row_id, terms, cols, positions),
        )
    if old is None:
        totals.add(index, 1, count)
    else:
        totals.add(index, 0, count - int(old[0]))


# -- matching and scoring --------------------------------------------------------------------


def phrase_sql(index: TextIndex, tokens: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL giving ``(doc, col, hits)``: per row and column, how often the phrase occurs."""
    if not tokens:
        return (
            "SELECT NULL::bigint AS doc, NULL::smallint AS col, 0::bigint AS hits WHERE false",
            [],
        )
    if len(tokens) == 1:
        return (
            f"SELECT {index.key} AS doc, col, cardinality(positions)::bigint AS hits"
            f" FROM {index.terms} WHERE term = %s",
            [tokens[0]],
        )
    joins = "".join(
        f" JOIN {index.terms} t{i} ON t{i}.{index.key} = t0.{index.key} AND t{i}.col = t0.col"
        f" AND t{i}.term = %s"
        for i in range(1, len(tokens))
    )
    adjacent = "".join(f" AND p.pos + {i} = ANY (t{i}.positions)" for i in range(1, len(tokens)))
    sql = (
        f"SELECT t0.{index.key} AS doc, t0.col, count(*) AS hits"
        f" FROM {index.terms} t0 CROSS JOIN LATERAL unnest(t0.positions) AS p (pos){joins}"
        f" WHERE t0.term = %s{adjacent} GROUP BY 1, 2"
    )
    return sql, [*tokens[1:], tokens[0]]


def hits_sql(index: TextIndex, phrases: Sequence[Sequence[str]]) -> tuple[str, list[Any]]:
    """SQL giving ``(i, doc, col, hits)`` for every phrase ``i`` of the query."""
    parts, params = [], []
    for i, tokens in enumerate(phrases):
        sql, values = phrase_sql(index, tokens)
        parts.append(f"SELECT {i} AS i, doc, col, hits FROM ({sql}) AS p{i}")
        params.extend(values)
    return " UNION ALL ".join(parts), params


def phrase_counts(
    conn: psycopg.Connection[Any],
    index: TextIndex,
    phrases: Sequence[Sequence[str]],
    cap: int | None = None,
) -> list[int]:
    """How many rows of the whole index each phrase occurs in (FTS5's ``nHit``), counting
    no further than ``cap`` when one is given."""
    return counts_and_totals(conn, index, phrases, cap)[0]


def counts_and_totals(
    conn: psycopg.Connection[Any],
    index: TextIndex,
    phrases: Sequence[Sequence[str]],
    cap: int | None = None,
) -> tuple[list[int], tuple[int, int]]:
    """``phrase_counts``, and the index's rows and tokens (what ``Bm25`` reads besides), in
    one round trip."""
    parts, params = [], []
    limit = "" if cap is None else f" LIMIT {int(cap)}"
    for i, tokens in enumerate(phrases):
        sql, values = phrase_sql(index, tokens)
        parts.append(
            f"SELECT {i} AS i, (SELECT count(*) FROM (SELECT DISTINCT doc FROM ({sql}) AS p"
            f"{limit}) AS d) AS n, 0::numeric AS tokens"
        )
        params.extend(values)
    parts.append(
        "SELECT -1, coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM full_text_counts"
        " WHERE index_name = %s"
    )
    params.append(index.name)
    rows = conn.execute(" UNION ALL ".join(parts), params).fetchall()
    counts = [0] * len(phrases)
    totals = (0, 0)
    for i, count, tokens in rows:
        if int(i) < 0:
            totals = (int(count), int(tokens))
        else:
            counts[int(i)] = int(count)
    return counts, totals


def phrase_hits(
    conn: psycopg.Connection[Any],
    index: TextIndex,
    phrases: Sequence[Sequence[str]],
    *,
    match_all: bool = False,
    lowest: int | None = None,
) -> dict[int, list[list[tuple[int, int]]]]:
    """Per matching row: for each phrase, its ``(col, hits)`` in column order. ``match_all``
    keeps the rows every phrase occurs in; ``lowest``, the rows from that id up."""
    sql, params = hits_sql(index, phrases)
    where = []
    if match_all:
        where.append("doc IN (SELECT doc FROM h GROUP BY doc HAVING count(DISTINCT i) = %s)")
        params.append(len(phrases))
    if lowest is not None:
        where.append("doc >= %s")
        params.append(lowest)
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"WITH h AS ({sql}) SELECT doc, i, col, hits FROM h{condition} ORDER BY doc, i, col",
        params,
    ).fetchall()
    found: dict[int, list[list[tuple[int, int]]]] = {}
    for doc, i, col, hits in rows:
        per_phrase = found.get(doc)
        if per_phrase is None:
            per_phrase = found[doc] = [[] for _ in phrases]
        per_phrase[int(i)].append((int(col), int(hits)))
    return found


@dataclass(frozen=True)
class Bm25:
    """FTS5's bm25 for one query over one index: per-phrase idf and the average row length."""

    idf: tuple[float, ...]
    avgdl: float
    weights: tuple[float, ...]

    @classmethod
    def with_totals(
        cls, counts: Sequence[int], weights: Sequence[float], docs: int, tokens: int
    ) -> Bm25:
        """From the index's rows and tokens, read already (``counts_and_totals``). Totals
        behind the counts (read in another snapshot) give the least idf, not a math error;
        no tokens at all give an average length of one."""
        rows = max(docs, 1)
        idf = []
        for hits in counts:
            value = math.log((rows - hits + 0.5) / (hits + 0.5)) if hits < rows else 0.0
            idf.append(value if value > 0.0 else MIN_IDF)
        return cls(tuple(idf), max(float(tokens), 1.0) / float(rows), tuple(weights))

    def score(self, hits: Sequence[Sequence[tuple[int, int]]], doc_tokens: int) -> float:
        """bm25 (negative: lower is better) of a row, given per phrase its ``(col, hits)``
        sorted by column: FTS5 adds a column's weight once per phrase instance, in order."""
        score = 0.0
        length = float(doc_tokens)
        for i, idf in enumerate(self.idf):
            freq = 0.0
            for col, count in hits[i]:
                weight = self.weights[col] if col < len(self.weights) else 1.0
                for _ in range(count):
                    freq += weight
            score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / self.avgdl)))
        return -1.0 * score
