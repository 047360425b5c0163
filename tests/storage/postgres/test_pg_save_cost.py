"""What a save asks of the server: its statements and round trips, read from libpq's trace of
the one pooled connection (every message the client sent and the server answered)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from tests.storage.postgres.test_pg_memories import _fact, _new

ROW = AuditEntry(5_000, "dave", "save_memory", "shop", "ok")


@pytest.fixture
def one_connection_store(pg_store_url: str) -> Iterator[PostgresStore]:
    store = open_postgres_store(pg_store_url, pool_size=1)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def traced(store: PostgresStore) -> Iterator[list[str]]:
    """The messages of the block on the store's one connection, as (sender, type, text)."""
    lines: list[str] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as trace:
        with store._db.read() as conn:  # the pool's one connection, lent back to it
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield lines
        finally:
            with store._db.read() as again:
                assert again is conn
                conn.pgconn.untrace()
            trace.seek(0)
            lines.extend(trace.read().splitlines())


def round_trips(lines: list[str]) -> int:
    """Each round trip ends with the server ready for the next query."""
    return sum(1 for line in lines if line.split("\t")[:3:2] == ["B", "ReadyForQuery"])


def queries(lines: list[str]) -> list[str]:
    """The statements sent: simple queries and parsed ones (a prepared one is parsed once)."""
    sent = []
    for line in lines:
        sender, _, kind, *rest = line.split("\t")
        if sender == "F" and kind in ("Query", "Parse"):
            sent.append(rest[0])
    return sent


def _audit_rows(store: PostgresStore) -> list[tuple[str, str, str]]:
    with store._db.read() as conn:
        rows = conn.execute("SELECT actor, result, xmin::text FROM audit ORDER BY id").fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def _memory_xmin(store: PostgresStore, memory_id: int) -> str:
    with store._db.read() as conn:
        row = conn.execute("SELECT xmin::text FROM memories WHERE id = %s", (memory_id,))
        return str(row.fetchone()[0])  # type: ignore[index]


def test_a_save_without_facts_is_one_statement_with_its_audit_row(
    one_connection_store: PostgresStore,
) -> None:
    store = one_connection_store
    with store.audit_with_next_write(ROW) as written, traced(store) as lines:
        memory, created = store.add_memory(_new("Use pnpm", dedupe_key="k1"))
    assert created and memory.title == "Use pnpm"
    # Before: BEGIN, the save, the audit row and COMMIT, a round trip each. Now the schema
    # guard's two statements (schema_guard), then the save with its audit row: one round trip.
    assert round_trips(lines) == 1, lines
    hold, check, sql = queries(lines)
    assert "pg_advisory_xact_lock_shared" in hold and "FROM schema_migrations" in check
    assert "INSERT INTO memories" in sql and "INSERT INTO audit" in sql
    assert not any("BEGIN" in line or "COMMIT" in line for line in lines)
    # One transaction: the audit row committed with the memory, its id the rider's result.
    assert _audit_rows(store) == [("dave", "ok", _memory_xmin(store, memory.id))]
    assert written.result is not None
    assert store.get_memory(memory.id) == memory


def test_a_save_of_a_taken_key_returns_the_memory_and_still_writes_its_audit_row(
    one_connection_store: PostgresStore,
) -> None:
    store = one_connection_store
    first, _ = store.add_memory(_new("Use pnpm", dedupe_key="k1"))
    with store.audit_with_next_write(ROW) as written:
        again, created = store.add_memory(_new("Use pnpm", dedupe_key="k1"))
    assert (again, created) == (first, False)
    assert [row[:2] for row in _audit_rows(store)] == [("dave", "ok")]
    assert written.result is not None
    with store._db.read() as conn:  # no id drawn for the repeat: the #N stay dense
        row = conn.execute("SELECT last_value FROM memories_id_seq").fetchone()
    assert row is not None and row[0] == first.id


def test_a_save_without_a_rider_is_one_statement_too(
    one_connection_store: PostgresStore,
) -> None:
    store = one_connection_store
    with traced(store) as lines:
        memory, created = store.add_memory(_new("Use pnpm", files=("a.py", "b.py")))
    assert created and round_trips(lines) == 1, lines
    assert store.get_memory(memory.id) == memory
    assert _audit_rows(store) == []


def test_a_save_with_facts_commits_memory_facts_and_audit_row_together(
    one_connection_store: PostgresStore,
) -> None:
    store = one_connection_store
    with store.audit_with_next_write(ROW) as written, traced(store) as lines:
        memory, created = store.add_memory(_new("Use pnpm"), [_fact("k8s")])
    assert created and written.result is not None
    assert _audit_rows(store) == [("dave", "ok", _memory_xmin(store, memory.id))]
    [fact] = store.facts_about("Checkout Service", "shop", None)
    assert (fact.memory_id, fact.object) == (memory.id, "k8s")
    assert "BEGIN" in queries(lines)[0] and "COMMIT" in queries(lines)[-1]


def test_a_statement_a_rider_joined_reads_by_name_and_position(pg_store: PostgresStore) -> None:
    db = pg_store._db
    ctes = ["x AS (SELECT 7 AS id, 'a' AS name WHERE %(found)s)"]
    with pg_store.audit_with_next_write(ROW) as written:
        row = db.write_with(ctes, "SELECT * FROM x", {"found": True})
    assert row is not None and (row["id"], row["name"]) == (7, "a") == tuple(row)
    assert row.keys() == ["id", "name"] and written.result is not None
    with pg_store.audit_with_next_write(ROW) as again:
        assert db.write_with(ctes, "SELECT * FROM x", {"found": False}) is None
    assert again.result is not None and again.result != written.result
    assert db.write_with(ctes, "SELECT * FROM x", {"found": False}) is None  # no rider
    assert len(pg_store.list_audit(10)) == 2
