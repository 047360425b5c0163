"""The PostgreSQL store as a whole: health, and connections that the server dropped."""

from __future__ import annotations

import time

import psycopg

from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


def test_health_reports_the_server_schema_and_size(pg_store: PostgresStore) -> None:
    health = pg_store.health()
    assert health["connection"] == "ok"
    assert health["server_version"].split(".")[0].isdigit()
    assert health["schema"] >= 2
    assert health["database_size_bytes"] > 0
    assert health["database"].startswith("aletheia_test_")


def test_health_never_shows_the_password(pg_url: str) -> None:
    with_password = pg_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
    store = open_postgres_store(with_password)  # trust auth: the password is not checked
    try:
        assert "s3cret" not in repr(store.health())
    finally:
        store.close()


def test_connections_the_server_dropped_are_replaced_by_the_pool(
    pg_store: PostgresStore, pg_url: str
) -> None:
    assert pg_store.list_tokens() == []
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        dropped = admin.execute(f"SELECT count(pg_terminate_backend(pid)) {others}").fetchone()
        deadline = time.monotonic() + 5
        while admin.execute(f"SELECT count(*) {others}").fetchone() != (0,):
            assert time.monotonic() < deadline, "the dropped connections did not end"
    assert dropped is not None and dropped[0] >= 1
    assert pg_store.list_tokens() == []
    assert pg_store.health()["connection"] == "ok"
