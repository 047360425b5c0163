"""A real SQLite hub while another process holds its store's write lock: each sync request that
writes answers 503 with ``Retry-After`` and the busy line within seconds (not after the 30 s a
tool's write waits), writes nothing of the page, and ``aletheia sync`` stops with one line and
exit 1; a pull, which only reads, is answered."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from aletheia_mem.hub.sync_api import HUB_BUSY
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub, store_of
from tests.hub.test_hostile_sync import memory_record
from tests.hub.test_sync_e2e import run_sync, save_notes

pytestmark = pytest.mark.sqlite_only
# A bound well under the 30 s a write waits, with room for a slow machine: the hub waits 2 s.
ANSWER_SECONDS = 10

_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


@contextmanager
def write_lock_in_another_process(db: Path) -> Iterator[None]:
    """Another process holding the store's write lock (a long import's transaction)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(timeout=WAIT_SECONDS)
        if holder.stdout is not None:
            holder.stdout.close()


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    with running_hub(tmp_path / "hub.db") as started:  # the default rate limit: a write a call
        yield started


def test_each_sync_request_on_a_busy_hub_store_answers_the_busy_line_soon(
    hub: Hub, tmp_path: Path
) -> None:
    db = tmp_path / "hub.db"
    token = hub.token("sync", None, "laptop")
    store_id = store_of(token)
    assert hub.post("/sync/hello", {"store_id": store_id}, token).status == 200
    requests = {
        "/sync/push": {"store_id": store_id, "records": [memory_record(v=[1, store_id])]},
        "/sync/hello": {"store_id": "f" * 32},  # a new store: its claim is a write
    }
    with write_lock_in_another_process(db):
        for path, body in requests.items():
            started = time.monotonic()
            reply = hub.post(path, body, token)
            elapsed = time.monotonic() - started
            assert elapsed < ANSWER_SECONDS, (path, elapsed)
            assert (reply.status, reply.headers.get("retry-after")) == (503, "5"), path
            assert reply.body == {"error": {"code": "unavailable", "message": HUB_BUSY}}, path
        # A pull only reads: answered from the WAL, its audit row written once the lock is free
        pulled = hub.post("/sync/pull", {"store_id": store_id, "cursor": 0}, token)
        assert (pulled.status, pulled.body["records"]) == (200, []), pulled.body
    assert _rows(db, "SELECT count(*) FROM memories") == [(0,)]  # nothing of the page
    claimed = ("sync-claim", "ok", f"store {store_id}")  # the first hello's, before the lock
    pull_row = ("sync-pull", "ok", "0 records")
    deadline = time.monotonic() + ANSWER_SECONDS
    while len(_rows(db, "SELECT id FROM audit")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _rows(db, "SELECT tool, result, detail FROM audit") == [claimed, pull_row]
    pushed = hub.post("/sync/push", requests["/sync/push"], token)
    assert (pushed.status, pushed.body.get("applied")) == (200, 1), pushed.body
    assert _rows(db, "SELECT tool, result, detail FROM audit ORDER BY id") == [
        claimed,
        pull_row,
        ("sync-push", "ok", "1 records"),  # with the page, in its transaction
    ]


def test_aletheia_sync_against_a_busy_hub_store_stops_with_one_line(
    hub: Hub, tmp_path: Path
) -> None:
    db, laptop = tmp_path / "hub.db", tmp_path / "laptop"
    token = hub.token("sync", None, "laptop")
    save_notes(laptop, ["Deploys need the VPN"])
    first = run_sync(laptop, "--hub", hub.url, "--token", token)
    assert first.returncode == 0, first.stderr
    save_notes(laptop, ["Staging needs the VPN too"])
    with write_lock_in_another_process(db):
        started = time.monotonic()
        done = run_sync(laptop)
        elapsed = time.monotonic() - started
    assert elapsed < ANSWER_SECONDS, elapsed
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"Error: The hub at {hub.url} cannot sync now (503): {HUB_BUSY} Pages synced before"
        " stay synced; the next sync goes on from there.\n"
    )
    assert _rows(db, "SELECT text FROM memories") == [("Deploys need the VPN",)]
    again = run_sync(laptop)
    assert again.returncode == 0, again.stderr
    assert "pushed 1 item(s)" in again.stdout
    texts = {row[0] for row in _rows(db, "SELECT text FROM memories")}
    assert texts == {"Deploys need the VPN", "Staging needs the VPN too"}
