"""The server going away and coming back, seen through a TCP relay the test can cut: a request
during the outage fails soon and says why; the first after it is served. A lock held by another
session fails a request after a while, rather than keep it waiting."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from aletheia_mem.storage.postgres import database
from aletheia_mem.storage.postgres.database import PgDatabase, StoreUnavailableError
from tests.storage.postgres.relay import Relay

# A short wait for a pooled connection (the default is 10 s), so that each test takes seconds.
WAIT_S = 1.0


@pytest.fixture
def relay(pg_store_url: str) -> Iterator[Relay]:
    parts = urlsplit(pg_store_url)
    relay = Relay((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        yield relay
    finally:
        relay.cut()


@pytest.fixture
def db(relay: Relay, pg_store_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[PgDatabase]:
    monkeypatch.setattr(database, "POOL_WAIT_S", WAIT_S, raising=False)
    parts = urlsplit(pg_store_url)
    user = f"{parts.username}@" if parts.username else ""
    url = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{relay.port}"))
    db = PgDatabase(url, pool_size=2)
    try:
        yield db
    finally:
        db.close()


def _select_one(db: PgDatabase) -> float:
    """Seconds ``SELECT 1`` took."""
    started = time.monotonic()
    with db.read() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    return time.monotonic() - started


def _failure(db: PgDatabase) -> tuple[str, float]:
    """The error of ``SELECT 1`` with the server gone, and the seconds it took."""
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught, db.read() as conn:
        conn.execute("SELECT 1")
    return caught.value.message, time.monotonic() - started


def test_a_request_while_the_server_is_down_fails_soon_saying_it_cannot_reach_it(
    db: PgDatabase, relay: Relay
) -> None:
    _select_one(db)
    relay.cut()
    first, first_took = _failure(db)
    second, second_took = _failure(db)
    assert first.startswith("Cannot reach the PostgreSQL store at postgresql://")
    assert "Connection refused" in first
    assert second == first
    assert first_took < WAIT_S + 2  # the pool's wait, then one refused connection
    assert second_took < 1  # refused at once while the server stays down


def test_the_first_request_after_a_long_outage_is_served_at_once(
    db: PgDatabase, relay: Relay
) -> None:
    _select_one(db)
    relay.cut()
    outage_ends = time.monotonic() + 4 * WAIT_S  # past the pool's retries and their backoff
    while time.monotonic() < outage_ends:  # clients go on calling, and are refused
        _failure(db)
    relay.restore()
    assert _select_one(db) < 1
    assert _select_one(db) < 1


@pytest.mark.timeout(10)
def test_a_statement_waiting_for_another_sessions_lock_fails_saying_so(
    pg_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "LOCK_WAIT_S", 0.5, raising=False)
    db = PgDatabase(pg_store_url, pool_size=1)
    try:
        with psycopg.connect(pg_store_url) as holder:
            holder.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError) as caught, db.read() as conn:
                conn.execute("SELECT count(*) FROM memories")
            took = time.monotonic() - started
        with db.read() as conn:  # the lock gone, the same connection goes on
            assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
    finally:
        db.close()
    assert caught.value.message.startswith("The PostgreSQL store at postgresql://")
    assert "lock timeout" in caught.value.message
    assert took < 3
