"""MCP session rows on PostgreSQL: expiry, a cap per owner, shared by every process."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from aletheia_mem.storage.contracts import SessionRow
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


def _row(owner: str, at: int, client: str | None = "cli") -> SessionRow:
    return SessionRow(owner, "2025-06-18", client, at)


def test_an_inserted_session_is_found_by_its_hash(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    rows.insert("h1", _row("tok-1", 100), expired_before=0, keep_at_most=10)
    assert rows.find("h1") == _row("tok-1", 100)
    assert rows.find("h2") is None
    assert rows.count() == 1


def test_a_session_without_a_client_name_keeps_none(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    rows.insert("h1", _row("tok-1", 100, client=None), expired_before=0, keep_at_most=10)
    found = rows.find("h1")
    assert found is not None and found.client_name is None


def test_touch_moves_last_use_forward_never_back(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    rows.insert("h1", _row("tok-1", 100), expired_before=0, keep_at_most=10)
    rows.touch("h1", 500)
    rows.touch("h1", 300)
    found = rows.find("h1")
    assert found is not None and found.last_used_at == 500


def test_delete_says_whether_there_was_a_session(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    rows.insert("h1", _row("tok-1", 100), expired_before=0, keep_at_most=10)
    assert rows.delete("h1") is True
    assert rows.delete("h1") is False
    assert rows.count() == 0


def test_an_insert_drops_the_sessions_idle_too_long(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    rows.insert("old", _row("tok-1", 100), expired_before=0, keep_at_most=10)
    rows.insert("kept", _row("tok-2", 900), expired_before=0, keep_at_most=10)
    rows.insert("new", _row("tok-3", 1_000), expired_before=500, keep_at_most=10)
    assert rows.find("old") is None
    assert rows.find("kept") is not None
    assert rows.count() == 2


def test_past_the_cap_the_owner_loses_its_least_recently_used(pg_store: PostgresStore) -> None:
    rows = pg_store.sessions()
    for n, at in enumerate((100, 200, 300)):
        rows.insert(f"a{n}", _row("alice", at), expired_before=0, keep_at_most=3)
    rows.insert("b0", _row("bob", 50), expired_before=0, keep_at_most=3)
    rows.touch("a0", 400)  # a1 is now alice's least recently used
    rows.insert("a3", _row("alice", 500), expired_before=0, keep_at_most=3)
    assert rows.find("a1") is None
    assert {h for h in ("a0", "a2", "a3", "b0") if rows.find(h) is not None} == {
        "a0",
        "a2",
        "a3",
        "b0",
    }


def test_a_session_begun_in_one_process_is_used_and_ended_in_another(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    other = open_postgres_store(pg_store_url, pool_size=2)
    try:
        pg_store.sessions().insert("h1", _row("tok-1", 100), expired_before=0, keep_at_most=5)
        other.sessions().touch("h1", 200)
        found = pg_store.sessions().find("h1")
        assert found is not None and found.last_used_at == 200
        assert other.sessions().delete("h1") is True
        assert pg_store.sessions().find("h1") is None
    finally:
        other.close()


def test_concurrent_inserts_of_one_owner_from_two_stores_keep_the_cap(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    other = open_postgres_store(pg_store_url, pool_size=4)
    try:
        stores = [pg_store.sessions(), other.sessions()]

        def add(n: int) -> None:
            stores[n % 2].insert(
                f"h{n}", _row("alice", 1_000 + n), expired_before=0, keep_at_most=5
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(add, range(80)))
    finally:
        other.close()
    assert pg_store.sessions().count() == 5


def test_close_of_the_session_rows_leaves_the_store_open(pg_store: PostgresStore) -> None:
    pg_store.sessions().close()
    pg_store.sessions().insert("h1", _row("tok-1", 1), expired_before=0, keep_at_most=1)
    assert pg_store.sessions().count() == 1
