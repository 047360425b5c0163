"""Listing dismissed memories reads only the dismissed rows, newest first."""

from __future__ import annotations

import pytest

from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.test_match_counts import NOW, _memory


def _plan(store: SqliteStore, projects: tuple[str, ...] | None) -> str:
    where = "m.dismissed_at IS NOT NULL"
    params: list[object] = []
    if projects is not None:
        where += f" AND m.project IN ({', '.join('?' for _ in projects)})"
        params += projects
    sql = (
        f"SELECT m.id FROM memories m WHERE {where} ORDER BY m.created_at DESC, m.id DESC LIMIT 50"
    )
    rows = store._conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    return " ".join(str(row[3]) for row in rows)


# Reads SQLite's query plan (the listing itself is in the contract suite): SQLite alone.
@pytest.mark.sqlite_only
def test_dismissed_memories_are_listed_newest_first_from_their_own_index(
    store: SqliteStore,
) -> None:
    ids = [store.add_memory(_memory(f"note {n}"))[0].id for n in range(4)]
    for memory_id in ids[:3]:
        audit = AuditEntry(at=NOW, actor="cli", tool="dismiss", project="shop", result="ok")
        store.set_dismissed("memories", memory_id, NOW, "duplicate", audit)
    found = store.search_memories(
        MemoryQuery(projects=("shop",), dismissed=True, order="date_desc"), NOW
    )
    assert sorted(memory.id for memory in found) == ids[:3]
    assert "memories_dismissed_project" in _plan(store, ("shop",))
    assert "memories_dismissed_created" in _plan(store, None)
