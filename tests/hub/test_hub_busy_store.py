"""A real SQLite hub while another process holds its store's write lock: a new MCP session is
refused within seconds with the busy line (not "cannot be reached", nor the file's path)."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.hub.sync_api import HUB_BUSY
from tests.hub.helpers import INIT_PARAMS, running_hub

pytestmark = pytest.mark.sqlite_only


def test_initialize_on_a_busy_hub_store_says_it_is_busy(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db, "--rate-limit", "0") as hub:
        token = hub.token("read", None, "laptop")
        hub.initialize(token)  # the store and its tables exist
        with closing(sqlite3.connect(db, isolation_level=None)) as writer:
            writer.execute("BEGIN IMMEDIATE")  # a long write of another process
            started = time.monotonic()
            message = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": INIT_PARAMS}
            reply = hub.post("/mcp", message, token)
            elapsed = time.monotonic() - started
            writer.execute("ROLLBACK")
        assert elapsed < 8, elapsed  # not the 30 s a write waits
        assert (reply.status, reply.headers.get("retry-after")) == (503, "5")
        assert reply.body["error"]["message"] == HUB_BUSY
        assert HUB_BUSY.startswith("The store of the hub is busy: ")
        assert str(db) not in HUB_BUSY
        assert hub.initialize(token)
