"""The SQLite search statements, rewritten for fewer instructions, against their old
definitions: the same pages in the same order, the same counts, the same facts."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aletheia_mem.search.query import fts_match_expression
from aletheia_mem.search.rank import DAY_MS, DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.rows import fact_from_row, in_clause

# About the SQLite store's own statements: SQLite alone.
pytestmark = pytest.mark.sqlite_only

NOW = 1_790_000_000_000
WORDS = ("cache", "retry", "queue", "token", "deploy", "schema", "index", "latency")

# The relevance order before the CASE: ``max(now - created_at, 0)`` as a function call.
_OLD_ORDER = (
    "bm25(memory_fts, {weights}) * (1.0 + ? * m.pinned)"
    " * (1.0 + ? / (? + max(? - m.created_at, 0)))"
    " * (CASE WHEN m.stale_from <= ? THEN ? ELSE 1.0 END), m.created_at DESC, m.id DESC"
)
_OLD_COUNT = "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)"


def _fill(store: SqliteStore, seed: int, count: int) -> None:
    """Memories of a few words each, saved around NOW (some after it), a few pinned."""
    rng = random.Random(seed)
    for n in range(count):
        text = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
        offset = rng.choice([0, 0, 1, -1, DAY_MS, -DAY_MS, -90 * DAY_MS, rng.randint(-1, 1) << 40])
        memory, _ = store.add_memory(
            NewMemory(
                project=rng.choice(["shop", "ops"]),
                type="note",
                kind="note",
                title=f"{text} {n}",
                text=text,
                tool="cli",
                created_at=NOW + offset,
                dedupe_key=None,
            )
        )
        if rng.random() < 0.1:
            store.set_pinned(memory.id, True, NOW)


def _old_rank(
    store: SqliteStore, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
) -> list[int]:
    """rank_memory_ids as it was: the same statement with the old relevance order."""
    where, params = store._filters(query)
    expression, newest, _ = store._match(list(query.terms), ranking.score_budget)
    sql = (
        "SELECT m.id FROM memory_fts CROSS JOIN memory_rank m ON m.id = memory_fts.rowid"
        " WHERE memory_fts MATCH ? AND " + " AND ".join(where)
    )
    params = [expression, *params]
    if newest is not None:
        sql += " AND memory_fts.rowid >= ?"
        params.append(newest)
    weights = ", ".join(repr(float(w)) for w in ranking.bm25_weights())
    scale = ranking.recency_scale_days * DAY_MS
    params += [ranking.pinned_boost, ranking.recency_boost * scale, scale, now]
    params += [now, ranking.stale_factor, query.limit, query.offset]
    sql += " ORDER BY " + _OLD_ORDER.format(weights=weights) + " LIMIT ? OFFSET ?"
    return [int(row[0]) for row in store._conn.execute(sql, params).fetchall()]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = SqliteStore(tmp_path_factory.mktemp("rank") / "aletheia.db")
    _fill(store, seed=7, count=300)
    yield store
    store.close()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
    now_offset=st.sampled_from([0, 1, -1, DAY_MS, -DAY_MS, 1 << 40, -(1 << 40)]),
    projects=st.sampled_from([None, ("shop",), ("ops", "shop")]),
    limit=st.integers(1, 60),
    offset=st.integers(0, 30),
)
def test_the_relevance_order_is_the_old_one(
    filled: SqliteStore,
    terms: list[str],
    now_offset: int,
    projects: tuple[str, ...] | None,
    limit: int,
    offset: int,
) -> None:
    query = MemoryQuery(terms=tuple(terms), projects=projects, limit=limit, offset=offset)
    now = NOW + now_offset
    assert filled.rank_memory_ids(query, now) == _old_rank(filled, query, now)


def test_the_relevance_order_is_the_old_one_past_the_score_budget(tmp_path: Any) -> None:
    """Enough matches that the newest ones alone are scored (the ``rowid >=`` bound)."""
    store = SqliteStore(tmp_path / "aletheia.db")
    small = Ranking(score_budget=20)
    try:
        _fill(store, seed=11, count=300)
        bounded = []
        for terms in (("cache",), ("cache", "retry"), ("queue", "token", "deploy")):
            query = MemoryQuery(terms=terms, limit=50)
            bounded.append(store._match(list(terms), small.score_budget)[1] is not None)
            for now in (NOW, NOW - DAY_MS, NOW + (1 << 40)):
                found = store.rank_memory_ids(query, now, small)
                assert found == _old_rank(store, query, now, small)
        assert any(bounded)
    finally:
        store.close()


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    terms=st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=3, unique=True),
    budget=st.sampled_from([0, 1, 5, 40, 120, 299, 300, 1000]),
    operator=st.sampled_from(["OR", "AND"]),
)
def test_match_counts_are_the_old_ones(
    filled: SqliteStore, terms: list[str], budget: int, operator: str
) -> None:
    expression = fts_match_expression(terms, operator)
    old = filled._conn.execute(_OLD_COUNT, (expression, budget + 1)).fetchone()[0]
    assert filled._count_matches({}, expression, budget) == old


def _old_search_facts(
    store: SqliteStore, terms: list[str], projects: tuple[str, ...] | None, limit: int, now: int
) -> list[Any]:
    """search_facts as it was: every column (``f.*``), read by name (the facts valid ``now``)."""
    sql = (
        "SELECT f.* FROM fact_fts JOIN facts f ON f.id = fact_fts.rowid WHERE fact_fts MATCH ?"
        " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
        " AND f.dismissed_at IS NULL"
    )
    params: list[Any] = [fts_match_expression(terms), now, now]
    if projects is not None:
        sql += " AND " + in_clause("f.project", projects)
        params.extend(projects)
    sql += " ORDER BY bm25(fact_fts, 2.0, 1.0, 1.0), f.recorded_at DESC LIMIT ?"
    return [fact_from_row(row) for row in store._conn.execute(sql, [*params, limit]).fetchall()]


@pytest.fixture(scope="module")
def with_facts(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Facts about a few subjects, some superseded (a new object) or dismissed."""
    store = SqliteStore(tmp_path_factory.mktemp("facts") / "aletheia.db")
    rng = random.Random(5)
    for n in range(200):
        memory_id = None
        if rng.random() < 0.3:
            memory, _ = store.add_memory(
                NewMemory(
                    project="shop",
                    type="note",
                    kind="note",
                    title=f"note {n}",
                    text="a note",
                    tool="cli",
                    created_at=NOW,
                    dedupe_key=None,
                )
            )
            memory_id = memory.id
        fact, _ = store.add_fact(
            NewFact(
                project=rng.choice(["shop", "ops"]),
                subject=" ".join(rng.choices(WORDS, k=rng.randint(1, 2))),
                predicate=rng.choice(["uses", "runs on", "owner"]),
                object=" ".join(rng.choices(WORDS, k=rng.randint(1, 3))),
                valid_from=NOW + n,
                recorded_at=NOW + rng.randint(0, 50),
                source="cli",
            ),
            memory_id,
        )
        if rng.random() < 0.05:
            with store._write() as conn:
                conn.execute("UPDATE facts SET dismissed_at = ? WHERE id = ?", (NOW, fact.id))
    yield store
    store.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    terms=st.lists(st.sampled_from([*WORDS, "uses", "owner", "absent"]), min_size=1, max_size=4),
    projects=st.sampled_from([None, ("shop",), ("ops", "shop"), ("none",)]),
    limit=st.integers(1, 30),
    # the facts start at NOW + 0..199: some instants amid them (values not valid yet), one after
    now=st.sampled_from([NOW + 50, NOW + 150, NOW + 1000]),
)
def test_fact_search_is_the_old_one(
    with_facts: SqliteStore,
    terms: list[str],
    projects: tuple[str, ...] | None,
    limit: int,
    now: int,
) -> None:
    found = with_facts.search_facts(terms, projects, limit, now)
    assert found == _old_search_facts(with_facts, terms, projects, limit, now)


def test_the_fact_store_has_current_superseded_and_dismissed_facts(with_facts: SqliteStore) -> None:
    """What the comparison above runs on: facts found, and facts the filters hide."""
    assert len(with_facts.search_facts(["cache"], None, 30, NOW + 1000)) > 5
    counts = with_facts._conn.execute(
        "SELECT sum(valid_to IS NOT NULL), sum(dismissed_at IS NOT NULL) FROM facts"
    ).fetchone()
    assert counts[0] > 0 and counts[1] > 0
