"""A search reads one state of the store: its statements share one read transaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.domain import recall
from aletheia_mem.storage.base import Memory, MemoryHead, MemoryQuery
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.sqlite import SqliteStore

NOW = 1_790_000_000_000


def _memory(text: str) -> NewMemory:
    return NewMemory(
        project="shop",
        type="note",
        kind="note",
        title=text,
        text=text,
        tool="cli",
        created_at=NOW,
        dedupe_key=None,
    )


def _fact(subject: str, obj: str) -> NewFact:
    return NewFact(
        project="shop",
        subject=subject,
        predicate="uses",
        object=obj,
        valid_from=NOW,
        recorded_at=NOW,
        source="cli",
    )


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "store.db")
    try:
        yield store
    finally:
        store.close()


def _search(store: HubStore | SqliteStore, query: str) -> recall.SearchResult[Memory | MemoryHead]:
    request = recall.SearchRequest(query=query, projects=("shop",))
    return recall.search_index(store, request, NOW)


@pytest.mark.sqlite_only
def test_a_search_runs_its_statements_in_one_read_transaction(sqlite_store: SqliteStore) -> None:
    sqlite_store.add_memory(_memory("caddy proxy retries"))
    sqlite_store.add_fact(_fact("proxy", "caddy"))
    statements: list[str] = []
    conn = sqlite_store._conn
    conn.set_trace_callback(statements.append)
    try:
        result = _search(sqlite_store, "caddy retries")
    finally:
        conn.set_trace_callback(None)
    assert [m.title for m in result.memories] == ["caddy proxy retries"]
    assert [f.object for f in result.facts] == ["caddy"]
    assert statements[0] == "BEGIN" and statements[-1] == "COMMIT"
    reads = statements[1:-1]
    assert len(reads) >= 4  # match counts, the ranking, the rows, the facts
    assert not {"BEGIN", "COMMIT", "ROLLBACK"} & set(reads)
    assert not conn.in_transaction


@pytest.mark.sqlite_only
def test_a_snapshot_does_not_see_a_commit_made_during_it(
    sqlite_store: SqliteStore, tmp_path: Path
) -> None:
    sqlite_store.add_memory(_memory("caddy first"))
    query = MemoryQuery(terms=("caddy",), projects=("shop",))
    other = SqliteStore(tmp_path / "store.db")
    try:
        with sqlite_store.snapshot():
            before = sqlite_store.search_memories(query, NOW)
            other.add_memory(_memory("caddy second"))  # another connection commits
            during = sqlite_store.search_memories(query, NOW)
        after = sqlite_store.search_memories(query, NOW)
    finally:
        other.close()
    assert [m.title for m in before] == [m.title for m in during] == ["caddy first"]
    assert sorted(m.title for m in after) == ["caddy first", "caddy second"]


@pytest.mark.sqlite_only
def test_a_snapshot_inside_a_write_joins_it(sqlite_store: SqliteStore) -> None:
    with sqlite_store._write() as conn:
        conn.execute("UPDATE fts_upkeep SET changes = changes")
        with sqlite_store.snapshot():
            assert sqlite_store.has_memories(None) is False
        assert conn.in_transaction  # the write's transaction goes on
    assert not sqlite_store._conn.in_transaction


@pytest.mark.sqlite_only
def test_a_snapshot_ends_its_transaction_when_the_block_raises(
    sqlite_store: SqliteStore,
) -> None:
    with pytest.raises(KeyError), sqlite_store.snapshot():
        sqlite_store.has_memories(None)
        raise KeyError("x")
    assert not sqlite_store._conn.in_transaction
    sqlite_store.add_memory(_memory("written after"))  # no transaction left open to block it
    assert sqlite_store.has_memories(None)


def test_search_finds_the_same_inside_a_snapshot_on_both_stores(store: HubStore) -> None:
    store.add_memory(_memory("caddy proxy retries"))
    store.add_fact(_fact("proxy", "caddy"))
    plain = _search(store, "caddy")
    with store.snapshot():
        inside = _search(store, "caddy")
    assert [m.id for m in plain.memories] == [m.id for m in inside.memories]
    assert [f.id for f in plain.facts] == [f.id for f in inside.facts]
