"""Relevance search from postings held in memory (postings.py, migration 0009): it ranks exactly
as the SQL path does, sees every commit of another store on the database at its next search
(in whatever order they commit), and keeps the postings it holds within their bound."""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import Memory, MemoryQuery
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.postgres import full_text, memory_search
from aletheia_mem.storage.postgres.full_text import phrase_tokens
from aletheia_mem.storage.postgres.memories import _insert_new_memory
from aletheia_mem.storage.postgres.postings import Postings
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store

NOW = 1_800_000_000_000
DAY = 86_400_000
WORDS = [
    "deploy", "friday", "cache", "search", "index", "token", "hub", "pool", "commit", "query",
    "rank", "budget", "phrase", "release", "version", "debian", "upstream", "schema", "vacuum",
    "socket", "retry", "window", "stale", "pinned", "memory", "fact", "project", "review",
]  # fmt: skip
PROJECTS = ("alpha", "beta", "gamma")
TYPES = ("decision", "change", "bug")
KINDS = ("memory", "note", "work_state")


def _sentence(rng: random.Random, words: int) -> str:
    # a small vocabulary with skewed frequencies: common words, rare ones, repeated phrases
    return " ".join(rng.choice(WORDS[: rng.choice((6, 12, len(WORDS)))]) for _ in range(words))


def _memory(rng: random.Random, n: int) -> NewMemory:
    return NewMemory(
        project=rng.choice(PROJECTS),
        type=rng.choice(TYPES),
        kind=rng.choice(KINDS),
        title=_sentence(rng, rng.randint(1, 5)),
        text=_sentence(rng, rng.randint(0, 30)),
        tool="test",
        created_at=NOW - rng.randint(0, 400) * DAY,
        dedupe_key=None,
        narrative=_sentence(rng, 8) if n % 3 == 0 else None,
        facts=(_sentence(rng, 4),) if n % 4 == 0 else (),
        files=(f"src/{rng.choice(WORDS)}.py",) if n % 5 == 0 else (),
        pinned=n % 9 == 0,
    )


def _fact(project: str, obj: str) -> NewFact:
    return NewFact(project, "the hub", "runs on", obj, NOW, NOW, "test")


def _fill(store: PostgresStore, rng: random.Random, count: int) -> None:
    for n in range(count):
        new = _memory(rng, n)
        facts = [_fact(new.project, f"host {n}")] if n % 10 == 0 else []
        store.add_memory(new, facts)  # later facts supersede earlier ones: those go stale
    with store._db.write() as conn:
        conn.execute("UPDATE memories SET dismissed_at = %s WHERE id %% 13 = 0", (NOW,))


def _query(rng: random.Random) -> tuple[MemoryQuery, Ranking]:
    terms = []
    for _ in range(rng.randint(1, 3)):
        words = rng.choice((1, 1, 1, 2, 2, 3))
        terms.append(" ".join(rng.choice(WORDS) for _ in range(words)))
    if rng.random() < 0.1:
        terms.append("unheard")
    filters: dict[str, object] = {}
    if rng.random() < 0.3:
        filters["projects"] = tuple(rng.sample(PROJECTS, rng.randint(0, 2)))
    if rng.random() < 0.2:
        filters["type"] = rng.choice(TYPES)
    if rng.random() < 0.2:
        filters["kind"] = rng.choice(KINDS)
    if rng.random() < 0.2:
        filters["exclude_kinds"] = ("work_state",)
    if rng.random() < 0.2:
        filters["since"] = NOW - rng.randint(100, 300) * DAY
    if rng.random() < 0.2:
        filters["until"] = NOW - rng.randint(0, 200) * DAY
    if rng.random() < 0.1:
        filters["dismissed"] = True
    if rng.random() < 0.2:
        filters["upto"] = rng.randint(50, 320)
    query = MemoryQuery(
        terms=tuple(terms),
        limit=rng.choice((5, 20, 50)),
        offset=rng.choice((0, 0, 0, 3, 10)),
        **filters,  # type: ignore[arg-type]
    )
    budget = rng.choice((0, 1, 5, 30, 200, 1000))
    return query, replace(DEFAULT_RANKING, score_budget=budget)


