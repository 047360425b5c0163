"""The PostgreSQL store and its parts, on a migrated schema emptied for each test (tests/pg.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


@pytest.fixture
def pg_store(pg_store_url: str) -> Iterator[PostgresStore]:
    store = open_postgres_store(pg_store_url, pool_size=4)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def pg_db(pg_store_url: str) -> Iterator[PgDatabase]:
    db = PgDatabase(pg_store_url)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def pg_memories(pg_db: PgDatabase) -> PgMemories:
    return PgMemories(pg_db)


@pytest.fixture
def pg_facts(pg_db: PgDatabase) -> PgFacts:
    return PgFacts(pg_db)
