"""A real PostgreSQL for the tests: one database per test run, one schema per test.

The server is the one on 127.0.0.1:5432 (trust auth), or ``ALETHEIA_TEST_PG``. The run's database
is created on first use and dropped at the end; each test gets an empty schema of its own, named
in its URL (``options=-csearch_path=...``), so every connection a store or a hub process opens
sees only that test's tables. An unreachable server fails the tests that need it: set
``ALETHEIA_SKIP_POSTGRES=1`` to skip them instead on a machine without one.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

ADMIN_URL = os.environ.get("ALETHEIA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database, query=""))


def _admin_connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=5)


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """The URL of this run's own database, dropped when the run ends."""
    import psycopg

    name = f"aletheia_test_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        admin = _admin_connect(ADMIN_URL)
    except psycopg.OperationalError as error:
        if os.environ.get("ALETHEIA_SKIP_POSTGRES") == "1":
            pytest.skip(f"PostgreSQL unreachable at {ADMIN_URL}")
        pytest.fail(
            f"PostgreSQL unreachable at {ADMIN_URL} ({error}); start it, or set "
            "ALETHEIA_SKIP_POSTGRES=1 to skip the PostgreSQL tests",
            pytrace=False,
        )
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(ADMIN_URL, name)
    finally:
        with _admin_connect(ADMIN_URL) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def schema_url(database_url: str, schema: str) -> str:
    """``database_url`` with every connection's search_path set to ``schema``."""
    return database_url + "?options=" + quote(f"-csearch_path={schema}")


@pytest.fixture
def pg_url(pg_database: str) -> Iterator[str]:
    """A URL whose connections see one empty schema, this test's own."""
    schema = "t_" + secrets.token_hex(6)
    with _admin_connect(pg_database) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(pg_database, schema)
    finally:
        with _admin_connect(pg_database) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
