"""The change log of a PostgreSQL store under several writers: what its triggers log, when a
change gets its place in the log, and a page applied while a tool writes the same item.

The sync scenarios between stores (conflicts, merges, pages) run with a PostgreSQL hub in
tests/hub/test_sync_store.py.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from aletheia_mem.domain import memories
from aletheia_mem.storage.entries import NewFact, NewMemory, Rule
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from aletheia_mem.storage.sqlite import SqliteStore
from tests.conftest import FakeClock
from tests.hub.sync_helpers import counts, items, open_pg_hub
from tests.storage.postgres.older_schema import migrate_before

NOW = 2_000_000_000_000


@pytest.fixture
def hub(pg_store: PostgresStore) -> PostgresStore:
    return pg_store


def _new(text: str, pinned: bool = False) -> NewMemory:
    return NewMemory(
        project="shop", type="note", kind="note", title=text, text=text, tool="t",
        created_at=1000, dedupe_key=None, pinned=pinned,
    )  # fmt: skip


def _changes(store: Any, after: int = 0, *, local_only: bool = False) -> Any:
    return store.export_changes(
        after=after, limit=100, max_bytes=10**6, local_only=local_only, exclude_origin=None,
        projects=None,
    )  # fmt: skip


def _uid(hub: Any, memory_id: int) -> str:
    memory = hub.get_memory(memory_id)
    assert memory is not None
    return str(memory.uid)


def test_the_store_id_is_one_random_id_kept_across_opens(pg_store_url: str, hub: Any) -> None:
    first = hub.sync_store_id()
    again = open_pg_hub(pg_store_url)
    try:
        assert again.sync_store_id() == first
    finally:
        again.close()
    assert len(first) == 32 and int(first, 16) >= 0


def test_local_writes_are_logged_with_this_store_s_versions(hub: Any) -> None:
    memory, _ = hub.add_memory(_new("Use pnpm"))
    first = _changes(hub, local_only=True)
    [record] = first.records
    assert record["key"] == memory.uid and record["v"][1] == hub.sync_store_id()
    assert record["data"]["pinned"] is False
    hub.set_pinned(memory.id, True, 2000)
    second = _changes(hub, first.cursor, local_only=True)
    [changed] = second.records
    assert second.cursor > first.cursor and changed["v"] > record["v"]
    assert changed["data"]["pinned"] is True
    assert _changes(hub, second.cursor).records == []


def test_a_request_added_to_an_episode_logs_the_episode(hub: Any) -> None:
    with hub._db.write() as conn:
        (episode_id,) = conn.execute(
            "INSERT INTO episodes (uid, project, tool, started_at) VALUES ('e1', 'shop', 't', 5)"
            " RETURNING id"
        ).fetchone()
    cursor = _changes(hub).cursor
    with hub._db.write() as conn:
        conn.execute(
            "INSERT INTO episode_requests (episode_id, at, text) VALUES (%s, 6, 'fix it')",
            (episode_id,),
        )
    [record] = _changes(hub, cursor).records
    assert (record["kind"], record["key"]) == ("episode", "e1")
    assert record["data"]["requests"] == [[6, "fix it"]]


def test_applied_changes_are_logged_as_theirs_and_the_triggers_wake_after(
    tmp_path: Path, hub: Any, clock: FakeClock
) -> None:
    local = SqliteStore(tmp_path / "a.db")
    try:
        memories.save_memory(local, clock, memories.MemoryInput(text="x", project="shop", tool="t"))
        page = _changes(local, local_only=True)
    finally:
        local.close()
    hub.apply_changes(page.records, projects=None, now=NOW)
    assert _changes(hub, local_only=True).records == []
    assert _changes(hub).records == page.records
    memory = hub.find_memory("shop", page.records[0]["data"]["dedupe_key"])
    hub.set_pinned(memory.id, True, 3000)
    [own] = _changes(hub, local_only=True).records
    assert own["v"][1] == hub.sync_store_id() and own["v"] > page.records[0]["v"]


def test_a_change_committed_after_a_later_one_is_still_pulled(pg_store_url: str, hub: Any) -> None:
    """A writer that began first but commits last: its change must come after the cursor a
    puller took meanwhile, not before it (where the puller would never look)."""
    with psycopg.connect(pg_store_url) as slow:
        slow.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
            " updated_at) VALUES ('slow', 'shop', 'note', 'note', 'S', 'S', 't', 1, 1)"
        )
        quick, _ = hub.add_memory(_new("quick"))
        seen = _changes(hub)
        assert [record["key"] for record in seen.records] == [quick.uid]
        slow.commit()
    later = _changes(hub, seen.cursor)
    assert [record["key"] for record in later.records] == ["slow"]


def _waits_for_the_sync_lock(pg_store_url: str) -> bool:
    """Whether some transaction waits for the sync lock (0003_sync.sql: 'sync', 1)."""
    with psycopg.connect(pg_store_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid = 1937337955 AND objid = 1 AND objsubid = 2"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return row is not None and row[0] > 0


def test_a_page_waits_for_a_write_of_the_same_item_and_then_sees_it(
    pg_store_url: str, hub: Any
) -> None:
    """A tool pins a memory while a page with an older version of it arrives: the page waits,
    then finds the pin's newer version and skips, instead of writing over the pin."""
    memory, _ = hub.add_memory(_new("Flaky test"))
    [record] = _changes(hub).records
    older = {**record, "v": [record["v"][0] + 1, "0" * 32]}  # newer than the first version only
    with psycopg.connect(pg_store_url) as tool:
        tool.execute("UPDATE memories SET pinned = 1 WHERE id = %s", (memory.id,))
        with ThreadPoolExecutor(max_workers=1) as pool:
            applying = pool.submit(hub.apply_changes, [older], projects=None, now=NOW)
            deadline = time.monotonic() + 5
            while (
                not (waited := _waits_for_the_sync_lock(pg_store_url))
                and time.monotonic() < deadline
            ):
                pass
            tool.commit()
            stats = applying.result(timeout=5)
    assert waited
    assert (stats.applied, stats.skipped) == (0, 1)
    pinned = hub.get_memory(memory.id)
    assert pinned is not None and pinned.pinned


