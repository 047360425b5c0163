"""A hub applies a page of new memories in a few statements, whatever the page's size.

The hub names its token (and the sender's tool) as the author of what it receives, so every
new memory is re-authored and gets a version of the hub's own. Done one memory at a time, that
was six statements each (alias, author, duplicate check, alias again, version, log); the page
now reads in bulk and logs each memory once. The counts come from SQLite's statement trace on
the connection.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from aletheia_mem.domain import memories
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.sync_hooks import SQLITE_DIALECT
from aletheia_mem.storage.sync_apply import apply_records
from tests.conftest import FakeClock
from tests.hub.sync_helpers import items
from tests.stores import rows_at

NOW = 2_000_000_000_000


def _records(path: Path, count: int, clock: FakeClock) -> list[dict[str, Any]]:
    store = SqliteStore(path)
    try:
        for index in range(count):
            clock.advance(1000)
            item = memories.MemoryInput(text=f"note {index}", project="shop", tool="laptop")
            memories.save_memory(store, clock, item)
        page = store.export_changes(
            after=0, limit=10_000, max_bytes=10**8, local_only=True, exclude_origin=None,
            projects=None,
        )  # fmt: skip
        return page.records
    finally:
        store.close()


def _reads_to_apply(hub_path: Path, records: list[dict[str, Any]]) -> int:
    SqliteStore(hub_path).close()  # migrated
    conn = sqlite3.connect(hub_path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        conn.execute("BEGIN IMMEDIATE")
        stats = apply_records(
            conn, records, dialect=SQLITE_DIALECT, self_id="hub", now=NOW, projects=None,
            author="team",
        )  # fmt: skip
        conn.execute("COMMIT")
    finally:
        conn.close()
    assert stats.applied == len(records)
    # Writes go one row at a time on SQLite (executemany, the index); reads are what was per
    # memory and is per page now.
    return sum(1 for sql in seen if sql.lstrip().upper().startswith("SELECT"))


def test_a_page_of_new_memories_costs_the_same_reads_at_any_size(tmp_path: Path) -> None:
    clock = FakeClock()
    small = _reads_to_apply(tmp_path / "hub1.db", _records(tmp_path / "a.db", 20, clock))
    large = _reads_to_apply(tmp_path / "hub2.db", _records(tmp_path / "b.db", 200, clock))
    assert large - small < 10, (small, large)  # one at a time: 5 more per memory


def test_bulk_applied_memories_carry_the_hubs_author_and_version(tmp_path: Path) -> None:
    clock = FakeClock()
    records = _records(tmp_path / "a.db", 30, clock)
    _reads_to_apply(tmp_path / "hub.db", records)
    hub = SqliteStore(tmp_path / "hub.db")
    try:
        received = items(hub)
        log = {
            key: (changed_at, origin, remote)
            for key, changed_at, origin, remote in rows_at(
                tmp_path / "hub.db",
                "SELECT key, changed_at, origin, remote FROM sync_log WHERE kind = 'memory'",
            )
        }
    finally:
        hub.close()
    assert {data["tool"] for data in received.values()} == {"team/laptop"}
    for record in records:
        # A version of the hub's own, just after the one received (not the hub's time, which
        # would beat a later edit made elsewhere): it travels back to the sender.
        assert log[record["key"]] == (record["v"][0] + 1, "hub", 0)
