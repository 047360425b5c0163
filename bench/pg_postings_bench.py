"""PostgreSQL backend CPU per relevance search: scored in SQL, or from postings held in memory.

``python bench/pg_postings_bench.py [--memories 10000] [--queries 400]`` fills a database of its
own (dropped afterwards) through ``domain.memories.save_memory``, then runs the same queries
through both paths of ``PgMemories.rank_memory_ids`` on a pool of one connection: the SQL path
(``memory_search.rank_memory_ids``) and the held postings (``memory_search.rank_in_memory``),
cold (the first pass loads each term) and warm, in alternating passes; then the whole of what
the search tool asks of the store (``recall.search``) on either path. Backend CPU is read from
``/proc/<pid>/stat`` of the one backend; the bench's own CPU from ``os.times``. Both paths give
the same ids (checked on every query). Last, the memory the postings hold after one pass over
the queries (``tracemalloc``, on a fresh ``Postings``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

import psycopg

from aletheia_mem.domain import recall
from aletheia_mem.search.query import query_terms
from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.postgres import memory_search
from aletheia_mem.storage.postgres.postings import Postings
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from corpus import queries
from pg_store_bench import ADMIN_URL, PROJECT, fill

CLOCK_TICK = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


def backend_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # utime, stime


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def run_pass(
    search: Callable[[T], object], asked: list[T], pid: int
) -> tuple[float, float, float, list[object]]:
    """Backend CPU, own CPU and wall time per query (ms), and the answers."""
    backend, own, wall = backend_cpu_seconds(pid), own_cpu_seconds(), time.perf_counter()
    answers = [search(query) for query in asked]
    scale = 1000 / len(asked)
    return (
        (backend_cpu_seconds(pid) - backend) * scale,
        (own_cpu_seconds() - own) * scale,
        (time.perf_counter() - wall) * scale,
        answers,
    )


def compare(store: PostgresStore, texts: list[str], passes: int) -> None:
    now = int(time.time() * 1000)
    asked = [
        MemoryQuery(terms=tuple(query_terms(text)), projects=(PROJECT,), limit=10) for text in texts
    ]
    with store._db.read() as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    pid = int(row[0])

    def by_sql(query: MemoryQuery) -> list[int]:
        with store._db.read() as conn:
            return memory_search.rank_memory_ids(conn, query, now, DEFAULT_RANKING)

    held = Postings()

    def in_memory(query: MemoryQuery) -> list[int]:
        return memory_search.rank_in_memory(store._db, held, query, now, DEFAULT_RANKING)

    print("| pass | backend CPU ms/search | bench CPU ms/search | wall ms/search |")
    print("|---|---:|---:|---:|")
    for n in range(passes):
        old = run_pass(by_sql, asked, pid)
        new = run_pass(in_memory, asked, pid)
        assert old[3] == new[3], "the paths disagree"
        label = "cold" if n == 0 else "warm"
        print(f"| SQL, pass {n + 1} | {old[0]:.3f} | {old[1]:.3f} | {old[2]:.3f} |")
        print(f"| held ({label}), pass {n + 1} | {new[0]:.3f} | {new[1]:.3f} | {new[2]:.3f} |")
    whole_search(store, texts, now, pid, passes)
    tracemalloc.start()
    fresh = Postings()
    for query in asked:
        memory_search.rank_in_memory(store._db, fresh, query, now, DEFAULT_RANKING)
    used, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"\nheld after one pass: {len(fresh.rank):,} rank rows, {len(fresh.held_terms()):,}"
        f" terms, {fresh.size:,} (term, memory) pairs, {used / 1e6:.1f} MB (tracemalloc)"
    )


def whole_search(store: PostgresStore, texts: list[str], now: int, pid: int, passes: int) -> None:
    """What the search tool asks of the store (``recall.search``: ranking, rows, facts), with
    the store's relevance ranking on either path (the store's own postings: cold in pass 1)."""
    requests = [recall.SearchRequest(query=text, projects=(PROJECT,), limit=10) for text in texts]
    held = store.rank_memory_ids

    def by_sql(query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING) -> list[int]:
        with store._db.read() as conn:
            return memory_search.rank_memory_ids(conn, query, now, ranking)

    print("\n| recall.search | backend CPU ms/call | bench CPU ms/call | wall ms/call |")
    print("|---|---:|---:|---:|")
    for n in range(passes):
        for label, rank in (("SQL", by_sql), ("held", held)):
            store.rank_memory_ids = rank  # type: ignore[method-assign]
            backend, own, wall, _ = run_pass(
                lambda request: recall.search(store, request, now), requests, pid
            )
            state = "" if label == "SQL" else (" (cold)" if n == 0 else " (warm)")
            print(f"| {label}{state}, pass {n + 1} | {backend:.3f} | {own:.3f} | {wall:.3f} |")
    store.rank_memory_ids = held  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--pg", default=ADMIN_URL, help="an admin URL: a database is made")
    args = parser.parse_args()
    name = f"aletheia_bench_{secrets.token_hex(4)}"
    url = f"{args.pg.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(args.pg, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        store = open_postgres_store(url, pool_size=1)
        try:
            seconds = fill(store, args.memories)
            print(f"filled {args.memories:,} memories in {seconds:.0f} s")
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM (ANALYZE)")
            texts = [text for text in queries(args.queries) if query_terms(text)]
            compare(store, texts, args.passes)
        finally:
            store.close()
    finally:
        with psycopg.connect(args.pg, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
