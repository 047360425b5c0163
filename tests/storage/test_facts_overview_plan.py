"""The web Facts overview (``newest_current_facts``) reads the newest facts through an index by
time, not every fact sorted (40 to 60 ms at 100,000 facts: bench/facts_overview_bench.py); of
named projects, PostgreSQL reads each project's own newest. Both stores, their own
statements, real files and schemas."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.postgres import facts as pg_facts
from aletheia_mem.storage.sqlite import facts as sqlite_facts
from tests.stores import target_of

T0 = 1_790_000_000_000
PROJECTS = 12


def _fill(store: HubStore) -> int:
    """Facts of several projects, each key written twice (the first value superseded); the
    instant they are all valid at."""
    for n in range(240):
        at = T0 + n * 1000
        project, key = f"p{n % PROJECTS:02d}", n // PROJECTS % 10
        store.add_fact(NewFact(project, f"svc {key}", "owner", f"v{n}", at, at, source="cli"))
    return T0 + 240 * 1000


def _plan(target: Path | str, projects: tuple[str, ...] | None, now: int) -> str:
    """The plan of the store's own statement; PostgreSQL's with sequential scans priced out
    (its planner reads a table this small whole whatever index it has)."""
    if isinstance(target, Path):
        sql, params = sqlite_facts.newest_current_sql(projects, 30, now)
        with closing(sqlite3.connect(target)) as conn:
            rows: list[Any] = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
        return "\n".join(str(row[3]) for row in rows)
    sql, params = pg_facts.newest_current_sql(projects, 30, now)
    with psycopg.connect(target) as pg:
        pg.execute("SET enable_seqscan = off")
        rows = pg.execute("EXPLAIN (COSTS OFF) " + sql, params).fetchall()  # type: ignore[arg-type]
    return "\n".join(str(row[0]) for row in rows)


def test_the_newest_facts_of_every_project_are_read_by_time(store: HubStore) -> None:
    now = _fill(store)
    plan = _plan(target_of(store), None, now)
    assert "facts_recorded" in plan, plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
    found = store.newest_current_facts(None, 5, now)
    assert [fact.object for fact in found] == ["v239", "v238", "v237", "v236", "v235"]


def test_the_newest_facts_of_named_projects_are_each_projects_own(store: HubStore) -> None:
    now = _fill(store)
    named = ("p03", "p07")
    plan = _plan(target_of(store), named, now)
    assert "facts_project_recorded" in plan, plan
    found = store.newest_current_facts(named, 4, now)
    assert [fact.object for fact in found] == ["v235", "v231", "v223", "v219"]
