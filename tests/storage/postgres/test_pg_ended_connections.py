"""A pool whose idle connections the server ended (a restart, pg_terminate_backend): the next
request gives each dead one back at once and waits for the pool at most once, for a fresh
connection, where psycopg_pool's own check waited between two dead ones (1 s, 2 s, 4 s...)
and kept the request past the pool's wait. Counted with psycopg_pool's own counters."""

from __future__ import annotations

import time
from contextlib import ExitStack

import psycopg

from aletheia_mem.storage.postgres.database import PgDatabase

ENDED = 5


def test_the_next_read_gives_back_every_ended_connection_and_waits_at_most_once(
    pg_store_url: str,
) -> None:
    db = PgDatabase(pg_store_url, pool_size=ENDED + 1)
    try:
        with ExitStack() as held:  # the pool grows to hold them, then keeps them idle
            pids = [held.enter_context(db.read()).info.backend_pid for _ in range(ENDED)]
        with psycopg.connect(pg_store_url, autocommit=True) as admin:
            for pid in pids:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            gone = "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)"
            while admin.execute(gone, (pids,)).fetchone() != (0,):
                time.sleep(0.05)
        before = db._pool.get_stats()
        with db.read() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        after = db._pool.get_stats()
    finally:
        db.close()

    def grew(counter: str) -> int:
        return after.get(counter, 0) - before.get(counter, 0)

    assert grew("returns_bad") == ENDED  # each dead one given back, to be replaced
    assert grew("requests_queued") <= 1  # then one wait for a fresh connection, if any
    assert grew("requests_errors") == 0  # and no request timed out
