"""The PostgreSQL store as a whole: health, dropped connections, errors told clearly."""

from __future__ import annotations

import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from aletheia_mem.errors import ConflictError, InvalidInputError
from aletheia_mem.storage.postgres.database import PgDatabase, StoreUnavailableError, redact_url
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from tests.pg import FIXTURE_APPLICATION


def test_health_reports_the_server_schema_and_size(pg_store: PostgresStore) -> None:
    health = pg_store.health()
    assert health["connection"] == "ok"
    assert health["server_version"].split(".")[0].isdigit()
    assert health["schema"] >= 2
    assert health["database_size_bytes"] > 0
    assert health["database"].startswith("aletheia_test_")


def test_health_never_shows_the_password(pg_store_url: str) -> None:
    with_password = pg_store_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
    store = open_postgres_store(with_password)  # trust auth: the password is not checked
    try:
        assert "s3cret" not in repr(store.health())
    finally:
        store.close()


def test_connections_the_server_dropped_are_replaced_by_the_pool(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    assert pg_store.list_tokens() == []
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with psycopg.connect(pg_store_url, autocommit=True) as admin:
        dropped = admin.execute(f"SELECT count(pg_terminate_backend(pid)) {others}").fetchone()
        deadline = time.monotonic() + 5
        while admin.execute(f"SELECT count(*) {others}").fetchone() != (0,):
            assert time.monotonic() < deadline, "the dropped connections did not end"
    assert dropped is not None and dropped[0] >= 1
    assert pg_store.list_tokens() == []
    assert pg_store.health()["connection"] == "ok"


def test_a_pool_of_connections_all_dropped_serves_the_next_read_at_once(pg_store_url: str) -> None:
    """After a restart every idle connection is dead: each is dropped without the pool's wait
    between two broken ones (1 s, 2 s, 4 s...), which kept the first request 10 s, then 503."""
    db = PgDatabase(pg_store_url, pool_size=8)
    all_lent = threading.Barrier(8, timeout=10)

    def hold_one(_: int) -> None:
        with db.read() as conn:
            conn.execute("SELECT 1")
            all_lent.wait()

    others = (
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        f" AND application_name <> '{FIXTURE_APPLICATION}'"
    )
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(hold_one, range(8)))  # the pool now holds 8 idle connections
        with psycopg.connect(pg_store_url, autocommit=True) as admin:
            dropped = admin.execute(f"SELECT count(pg_terminate_backend(pid)) {others}").fetchone()
            deadline = time.monotonic() + 5
            while admin.execute(f"SELECT count(*) {others}").fetchone() != (0,):
                assert time.monotonic() < deadline, "the dropped connections did not end"
        assert dropped == (8,)
        started = time.monotonic()
        with db.read() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert time.monotonic() - started < 3.0  # loose: the pool's waits took 10 s
    finally:
        db.close()


def test_a_deadlock_reaches_the_caller_as_one_so_that_it_may_retry(pg_store_url: str) -> None:
    db = PgDatabase(pg_store_url, pool_size=2)
    both_hold_one = threading.Barrier(2, timeout=5)

    def lock_both(first: int, second: int) -> str:
        try:
            with db.write() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (first,))
                both_hold_one.wait()
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (second,))
        except psycopg.errors.DeadlockDetected:
            return "deadlock"
        return "done"

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = sorted(pool.map(lock_both, (1, 2), (2, 1)))
    finally:
        db.close()
    assert outcomes == ["deadlock", "done"]


def test_bad_input_is_an_input_error_and_a_taken_key_a_conflict(pg_store_url: str) -> None:
    db = PgDatabase(pg_store_url, pool_size=1)
    try:
        with pytest.raises(InvalidInputError, match="out of range"), db.write() as conn:
            conn.execute("SELECT %s::bigint", (2**70,))
        with pytest.raises(InvalidInputError, match="surrogates"), db.read() as conn:
            conn.execute("SELECT %s::text", ("\ud800",))
        with pytest.raises(ConflictError, match="Already stored"), db.write() as conn:
            conn.execute("CREATE TEMP TABLE t (k int PRIMARY KEY)")
            conn.execute("INSERT INTO t VALUES (1), (1)")
    finally:
        db.close()


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    url = "postgresql://hub:s3cret@127.0.0.1:1/team"  # nothing listens on port 1
    with pytest.raises(StoreUnavailableError) as raised:
        open_postgres_store(url)
    message = raised.value.message
    assert message.startswith(
        "Cannot reach the PostgreSQL store at postgresql://hub@127.0.0.1:1/team:"
    )
    assert "s3cret" not in message and "\n" not in message


def _refusal(url: str) -> str:
    with pytest.raises(StoreUnavailableError) as raised:
        open_postgres_store(url)
    message = raised.value.message
    assert "\n" not in message and "Cannot reach" not in message
    return message


def test_a_database_that_is_not_there_is_named_as_such(pg_database: str) -> None:
    url = pg_database.rsplit("/", 1)[0] + "/no_such_database"
    assert _refusal(url) == (
        f"There is no such PostgreSQL database at {redact_url(url)}:"
        ' database "no_such_database" does not exist'
    )


def test_a_login_the_server_refuses_is_named_as_such(pg_database: str) -> None:
    url = pg_database.replace("postgresql://postgres@", "postgresql://no_such_role:pw@")
    message = _refusal(url)
    assert message.startswith(f"PostgreSQL at {redact_url(url)} refused the login: ")
    assert 'role "no_such_role" does not exist' in message and ":pw@" not in message


def test_a_user_without_rights_on_the_schema_is_told_what_is_missing(pg_url: str) -> None:
    role = "aletheia_weak_" + secrets.token_hex(4)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        schema = admin.execute("SELECT current_schema()").fetchone()
    assert schema is not None
    try:
        weak = pg_url.replace("postgresql://postgres@", f"postgresql://{role}@")
        shown = redact_url(weak)
        assert _refusal(weak).startswith(f"The PostgreSQL user of {shown} has no schema it may use")
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"GRANT USAGE ON SCHEMA {schema[0]} TO {role}")
        message = _refusal(weak)
        assert message.startswith(f"The PostgreSQL user of {shown} lacks a permission:")
        assert "permission denied for schema" in message
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")  # its grant on the schema
            admin.execute(f"DROP ROLE {role}")