def test_two_hub_processes_applying_the_same_memory_at_once_keep_one(
    tmp_path: Path, pg_store_url: str, hub: Any, clock: FakeClock
) -> None:
    pages = []
    for name in ("a", "b"):
        local = SqliteStore(tmp_path / f"{name}.db")
        try:
            for text in ("Staging needs the VPN", f"only on {name}"):
                memories.save_memory(
                    local, clock, memories.MemoryInput(text=text, project="shop", tool="t")
                )
            pages.append(_changes(local, local_only=True).records)
        finally:
            local.close()
    other = open_pg_hub(pg_store_url)  # a second process: its own pool on the same database
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            done = [
                pool.submit(store.apply_changes, page, projects=None, now=NOW)
                for store, page in zip((hub, other), pages, strict=True)
            ]
            stats = [future.result(timeout=30) for future in done]
    finally:
        other.close()
    assert sum(s.applied + s.merged for s in stats) == 4
    assert counts(hub)["memories"] == 3
    assert len([key for kind, key in items(hub) if kind == "memory"]) == 3


def test_a_page_that_loses_a_deadlock_to_a_writer_runs_again(
    pg_store_url: str, hub: PostgresStore
) -> None:
    """A writer that locked a fact before taking the sync lock, and a page changing that fact:
    PostgreSQL ends one of the two; the page, if it was the one, runs again and applies."""
    fact, _ = hub.add_fact(
        NewFact("shop", "db", "is", "sqlite", valid_from=1, recorded_at=1, source="t")
    )
    [record] = [r for r in _changes(hub).records if r["kind"] == "fact"]
    changed = {
        **record,
        "v": [record["v"][0] + 60_000, "f" * 32],  # later than the writer's change too
        "data": {**record["data"], "dismissed_at": 5, "dismiss_reason": "wrong"},
    }
    with psycopg.connect(pg_store_url) as writer:
        writer.execute("SELECT id FROM facts WHERE id = %s FOR UPDATE", (fact.id,))
        with ThreadPoolExecutor(max_workers=1) as pool:
            applying = pool.submit(hub.apply_changes, [changed], projects=None, now=NOW)
            deadline = time.monotonic() + 5
            while not _waits_for_a_row(pg_store_url) and time.monotonic() < deadline:
                pass
            try:
                writer.execute("UPDATE facts SET source = 'w' WHERE id = %s", (fact.id,))
                writer.commit()
            except psycopg.errors.DeadlockDetected:
                writer.rollback()
            stats = applying.result(timeout=10)
    assert stats.applied == 1
    [record] = [r for r in _changes(hub).records if r["kind"] == "fact"]
    assert record["data"]["dismiss_reason"] == "wrong"


