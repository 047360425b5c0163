"""The PostgreSQL store's memory and fact parts, on a fresh schema per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories


@pytest.fixture
def pg_db(pg_url: str) -> Iterator[PgDatabase]:
    db = PgDatabase(pg_url)
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
