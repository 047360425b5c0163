"""The audit trail on PostgreSQL: newest first, filtered, last seen per actor."""

from __future__ import annotations

import psycopg
import pytest

from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.postgres.store import PostgresStore

ENTRIES = [
    AuditEntry(1_000, "alice", "save_memory", "web", "ok"),
    AuditEntry(2_000, "bob", "search", "api", "ok"),
    AuditEntry(3_000, "alice", "search", "web", "denied", "scope"),
    AuditEntry(3_000, "carol", "search", None, "ok"),
]


def _fill(store: PostgresStore) -> None:
    for entry in ENTRIES:
        store.add_audit(entry)


def test_the_audit_lists_newest_first_up_to_the_limit(pg_store: PostgresStore) -> None:
    _fill(pg_store)
    assert pg_store.list_audit(3) == [ENTRIES[3], ENTRIES[2], ENTRIES[1]]


def test_an_audit_page_filters_by_each_field_given(pg_store: PostgresStore) -> None:
    _fill(pg_store)
    assert pg_store.list_audit_page(10, None, None) == ENTRIES[::-1]
    assert pg_store.list_audit_page(10, "alice", None) == [ENTRIES[2], ENTRIES[0]]
    assert pg_store.list_audit_page(10, None, "search") == [ENTRIES[3], ENTRIES[2], ENTRIES[1]]
    assert pg_store.list_audit_page(10, None, None, project="api") == [ENTRIES[1]]
    assert pg_store.list_audit_page(10, "alice", "search", "web", "denied") == [ENTRIES[2]]
    assert pg_store.list_audit_page(1, None, None, result="ok") == [ENTRIES[3]]
    assert pg_store.list_audit_page(10, "dave", None) == []


def test_last_audit_by_actor_is_each_actors_latest_time(pg_store: PostgresStore) -> None:
    assert pg_store.last_audit_by_actor() == {}
    _fill(pg_store)
    assert pg_store.last_audit_by_actor() == {"alice": 3_000, "bob": 2_000, "carol": 3_000}


ROW = AuditEntry(5_000, "dave", "save_memory", "web", "ok")


def _audit_tx(store: PostgresStore) -> list[tuple[str, str]]:
    with store._db.read() as conn:
        rows = conn.execute("SELECT actor, xmin::text FROM audit ORDER BY id").fetchall()
    return [(row[0], row[1]) for row in rows]


def test_an_audit_row_rides_the_first_write_that_commits_and_only_that_one(
    pg_store: PostgresStore,
) -> None:
    with pg_store.audit_with_next_write(ROW) as written:
        assert written.result is None
        with pytest.raises(psycopg.errors.UndefinedTable), pg_store._db.write() as conn:
            conn.execute("INSERT INTO audit (at, actor, tool, result) VALUES (1, 'x', 't', 'ok')")
            conn.execute("SELECT * FROM no_such_table")  # fails: all rolled back
        assert written.result is None and pg_store.list_audit(10) == []
        with pg_store._db.write() as conn:
            [row] = conn.execute("SELECT txid_current()::text").fetchall()
        with pg_store._db.write() as conn:  # a later write carries nothing more
            conn.execute("SELECT 1")
    assert pg_store.list_audit(10) == [ROW]
    assert _audit_tx(pg_store) == [("dave", row[0])]
    assert written.result is not None
    pg_store.set_audit_result(written.result, "error")
    assert pg_store.list_audit(10)[0].result == "error"


def test_an_audit_row_with_no_write_in_its_block_is_not_written(pg_store: PostgresStore) -> None:
    with pg_store.audit_with_next_write(ROW) as written:
        pg_store.add_audit(ENTRIES[0])  # one statement in autocommit: not a write transaction
    with pg_store._db.write() as conn:  # after the block
        conn.execute("SELECT 1")
    assert written.result is None and pg_store.list_audit(10) == [ENTRIES[0]]
