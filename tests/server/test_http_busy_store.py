"""A real ``aletheia-server`` while another process holds its SQLite store's write lock: reads
and the session bookkeeping never wait 30 s for it, and what must write says the store is busy."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from tests.e2e.http_server import RunningServer, initialize_message, running_server

pytestmark = pytest.mark.sqlite_only
BUSY_LINE = "is busy: another process kept it for longer than this one waits"


@contextmanager
def write_lock(path: Path) -> Iterator[None]:
    """The store's write lock held by another connection (as another process would)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            writer.execute("ROLLBACK")


def age_sessions(path: Path, ms: int) -> None:
    """Every session last used ``ms`` earlier: its once-a-minute use record is due."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("UPDATE mcp_sessions SET last_used_at = last_used_at - ?", (ms,))


def last_used(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT last_used_at FROM mcp_sessions")]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as started:
        yield started


def test_a_session_due_for_its_use_record_reads_at_once_while_the_store_is_busy(
    server: RunningServer, tmp_path: Path
) -> None:
    store = tmp_path / "data" / "aletheia.db"
    session = server.initialize()
    saved = server.call_tool(session, "save_memory", {"text": "Use pnpm, not npm"})
    assert saved["isError"] is False
    age_sessions(store, 2 * 60_000)
    before = last_used(store)
    with write_lock(store):
        started = time.monotonic()
        found = server.call_tool(session, "search", {"query": "pnpm"})
        again = server.call_tool(session, "search", {"query": "pnpm"}, request_id=2)
        elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed  # a write waits 30 s
    assert found["isError"] is False and "pnpm" in found["content"][0]["text"]
    assert again["isError"] is False
    assert last_used(store) == before  # not recorded while busy...
    assert server.call_tool(session, "search", {"query": "pnpm"}, request_id=3)["isError"] is False
    assert last_used(store)[0] > before[0]  # ...but at the next request once it is free


def test_initialize_on_a_busy_store_answers_the_busy_line_soon(
    server: RunningServer, tmp_path: Path
) -> None:
    store = tmp_path / "data" / "aletheia.db"
    server.initialize()  # the store and its sessions table exist
    with write_lock(store):
        started = time.monotonic()
        reply = server.post_mcp(initialize_message(request_id=7))
        elapsed = time.monotonic() - started
    assert elapsed < 10, elapsed
    assert (reply.status, reply.header("retry-after")) == (503, "5")
    error = reply.json()["error"]
    assert reply.json()["id"] == 7
    assert f"The store {store} {BUSY_LINE}" in error["message"]
    assert server.initialize()  # free again: a session begins
