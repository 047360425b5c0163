"""Reads on a SQLite hub whose store's write lock is held (another process's long write, as a
push or a large import holds it): a search and a pull are answered at once, from the WAL, and
their audit rows are written once the lock is free; the rate limit still counts every request,
exactly, across the hub's processes. Before, every request's count was a write on the store:
each read waited the 2 s a request waits and answered 503."""

from __future__ import annotations

import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.hub.helpers import WAIT_SECONDS, running_hub, store_of
from tests.hub.test_hub_busy_sync import write_lock_in_another_process

pytestmark = pytest.mark.sqlite_only
# Well under the 2 s a write waits before the busy line, with room for a slow machine.
READ_SECONDS = 1.5


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def _audit_rows(db: Path) -> list[tuple[object, ...]]:
    return _rows(db, "SELECT actor, tool, result FROM audit WHERE tool <> 'sync-claim' ORDER BY id")


def _until(check: object, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)


def test_reads_are_answered_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db) as hub:  # the default rate limit: every request is counted
        token = hub.token("sync", ("shop",), "reader")
        session = hub.initialize(token)
        store_id = store_of(token)
        assert hub.post("/sync/hello", {"store_id": store_id}, token).status == 200
        with write_lock_in_another_process(db):
            started = time.monotonic()
            text, is_error = hub.call_tool(token, session, "search", query="vpn", project="shop")
            searched = time.monotonic() - started
            started = time.monotonic()
            pulled = hub.post("/sync/pull", {"store_id": store_id, "cursor": 0}, token)
            pull_seconds = time.monotonic() - started
            assert not is_error, text
            assert (pulled.status, pulled.body["records"]) == (200, []), pulled.body
            assert searched < READ_SECONDS and pull_seconds < READ_SECONDS
            assert ("reader", "search", "ok") not in _audit_rows(db)  # queued meanwhile
        _until(lambda: len(_audit_rows(db)) == 2)
        assert _audit_rows(db) == [
            ("reader", "search", "ok"),
            ("reader", "sync-pull", "ok"),
        ]


def test_rows_still_queued_are_written_when_the_hub_stops(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db) as hub:
        token = hub.token("sync", ("shop",), "reader")
        session = hub.initialize(token)
        with write_lock_in_another_process(db):
            assert not hub.call_tool(token, session, "search", query="vpn", project="shop")[1]
            hub.process.send_signal(signal.SIGTERM)
            time.sleep(0.5)  # the hub is stopping, its row queued behind the lock
        assert hub.process.wait(timeout=WAIT_SECONDS * 3) == 0
    assert _audit_rows(db) == [("reader", "search", "ok")]


def test_the_rate_limit_stays_exact_across_two_hub_processes(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with (
        running_hub(db, "--rate-limit", "6") as first,
        running_hub(db, "--rate-limit", "6") as second,
    ):
        token = first.token("sync", ("shop",), "counted")
        body = {"store_id": store_of(token), "cursor": 0}
        statuses = [
            hub.post("/sync/pull", body, token).status
            for hub in (first, second, first, second, first, second, first, second)
        ]
        assert statuses == [200] * 6 + [429, 429]
        assert (db.parent / "hub.db-rate").stat().st_mode & 0o777 == 0o600
