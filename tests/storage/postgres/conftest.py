"""A real PostgreSQL store per test: a fresh schema, opened through the production path."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:
    store = open_postgres_store(pg_url, pool_size=4)
    try:
        yield store
    finally:
        store.close()
