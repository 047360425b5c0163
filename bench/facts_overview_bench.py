"""The web Facts overview's query (``newest_current_facts``) on a large store, with and without
an index on ``recorded_at``: ``python bench/facts_overview_bench.py [--facts 100000]
[--projects 300] [--runs 30] [--pg ADMIN_URL]``.

Fills a SQLite store and a PostgreSQL database (made for the run, dropped after) with
``--facts`` facts over ``--projects`` projects: each project's subjects have three predicates,
each key written again and again (the older values superseded), some facts dismissed, the
recording times of all projects interleaved but for 10 quiet projects, written before all the
others. Then times the overview as the page asks it (30 facts): for every project (a local
server, an all-projects token), every project named (a token listing each), 10 projects, the
10 quiet ones (a token limited to them: the worst case for an index by time) and one project,
and says each statement's plan: first without the index ``facts_recorded (recorded_at, id)``
(dropped, as before the migrations that make it), then with it. p50 and p95 in ms.
"""

from __future__ import annotations

import argparse
import math
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from aletheia_mem.storage.postgres import facts as pg_facts
from aletheia_mem.storage.postgres.store import open_postgres_store
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite import facts as sqlite_facts

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
LIMIT = 30  # web.facts.INDEX_PER_PROJECT
PREDICATES = ("owner", "version", "status")
INDEX = "facts_recorded"  # made by migrations 0025 (SQLite) and 0021 (PostgreSQL)
CANDIDATE = f"CREATE INDEX {INDEX} ON facts (recorded_at, id)"
T0 = 1_700_000_000_000
QUIET = 10  # projects with no fact recorded lately (a token limited to them: the worst case)


