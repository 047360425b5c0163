"""A read-only or damaged store met by the HTTP server outside a tool call (initialize, the
session bookkeeping, ending a session): 503 with the store's one line, as a tool says it, and
one line in the server's log, never 500 with a traceback."""

from __future__ import annotations

import queue
import shutil
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories
from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.http_server import RunningServer, initialize_message, running_server
from tests.safety.test_broken_store import _garbage, _read_only
from tests.server.test_http_busy_store import age_sessions

pytestmark = pytest.mark.sqlite_only  # a SQLite file's modes and bytes
READ_ONLY = "is read-only for this user; nothing was saved."
DAMAGED = "is damaged (file is not a database)."
SERVER_ARGS = ("--port", "0", "--workers", "1")


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A store holding one note."""
    path = tmp_path / "template" / "aletheia.db"
    path.parent.mkdir()
    store = SqliteStore(path)
    try:
        item = memories.MemoryInput(text="Use pnpm, not npm", project="shop", tool="test")
        memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    return path


def drained(lines: queue.Queue[str]) -> list[str]:
    """Every line a stopped process's stderr reader still holds or reads."""
    found = []
    while True:
        try:
            found.append(lines.get(timeout=2))
        except queue.Empty:
            return found


def log_after_stop(server: RunningServer) -> list[str]:
    """Every line the server wrote on stderr once it listened, read after it stopped."""
    server.stop()
    return drained(server.stderr)


def store_error(reply: Any, status: int = 503) -> str:
    assert reply.status == status, reply.body
    message: str = reply.json()["error"]["message"]
    return message


def told_once(lines: list[str], mark: str, times: int) -> None:
    assert not any("Traceback" in line for line in lines), lines
    assert sum(mark in line for line in lines) == times, lines


@pytest.mark.parametrize("unwritable", ["file", "folder"])
def test_initialize_on_a_read_only_store_answers_503_with_its_line(
    tmp_path: Path, template: Path, unwritable: str
) -> None:
    store = tmp_path / "data" / "aletheia.db"
    store.parent.mkdir(parents=True)
    shutil.copyfile(template, store)
    with (
        _read_only(store if unwritable == "file" else store.parent),
        running_server(tmp_path, args=SERVER_ARGS) as server,
    ):
        message = store_error(server.post_mcp(initialize_message(request_id=3)))
        assert message.startswith(f"The store {store} {READ_ONLY}")
        assert server.post_mcp(initialize_message(request_id=3)).json()["id"] == 3
        lines = log_after_stop(server)
    told_once(lines, READ_ONLY, 2)


def test_a_store_damaged_under_a_running_server_is_told_in_one_line(tmp_path: Path) -> None:
    store = tmp_path / "data" / "aletheia.db"
    with running_server(tmp_path, args=SERVER_ARGS) as server:
        session = server.initialize()
        ending = server.initialize()
        age_sessions(store, 2 * 60_000)  # each session's use record is due
        _garbage(store)
        listed = server.post_mcp({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, session)
        assert DAMAGED in store_error(listed)
        ended = server.request(
            "DELETE", "/mcp", headers={"Mcp-Session-Id": ending, "Accept": "application/json"}
        )
        assert DAMAGED in store_error(ended)
        assert DAMAGED in store_error(server.post_mcp(initialize_message()))
        lines = log_after_stop(server)
    told_once(lines, DAMAGED, 3)


def test_a_session_on_a_store_made_read_only_still_reads(tmp_path: Path) -> None:
    store = tmp_path / "data" / "aletheia.db"
    with running_server(tmp_path, args=SERVER_ARGS) as server:
        session = server.initialize()
        assert server.call_tool(session, "save_memory", {"text": "Use pnpm"})["isError"] is False
        age_sessions(store, 2 * 60_000)  # its use record is due, and cannot be written
    with _read_only(store), running_server(tmp_path, args=SERVER_ARGS) as server:
        found = server.call_tool(session, "search", {"query": "pnpm"})
        assert found["isError"] is False and "Use pnpm" in found["content"][0]["text"]
        lines = log_after_stop(server)
    told_once(lines, READ_ONLY, 0)