def _waits_for_a_row(pg_store_url: str) -> bool:
    """Whether some transaction of this database waits for another's row lock."""
    with psycopg.connect(pg_store_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND wait_event = 'transactionid' AND datname = current_database()"
        ).fetchone()
    return row is not None and row[0] > 0


def _index_rows(hub: PostgresStore, memory_id: int) -> tuple[Any, ...]:
    with hub._db.read() as conn:
        return tuple(
            conn.execute(sql, (memory_id,)).fetchall()
            for sql in (
                "SELECT term, col, positions FROM memory_terms WHERE memory_id = %s ORDER BY 1, 2",
                "SELECT tokens FROM memory_docs WHERE memory_id = %s",
                "SELECT path, path_reversed FROM memory_files WHERE memory_id = %s ORDER BY 1",
            )
        )


def test_memories_applied_in_bulk_are_indexed_as_a_saved_one_is(
    tmp_path: Path, hub: PostgresStore, clock: FakeClock
) -> None:
    text = "The checkout_service retries 3 times; see PaymentGateway.retry()"
    files = ["src/pay/gateway.py", "src/pay/gateway.py", "docs/pay.md"]
    local = SqliteStore(tmp_path / "a.db")
    try:
        for project in ("web", "shop"):
            item = memories.MemoryInput(
                text=text, project=project, tool="t", files=files, facts=["retries: 3"]
            )
            memories.save_memory(local, clock, item)
        page = _changes(local, local_only=True)
    finally:
        local.close()
    stats = hub.apply_changes(page.records, projects=None, now=NOW)
    assert stats.applied == 2
    synced = hub.find_memory("shop", page.records[-1]["data"]["dedupe_key"])
    assert synced is not None
    saved, _ = hub.add_memory(
        replace(_new(text), title=synced.title, narrative=synced.narrative, files=synced.files,
                facts=synced.facts)
    )  # fmt: skip
    assert _index_rows(hub, synced.id) == _index_rows(hub, saved.id)
    assert _index_rows(hub, synced.id)[0]
    with hub._db.read() as conn:
        [(docs, tokens)] = conn.execute(
            "SELECT docs, tokens FROM full_text_totals WHERE index_name = 'memories'"
        ).fetchall()
        [(count, total)] = conn.execute("SELECT count(*), sum(tokens) FROM memory_docs").fetchall()
    assert (docs, tokens) == (count, total) == (3, 3 * _index_rows(hub, saved.id)[1][0][0])


def test_a_hub_made_before_migration_7_logs_each_kind_of_item_as_before(pg_url: str) -> None:
    """Migration 0007 has the row trigger write the log entry itself: a hub on the schema
    before it logs a memory, a fact, a rule and an episode's request as it did, under the
    item's key (the rule's id; the uid of the others: the episode's for its request)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, 7)
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        memory, _ = store.add_memory(_new("Use pnpm"))
        fact, _ = store.add_fact(
            NewFact(project="shop", subject="Shop", predicate="uses", object="pnpm",
                    valid_from=1000, recorded_at=1000, source="t")
        )  # fmt: skip
        rule = Rule(
            id="r-1", then="Use pnpm", when="installing", scope_tier="project",
            scope_name="shop", evidence_memory_ids=(memory.id,), evidence_fact_ids=(),
            source="t", added_at=1000, last_confirmed_at=1000, enabled=True,
        )  # fmt: skip
        store.add_rule(rule)
        with store._db.write() as conn:
            conn.execute(
                "INSERT INTO episodes (uid, project, tool, started_at)"
                " VALUES ('e1', 'shop', 't', 5)"
            )
        cursor = _changes(store).cursor
        with store._db.write() as conn:
            conn.execute(
                "INSERT INTO episode_requests (episode_id, at, text)"
                " SELECT id, 6, 'fix it' FROM episodes WHERE uid = 'e1'"
            )
        logged = {(record["kind"], record["key"]) for record in _changes(store).records}
        [request] = _changes(store, cursor).records
    finally:
        store.close()
    assert logged == {
        ("memory", memory.uid), ("fact", fact.uid), ("rule", "r-1"), ("episode", "e1"),
    }  # fmt: skip
    assert (request["kind"], request["key"]) == ("episode", "e1")
    assert request["data"]["requests"] == [[6, "fix it"]]