def _by_sql(store: PostgresStore, query: MemoryQuery, ranking: Ranking) -> list[int]:
    with store._db.read() as conn:
        return memory_search.rank_memory_ids(conn, query, NOW, ranking)


@pytest.fixture
def two_stores(pg_store_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two stores on one database, each with its own pool and postings: two hub processes."""
    first = open_postgres_store(pg_store_url, pool_size=2)
    second = open_postgres_store(pg_store_url, pool_size=2)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_held_postings_rank_random_queries_exactly_as_sql_does(two_stores) -> None:
    writer, reader = two_stores
    rng = random.Random(7)
    _fill(writer, rng, 300)
    runs = matched = 0
    for n in range(600):
        if n % 50 == 49:  # writes between searches: the reader's postings follow them
            _fill(writer, rng, 5)
            writer.set_pinned(rng.randint(1, 300), True, NOW)
        query, ranking = _query(rng)
        expected = _by_sql(reader, query, ranking)
        got = reader.rank_memory_ids(query, NOW, ranking)
        assert got == expected, (query, ranking.score_budget)
        runs += 1
        matched += bool(expected)
    assert matched > runs // 2  # the queries find something, mostly


def _search(store: PostgresStore, *terms: str) -> list[int]:
    query = MemoryQuery(terms=terms, limit=50)
    got = store.rank_memory_ids(query, NOW, DEFAULT_RANKING)
    assert got == _by_sql(store, query, DEFAULT_RANKING)
    return got


def _lychee(title: str, **changes: object) -> NewMemory:
    memory = NewMemory("alpha", "decision", "memory", title, "lychee", "test", NOW, None)
    return replace(memory, **changes)  # type: ignore[arg-type]


def test_another_stores_writes_show_at_the_next_search(two_stores) -> None:
    writer, reader = two_stores
    plain, _ = writer.add_memory(_lychee("kiwi mango"))
    assert _search(reader, "mango") == [plain.id]  # the reader holds mango's postings now
    todo = _lychee("todo", text="mango papaya lychee", kind="work_state", dedupe_key="w:t")
    listed = writer.put_work_state(todo)
    assert set(_search(reader, "mango")) == {listed, plain.id}  # a save
    writer.put_work_state(replace(todo, text="papaya lychee"))
    assert _search(reader, "mango") == [plain.id]  # an update re-indexes
    assert _search(reader, "papaya") == [listed]
    assert _search(reader, "lychee") == [listed, plain.id]  # equal scores: the newest id first
    writer.set_pinned(plain.id, True, NOW)
    assert _search(reader, "lychee") == [plain.id, listed]  # pinned
    with writer._db.write() as conn:
        conn.execute("UPDATE memories SET dismissed_at = %s WHERE id = %s", (NOW, plain.id))
    assert _search(reader, "lychee") == [listed]  # dismissed
    with writer._db.write() as conn:
        conn.execute("DELETE FROM memories WHERE id = %s", (listed,))
    assert _search(reader, "papaya") == []  # deleted
    assert _search(reader, "lychee") == []


def test_a_memory_holding_an_id_of_the_query_ranks_first_on_both_paths(two_stores) -> None:
    writer, reader = two_stores
    words = writer.add_memory(_lychee("lychee release lychee"), [])[0]
    holder = writer.add_memory(_lychee("old", text="deploy 3f9a8c1d2e4b"), [])[0]

    assert _search(reader, "lychee", "3f9a8c1d2e4b") == [holder.id, words.id]


def test_a_memory_holding_a_name_ending_in_an_id_ranks_first_on_both_paths(two_stores) -> None:
    writer, reader = two_stores
    words = writer.add_memory(_lychee("lychee release lychee"), [])[0]
    holder = writer.add_memory(_lychee("old", text="deploy userId9a8b7c"), [])[0]

    assert _search(reader, "lychee", "userid9a8b7c") == [holder.id, words.id]


def test_a_memory_whose_fact_is_superseded_ranks_stale_at_the_next_search(two_stores) -> None:
    writer, reader = two_stores
    older, _ = writer.add_memory(_lychee("one"))
    newer, _ = writer.add_memory(_lychee("two"), [_fact("alpha", "one")])
    assert _search(reader, "lychee") == [newer.id, older.id]
    writer.add_fact(_fact("alpha", "two"))
    assert reader.stale_memory_ids([newer.id], NOW) == {newer.id}
    assert _search(reader, "lychee") == [older.id, newer.id]


def _insert_counted(conn: psycopg.Connection[Any], new: NewMemory) -> Memory | None:
    """A memory inserted and counted in the index totals, in ``conn``'s open transaction."""
    totals = full_text.Totals()
    inserted = _insert_new_memory(conn, new, totals)
    totals.write(conn)
    return inserted


def test_a_commit_that_started_before_a_later_one_is_not_missed(
    two_stores, pg_store_url: str
) -> None:
    writer, reader = two_stores
    base = replace(_memory(random.Random(3), 3), title="durian", text="durian", project="beta")
    writer.add_memory(base)
    _search(reader, "durian")
    with psycopg.connect(pg_store_url) as slow, psycopg.connect(pg_store_url) as fast:
        late = _insert_counted(slow, replace(base, text="durian late"))
        early = _insert_counted(fast, replace(base, text="durian early"))
        fast.commit()  # a later transaction commits first
        assert early is not None and late is not None
        assert early.id in _search(reader, "durian")
        assert late.id not in _search(reader, "durian")
        slow.commit()
    assert late.id in _search(reader, "durian")


def test_terms_past_the_bound_are_dropped_and_searches_stay_exact(two_stores) -> None:
    writer, reader = two_stores
    _fill(writer, random.Random(11), 120)
    postings = Postings(max_postings=40)
    for word in WORDS:
        query = MemoryQuery(terms=(word, "release version"), limit=30)
        got = memory_search.rank_in_memory(reader._db, postings, query, NOW, DEFAULT_RANKING)
        assert got == _by_sql(reader, query, DEFAULT_RANKING)
        held = set(postings.held_terms())
        own = {*phrase_tokens(word), "releas", "version"}
        assert held >= own  # a search keeps its own terms
        assert postings.size <= 40 or held == own
    assert len(postings.held_terms()) < len(WORDS)


def test_a_reader_behind_purged_tombstones_loads_afresh(two_stores, pg_store_url: str) -> None:
    writer, reader = two_stores
    kept, _ = writer.add_memory(_lychee("one"))
    gone, _ = writer.add_memory(_lychee("two"))
    assert _search(reader, "lychee") == [gone.id, kept.id]
    with writer._db.write() as conn:
        conn.execute("DELETE FROM memories WHERE id = %s", (gone.id,))
        conn.execute("UPDATE memory_tombstones SET deleted_at = now() - interval '2 days'")
    third = open_postgres_store(pg_store_url, pool_size=1)
    try:
        _search(third, "lychee")  # a store's first search purges the tombstones a day old
    finally:
        third.close()
    with writer._db.read() as conn:
        assert conn.execute("SELECT count(*) FROM memory_tombstones").fetchone() == (0,)
    assert _search(reader, "lychee") == [kept.id]


def test_threads_searching_one_store_at_once_each_get_the_exact_ranking(two_stores) -> None:
    writer, reader = two_stores
    rng = random.Random(5)
    _fill(writer, rng, 150)
    asked = [_query(rng) for _ in range(160)]
    expected = [_by_sql(writer, query, ranking) for query, ranking in asked]
    postings = Postings(max_postings=30)  # terms dropped all the time, by one thread or another

    def search(n: int) -> list[list[int]]:
        return [
            memory_search.rank_in_memory(reader._db, postings, query, NOW, ranking)
            for query, ranking in asked[n::4]
        ]

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(search, range(4)))
    for n, found in enumerate(answers):
        assert found == expected[n::4]
