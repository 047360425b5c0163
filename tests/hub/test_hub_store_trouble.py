"""A SQLite hub whose store's disk fills, or whose store is damaged, while it runs: its
``/sync/`` endpoints answer the store-full line (507, as its tools and its MCP initialize do)
or 503, with one line in its log, never 500 with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.errors import StoreFullError
from aletheia_mem.hub.sync_api import HUB_STORE
from aletheia_mem.server.api import UNAVAILABLE
from tests.hub.helpers import Hub, running_hub, store_of
from tests.hub.test_hostile_sync import memory_record
from tests.safety.test_broken_store import _garbage
from tests.safety.test_broken_store_http import drained
from tests.safety.test_full_disk import fill, small_disk

pytestmark = pytest.mark.sqlite_only  # a SQLite file on a disk of its own
HUB_FULL = StoreFullError(HUB_STORE).message


def log_of(hub: Hub) -> list[str]:
    """What the hub wrote on stderr since it listened, read once it stopped."""
    hub.process.terminate()
    hub.process.wait(timeout=30)
    return drained(hub.log)


def test_sync_requests_on_a_full_disk_answer_the_store_full_line(tmp_path: Path) -> None:
    with small_disk(tmp_path / "mnt", "3m") as disk, running_hub(disk / "hub.db") as hub:
        token = hub.token("sync", None, "laptop")
        store_id = store_of(token)
        assert hub.post("/sync/hello", {"store_id": store_id}, token).status == 200
        fill(disk)
        requests = {
            "/sync/push": {"store_id": store_id, "records": [memory_record(v=[1, store_id])]},
            "/sync/hello": {"store_id": "f" * 32},  # a new store: its claim is a write
        }
        for path, body in requests.items():
            reply = hub.post(path, body, token)
            assert (reply.status, reply.headers.get("retry-after")) == (507, "5"), reply.body
            assert reply.body == {"error": {"code": "store_full", "message": HUB_FULL}}, path
        assert str(disk) not in HUB_FULL
        lines = log_of(hub)
    assert not any("Traceback" in line for line in lines), lines
    assert sum("is full (no space left)" in line for line in lines) == len(requests), lines


def test_sync_requests_on_a_damaged_store_answer_503_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db) as hub:
        token = hub.token("sync", None, "laptop")
        assert hub.post("/sync/hello", {"store_id": store_of(token)}, token).status == 200
        _garbage(db)
        store_id = store_of(token)
        requests = (
            ("/sync/pull", {"store_id": store_id, "cursor": 0}),
            ("/sync/push", {"store_id": store_id, "records": [memory_record(v=[1, store_id])]}),
        )
        for path, body in requests:
            reply = hub.post(path, body, token)
            assert reply.status == 503, (path, reply.body)
            assert reply.body["error"]["message"] == UNAVAILABLE
        lines = log_of(hub)
    assert not any("Traceback" in line for line in lines), lines
    assert sum("is damaged" in line for line in lines) == 2, lines
