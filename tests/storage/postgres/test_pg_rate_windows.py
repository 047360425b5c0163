"""Rate windows on PostgreSQL: one sliding window per key, exact across processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from aletheia_mem.storage.postgres import rate_windows
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store

MINUTE = 60_000


def test_hits_pass_until_the_limit_then_the_wait_is_until_the_oldest_leaves(
    pg_store: PostgresStore,
) -> None:
    windows = pg_store.rate_windows()
    assert windows.hit("t1", 1, 3, MINUTE, now_ms=1_000) is None
    assert windows.hit("t1", 1, 3, MINUTE, now_ms=2_000) is None
    assert windows.hit("t1", 1, 3, MINUTE, now_ms=3_000) is None
    assert windows.hit("t1", 1, 3, MINUTE, now_ms=4_000) == 57_000
    assert windows.hit("t1", 1, 3, MINUTE, now_ms=61_000) is None  # the first hit has left


def test_a_refused_hit_is_not_counted(pg_store: PostgresStore) -> None:
    windows = pg_store.rate_windows()
    assert windows.hit("t1", 2, 2, MINUTE, now_ms=0) is None
    for _ in range(5):
        assert windows.hit("t1", 1, 2, MINUTE, now_ms=10) == MINUTE - 10
    assert windows.hit("t1", 2, 2, MINUTE, now_ms=MINUTE) is None


def test_a_batch_passes_whole_or_waits_for_enough_room(pg_store: PostgresStore) -> None:
    windows = pg_store.rate_windows()
    assert windows.hit("t1", 2, 5, MINUTE, now_ms=0) is None
    assert windows.hit("t1", 2, 5, MINUTE, now_ms=10_000) is None
    # 4 held, 3 asked: 2 must leave, and they leave together with the first batch.
    assert windows.hit("t1", 3, 5, MINUTE, now_ms=20_000) == 40_000
    assert windows.hit("t1", 1, 5, MINUTE, now_ms=20_000) is None
    # 5 held, 4 asked: 4 must leave, which is when the second batch leaves.
    assert windows.hit("t1", 4, 5, MINUTE, now_ms=30_000) == 40_000


def test_a_batch_over_the_limit_waits_the_whole_window(pg_store: PostgresStore) -> None:
    assert pg_store.rate_windows().hit("t1", 4, 3, MINUTE, now_ms=0) == MINUTE
    assert pg_store.rate_windows().hit("t1", 1, 0, MINUTE, now_ms=0) == MINUTE


def test_keys_have_windows_of_their_own(pg_store: PostgresStore) -> None:
    windows = pg_store.rate_windows()
    assert windows.hit("a", 1, 1, MINUTE, now_ms=0) is None
    assert windows.hit("b", 1, 1, MINUTE, now_ms=0) is None
    assert windows.hit("a", 1, 1, MINUTE, now_ms=1) is not None


def test_every_so_many_hits_the_expired_hits_of_idle_keys_go(
    pg_store: PostgresStore, pg_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rate_windows, "SWEEP_EVERY", 4)
    windows = pg_store.rate_windows()
    for key in ("idle-1", "idle-2", "live"):
        windows.hit(key, 1, 10, 1_000, now_ms=0)
    with psycopg.connect(pg_store_url) as conn:
        assert conn.execute("SELECT count(*) FROM rate_hits").fetchone() == (3,)
        windows.hit("live", 1, 10, 1_000, now_ms=5_000)  # the 4th hit
        rows = conn.execute("SELECT key FROM rate_hits").fetchall()
    assert rows == [("live",)]


def test_threads_of_two_stores_hammering_one_key_pass_exactly_the_limit(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    other = open_postgres_store(pg_store_url, pool_size=4)
    try:
        stores = [pg_store.rate_windows(), other.rate_windows()]

        def hammer(worker: int) -> int:
            windows = stores[worker % 2]
            return sum(windows.hit("k", 1, 60, MINUTE, now_ms=1_000) is None for _ in range(25))

        with ThreadPoolExecutor(max_workers=8) as pool:
            passed = sum(pool.map(hammer, range(8)))
    finally:
        other.close()
    assert passed == 60


_HAMMER = textwrap.dedent(
    """
    import sys
    from aletheia_mem.storage.postgres.store import open_postgres_store
    store = open_postgres_store(sys.argv[1], pool_size=1)
    windows = store.rate_windows()
    print(sum(windows.hit("k", 2, 60, 60_000, now_ms=1_000) is None for _ in range(20)))
    store.close()
    """
)


def test_processes_hammering_one_key_in_batches_pass_exactly_the_limit(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _HAMMER, pg_store_url], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    try:
        passed = [int(worker.communicate(timeout=30)[0]) for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    assert sum(passed) * 2 == 60
