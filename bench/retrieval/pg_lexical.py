"""The lexical benchmark on PostgreSQL: ``run.py --postgres URL`` (any database you may write).

The corpus is saved through the domain into a PostgreSQL store (a schema of its own, dropped at
the end), searched with the same queries, and compared with the SQLite store: its quality, how
many queries give the very same top 10, and its search latency.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import quote

import psycopg
from dataset import PROJECT, fill_store, load_corpus, load_queries
from metrics import Ranker, evaluate, percentiles

from aletheia_mem.domain.recall import SearchRequest, search
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


@contextmanager
def pg_store(url: str) -> Iterator[PostgresStore]:
    """A store in a fresh schema of the database at ``url``, dropped afterwards."""
    schema = "bench_" + secrets.token_hex(4)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    store = open_postgres_store(url + separator + "options=" + quote(f"-csearch_path={schema}"))
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def _ranker(store: PostgresStore, keys: dict[int, str], now: int) -> Ranker:
    def rank(text: str) -> Sequence[str]:
        request = SearchRequest(query=text, projects=(PROJECT,), limit=10)
        return [keys[m.id] for m in search(store, request, now, None).memories]  # type: ignore[arg-type]

    return rank


def pg_lexical(url: str, sqlite_rank: Ranker, now: int) -> tuple[dict[str, dict[str, float]], str]:
    """Quality on PostgreSQL, and one line: agreement with SQLite, latency, save rate."""
    queries = load_queries()
    with pg_store(url) as store:
        started = time.perf_counter()
        keys = fill_store(store, load_corpus())  # type: ignore[arg-type]
        saves = len(keys) / (time.perf_counter() - started)
        rank = _ranker(store, keys, now)
        results = evaluate(queries, rank)
        same = sum(rank(str(q["query"])) == sqlite_rank(str(q["query"])) for q in queries)
        samples = []
        for query in queries:
            began = time.perf_counter()
            rank(str(query["query"]))
            samples.append((time.perf_counter() - began) * 1000)
    p50, p95 = percentiles(samples)
    line = (
        f"- PostgreSQL: {same} of {len(queries)} queries give the same top 10 as SQLite;"
        f" search p50 {p50:.1f} ms, p95 {p95:.1f} ms; {saves:.0f} saves/s"
    )
    return results, line
