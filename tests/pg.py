"""A real PostgreSQL for the tests: one database per test run, schemas in it for the tests.

The server is the one on 127.0.0.1:5432 (trust auth), or ``ALETHEIA_TEST_PG``. The run's database
is created on first use and dropped at the end. A schema is named in a test's URL
(``options=-csearch_path=...``), so every connection a store or a hub process opens sees only
that schema's tables: ``pg_url`` is an empty schema of the test's own (the store migrates it, as
in production), ``pg_store_url`` a migrated schema reused by every test that asks, emptied
before each (fast: no migrations per test). An unreachable server fails the tests that need it: set
``ALETHEIA_SKIP_POSTGRES=1`` to skip them instead on a machine without one.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from graphlib import TopologicalSorter
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

if TYPE_CHECKING:
    from aletheia_mem.storage.contracts import HubStore

ADMIN_URL = os.environ.get("ALETHEIA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database, query=""))


# The application_name of the fixtures' own connections (one stays open for the resets), which
# a test counting a hub's connections leaves out.
FIXTURE_APPLICATION = "aletheia-test-fixtures"


def _admin_connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(
        url, autocommit=True, connect_timeout=5, application_name=FIXTURE_APPLICATION
    )


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


# Tables a reset leaves alone: the applied migrations.
_KEPT = ("schema_migrations",)


class MigratedSchemas:
    """Schemas of the run's database, each migrated once, then emptied for every test that
    takes it: one round trip in place of the migrations, so a test on PostgreSQL costs about
    what one on SQLite does.

    The reset DELETEs every data table's rows (children before parents), puts back the rows
    the migrations seed (copied aside to ``<schema>_seed`` once: full-text totals, the sync
    identity), gives the store a new sync identity as a new store has, and starts every
    sequence again at 1. DELETE, not TRUNCATE: on a few rows it takes ~1 ms where one
    TRUNCATE of the 20-odd tables takes ~250 ms (a new file per table), measured here.
    """

    def __init__(self, database_url: str) -> None:
        self._database_url = database_url
        self._resets: dict[str, bytes] = {}
        self._conn = None  # one connection for every reset of the run

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def clean(self, slot: str) -> str:
        """The URL of the schema for ``slot``, migrated and empty."""
        schema = "m_" + slot
        url = schema_url(self._database_url, schema)
        reset = self._resets.get(schema)
        if reset is None:
            self._resets[schema] = self._migrate(schema, url)
        else:
            self._reset(reset)
        return url

    def _reset(self, script: bytes) -> None:
        import psycopg

        for attempt in (1, 2):
            if self._conn is None or self._conn.closed:
                self._conn = _admin_connect(self._database_url)
            try:
                self._conn.execute(script)
                return
            except psycopg.OperationalError:  # a test ended every connection: open another
                self._conn.close()
                if attempt == 2:
                    raise

    def _migrate(self, schema: str, url: str) -> bytes:
        from aletheia_mem.storage.postgres.database import migrate

        with _admin_connect(self._database_url) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        with _admin_connect(url) as conn:
            with conn.transaction():
                migrate(conn)
            return _reset_script(conn, schema)


def _children_first(conn, schema: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The schema's data tables, each before every table it references."""
    references: dict[str, set[str]] = {
        str(name): set()
        for (name,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        )
        if name not in _KEPT
    }
    for child, parent in conn.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c"
        " JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = %s",
        (schema,),
    ):
        child, parent = child.split(".")[-1], parent.split(".")[-1]
        if child != parent:  # a table's own references go in one DELETE
            references[parent].add(child)  # the parent waits for its children
    return list(TopologicalSorter(references).static_order())


def _reset_script(conn, schema: str) -> bytes:  # type: ignore[no-untyped-def]
    """Copies the seeded rows aside; returns the one script that empties ``schema``."""
    seed = schema + "_seed"
    conn.execute(f"CREATE SCHEMA {seed}")
    tables = _children_first(conn, schema)
    seeded = []
    for table in tables:
        if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {schema}.{table})").fetchone() == (True,):
            conn.execute(f"CREATE TABLE {seed}.{table} AS TABLE {schema}.{table}")
            seeded.append(table)
    sequences = conn.execute(
        "SELECT sequencename FROM pg_sequences WHERE schemaname = %s", (schema,)
    ).fetchall()
    statements = [
        *(f"DELETE FROM {schema}.{table}" for table in tables),
        *(f"INSERT INTO {schema}.{table} TABLE {seed}.{table}" for table in seeded),
        *(f"SELECT setval('{schema}.{name}', 1, false)" for (name,) in sequences),
    ]
    if "sync_identity" in seeded:  # a new store has an identity of its own
        statements.append(
            f"UPDATE {schema}.sync_identity"
            " SET store_id = replace(gen_random_uuid()::text, '-', '')"
        )
    # bytes: sent as one simple query, its statements in one transaction
    return ";\n".join(statements).encode()


@pytest.fixture(scope="session")
def pg_schemas(pg_database: str) -> Iterator[MigratedSchemas]:
    schemas = MigratedSchemas(pg_database)
    try:
        yield schemas
    finally:
        schemas.close()


@pytest.fixture
def pg_store_url(pg_schemas: MigratedSchemas) -> str:
    """A URL whose connections see a migrated, empty schema (reused: emptied for each test)."""
    return pg_schemas.clean("main")


@pytest.fixture
def pg_migrated_store(pg_store_url: str) -> Iterator[HubStore]:
    """The PostgreSQL store on ``pg_store_url``, closed after the test."""
    from aletheia_mem.storage.open import open_hub_store

    store = open_hub_store(pg_store_url, pool_size=4)
    try:
        yield store
    finally:
        store.close()
