"""The audit trail on PostgreSQL: newest first, filtered, last seen per actor."""

from __future__ import annotations

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
