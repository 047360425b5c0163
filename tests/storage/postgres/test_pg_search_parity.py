"""The PostgreSQL store finds and ranks memories and facts exactly as the SQLite store does.

A slice of the retrieval benchmark's corpus (real changelog entries and Python API docs, with
facts that supersede each other) goes into both stores; the benchmark's queries, in every order
and under several filters and score budgets, must give the same ids in the same order.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.search.rank import DEFAULT_RANKING
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from aletheia_mem.storage.sqlite import SqliteStore

DATA = Path(__file__).resolve().parents[3] / "bench" / "retrieval" / "data"
STEP = 15  # every 15th corpus item: ~400 memories
NOW = 1_800_000_000_000


def _corpus() -> list[dict[str, object]]:
    with gzip.open(DATA / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines]
    return sorted(items[::STEP], key=lambda item: int(str(item["created_at"])))


def _queries() -> list[str]:
    with (DATA / "queries.jsonl").open(encoding="utf-8") as lines:
        return [str(json.loads(line)["query"]) for line in lines]


def _save(target: object, item: dict[str, object], n: int) -> None:
    at = int(str(item["created_at"]))
    memory = NewMemory(
        project=("alpha", "beta", "gamma")[n % 3],
        type=str(item["type"]),
        kind="memory" if n % 7 else "note",
        title=str(item["title"]),
        text=str(item["text"]),
        tool="bench",
        created_at=at,
        dedupe_key=f"key-{n % 390}",  # a few saved twice: the first one stays
        files=tuple(item["files"]),  # type: ignore[arg-type]
        facts=tuple(" ".join(fact) for fact in item["facts"]),  # type: ignore[attr-defined]
        pinned=n % 11 == 0,
    )
    facts = [NewFact(memory.project, s, p, o, at, at, "bench") for s, p, o in item["facts"]]  # type: ignore[attr-defined]
    target.add_memory(memory, facts)  # type: ignore[attr-defined]


@pytest.fixture
def stores(tmp_path: Path, pg_store_url: str) -> Iterator[tuple[SqliteStore, PgMemories, PgFacts]]:
    sqlite = SqliteStore(tmp_path / "store.db")
    db = PgDatabase(pg_store_url)
    memories, facts = PgMemories(db), PgFacts(db)
    for n, item in enumerate(_corpus()):
        _save(sqlite, item, n)
        _save(memories, item, n)
    for target in (sqlite, memories):
        target.set_pinned(5, True, NOW)  # type: ignore[attr-defined]
    try:
        yield sqlite, memories, facts
    finally:
        sqlite.close()
        db.close()


def _queries_to_run() -> Iterator[tuple[MemoryQuery, object]]:
    small = replace(DEFAULT_RANKING, score_budget=12)  # the AND fallback
    tiny = replace(DEFAULT_RANKING, score_budget=1)  # the AND fallback's cut to the newest
    for common in (("version",), ("debian", "version"), ("new", "upstream", "release")):
        yield MemoryQuery(terms=common, limit=15), small
        yield MemoryQuery(terms=common, limit=15, projects=("beta",)), small
        for upto in (150, 300):  # a later page's bound: the newest matches up to it are scored
            yield MemoryQuery(terms=common, limit=15, upto=upto), small
            yield MemoryQuery(terms=common, limit=15, offset=3, upto=upto), tiny
    for n, text in enumerate(_queries()):
        terms = tuple(query_terms(text))
        yield MemoryQuery(terms=terms, limit=20), DEFAULT_RANKING
        if n % 4 == 0:
            yield MemoryQuery(terms=terms, limit=10, offset=5), small
        if n % 5 == 0:
            yield MemoryQuery(terms=terms, order="date_desc"), DEFAULT_RANKING
            yield MemoryQuery(terms=terms, order="date_asc", projects=("beta",)), DEFAULT_RANKING
        if n % 6 == 0:
            yield MemoryQuery(terms=terms, kind="memory", exclude_kinds=("note",)), small
            yield MemoryQuery(terms=terms, projects=("alpha", "gamma"), type="change"), small
        if n % 3 == 0:
            yield MemoryQuery(terms=terms, limit=5), tiny
        if n % 9 == 0:
            yield MemoryQuery(terms=terms, since=1_300_000_000_000, until=1_600_000_000_000), small


def test_the_benchmark_queries_rank_the_same_ids_in_the_same_order(stores) -> None:
    sqlite, memories, _ = stores
    runs = mismatched = 0
    for query, ranking in _queries_to_run():
        expected = sqlite.rank_memory_ids(query, NOW, ranking)  # type: ignore[arg-type]
        got = memories.rank_memory_ids(query, NOW, ranking)  # type: ignore[arg-type]
        runs += 1
        if got != expected:
            mismatched += 1
            print(query, expected, got)
    assert runs > 300
    assert mismatched == 0


def test_searches_without_terms_and_by_file_list_the_same_memories(stores) -> None:
    sqlite, memories, _ = stores
    queries = [
        MemoryQuery(projects=("alpha",), limit=30),
        MemoryQuery(order="date_asc", type="change", limit=30, offset=10),
        MemoryQuery(kind="note", limit=50),
        MemoryQuery(file="py", file_suffix=True, limit=50),
        MemoryQuery(file="Lib/asyncio/tasks.py", limit=50),
    ]
    for query in queries:
        got = memories.search_memories(query, NOW)
        assert got
        assert _without_uids(got) == _without_uids(sqlite.search_memories(query, NOW))


def _fact_searches() -> Iterator[tuple[list[str], tuple[str, ...] | None, int]]:
    """Every benchmark query, with and without projects, and phrases of several tokens."""
    for n, text in enumerate(_queries()):
        terms = query_terms(text)
        yield terms, None, 10
        if n % 2 == 0:
            yield terms, ("beta",), 5
        if n % 3 == 0:
            yield terms, ("alpha", "gamma"), 40
    for phrase in ("new upstream release", "debian version", "asyncio.tasks", "x"):
        yield [phrase], None, 20


def test_fact_search_and_reads_give_the_same_facts(stores) -> None:
    sqlite, _, facts = stores
    runs = found = 0
    for terms, projects, limit in _fact_searches():
        expected = sqlite.search_facts(terms, projects, limit, NOW)
        got = facts.search_facts(terms, projects, limit, NOW)
        assert _without_uids(got) == _without_uids(expected), (terms, projects, limit)
        runs += 1
        found += bool(expected)
    assert runs > 500
    assert found > 100
    for project in ("alpha", "beta"):
        expected = sqlite.current_facts(project, 40, NOW)
        assert _without_uids(facts.current_facts(project, 40, NOW)) == _without_uids(expected)
    subjects = {fact.subject for fact in sqlite.current_facts("alpha", 40, NOW)}
    for subject in subjects:
        expected = sqlite.facts_about(subject, None, None)
        assert _without_uids(facts.facts_about(subject, None, None)) == _without_uids(expected)


def _without_uids(items: Sequence[Any]) -> list[Any]:
    """Rows as compared between the stores: the same but for their random uids."""
    return [replace(item, uid="") for item in items]