def fact_rows(count: int, projects: int) -> list[tuple[Any, ...]]:
    """The facts' rows: ``(uid, project, subject, subject_key, predicate, predicate_key,
    object, valid_from, valid_to, recorded_at, source, dismissed_at)``, oldest first."""
    keys_per_project = max(1, count // projects // 4)  # about four values per key
    rows: list[tuple[Any, ...]] = []
    open_at: dict[tuple[str, str, str], int] = {}  # key -> position of its current row
    for n in range(count):
        project = f"project-{n % projects:03d}"
        key = n // projects % keys_per_project
        subject, predicate = f"subject {key // 3}", PREDICATES[key % 3]
        # the first QUIET projects were written long before the others, and not since
        at = T0 + n * 1000 - (count * 1000 if n % projects < QUIET else 0)
        place = (project, subject, predicate)
        if place in open_at:  # the current value is closed by this one
            old = rows[open_at[place]]
            rows[open_at[place]] = (*old[:8], at, *old[9:])
        open_at[place] = len(rows)
        dismissed = at if n // projects % 20 == 7 else None
        rows.append(
            (f"{n:032x}", project, subject, subject, predicate, predicate, f"value {n}",
             at, None, at, "bench", dismissed)
        )  # fmt: skip
    return rows


INSERT = (
    "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key, object,"
    " valid_from, valid_to, recorded_at, source, dismissed_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def fill_sqlite(path: Path, rows: list[tuple[Any, ...]]) -> None:
    store = SqliteStore(path)
    store.close()
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.executemany(INSERT, rows)
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()


def fill_postgres(url: str, rows: list[tuple[Any, ...]]) -> None:
    open_postgres_store(url).close()  # migrated
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(INSERT.replace("?", "%s"), rows)
        conn.execute("VACUUM (ANALYZE) facts")


def timed(run: Callable[[], object], runs: int) -> tuple[float, float]:
    run()  # warm
    times = []
    for _ in range(runs):
        begun = time.perf_counter()
        run()
        times.append((time.perf_counter() - begun) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, math.ceil(len(times) * 0.95) - 1)]


def cases(projects: int) -> dict[str, tuple[str, ...] | None]:
    """The projects asked for: none named (every one), every one named, 10 and one."""
    return {
        "every project": None,
        f"{projects} projects named": tuple(f"project-{n:03d}" for n in range(projects)),
        f"{QUIET} quiet projects": tuple(f"project-{n:03d}" for n in range(QUIET)),
        "10 projects": tuple(f"project-{n:03d}" for n in range(QUIET, projects, projects // 10))[
            :10
        ],
        "one project": ("project-007",),
    }


def plan_sqlite(path: Path, chosen: tuple[str, ...] | None, now: int) -> str:
    """The plan of the SQLite store's own statement."""
    import sqlite3

    sql, params = sqlite_facts.newest_current_sql(chosen, LIMIT, now)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    finally:
        conn.close()
    return "; ".join(str(row[3]) for row in rows)


def plan_postgres(url: str, chosen: tuple[str, ...] | None, now: int) -> str:
    """The plan of the PostgreSQL store's own statement, its nodes only."""
    sql, params = pg_facts.newest_current_sql(chosen, LIMIT, now)
    with psycopg.connect(url) as conn:
        rows = conn.execute("EXPLAIN " + sql, params).fetchall()  # type: ignore[arg-type]
    nodes = (str(row[0]).split("(cost=")[0].strip(" ->") for row in rows)
    skipped = ("Sort Key", "Filter", "Index Cond", "Recheck", "Workers", "Presorted", "JIT")
    skipped += ("Functions", "Options")
    return "; ".join(node for node in nodes if node and not node.startswith(skipped))


def measure(args: argparse.Namespace, path: Path, url: str, label: str) -> list[str]:
    now = T0 + args.facts * 1000 + 1
    lines = []
    sqlite_store = SqliteStore(path)
    pg_store = open_postgres_store(url)
    try:
        for name, chosen in cases(args.projects).items():
            for kind, store in (("SQLite", sqlite_store), ("PostgreSQL", pg_store)):
                found = store.newest_current_facts(chosen, LIMIT, now)
                assert found, (kind, name)
                p50, p95 = timed(lambda s=store, c=chosen: s.newest_current_facts(c, LIMIT, now),
                                 args.runs)  # fmt: skip
                plan = (
                    plan_sqlite(path, chosen, now)
                    if kind == "SQLite"
                    else plan_postgres(url, chosen, now)
                )
                lines.append(f"| {label} | {kind} | {name} | {p50:.2f} | {p95:.2f} | {plan} |")
    finally:
        sqlite_store.close()
        pg_store.close()
    return lines


def _drop_index(path: Path, url: str) -> None:
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
    conn.execute("ANALYZE")
    conn.close()
    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute(f"DROP INDEX IF EXISTS {INDEX}")
        pg.execute("ANALYZE facts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--projects", type=int, default=300)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pg", default=ADMIN_URL, help="an admin URL: a database is made")
    args = parser.parse_args()
    name = f"aletheia_bench_{secrets.token_hex(4)}"
    url = f"{args.pg.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(args.pg, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    lines = [
        f"{args.facts:,} facts over {args.projects} projects, {LIMIT} newest current facts,"
        f" {args.runs} runs (ms)",
        "",
        "| index | store | projects | p50 | p95 | plan |",
        "|---|---|---|---:|---:|---|",
    ]
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bench.db"
            rows = fact_rows(args.facts, args.projects)
            fill_sqlite(path, rows)
            fill_postgres(url, rows)
            _drop_index(path, url)  # as before the migration that makes it
            lines += measure(args, path, url, "none")
            import sqlite3

            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute(CANDIDATE)
            conn.execute("ANALYZE")
            conn.close()
            with psycopg.connect(url, autocommit=True) as pg:
                pg.execute(CANDIDATE)
                pg.execute("ANALYZE facts")
            lines += measure(args, path, url, "recorded_at, id")
    finally:
        with psycopg.connect(args.pg, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print("\n".join(lines))


if __name__ == "__main__":
    main()
