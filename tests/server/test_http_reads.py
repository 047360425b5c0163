"""Reads over HTTP are answered on the event loop: they never wait for a write, and a session
that only reads still has its use recorded and still expires.

The app runs under a real uvicorn on 127.0.0.1 in a thread of the test, so that its clock is the
test's clock.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext
from tests.conftest import FakeClock
from tests.e2e.http_server import MCP_HEADERS, initialize_message
from tests.server.in_process import served_app
from tests.server.test_http_sessions import MINUTE_MS, last_used

IDLE_MS = 10 * MINUTE_MS


class Client:
    """POSTs to /mcp of a server on this port, one connection each."""

    def __init__(self, port: int) -> None:
        self.port = port

    def post(self, message: Any, session: str | None = None) -> tuple[int, dict[str, str], Any]:
        headers = dict(MCP_HEADERS)
        if session is not None:
            headers["Mcp-Session-Id"] = session
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("POST", "/mcp", json.dumps(message), headers)
            response = conn.getresponse()
            body = response.read()
            found = {name.lower(): value for name, value in response.getheaders()}
            return response.status, found, json.loads(body) if body else None
        finally:
            conn.close()


@pytest.fixture
def client(store: SqliteStore, clock: FakeClock) -> Iterator[Client]:
    app = AppContext(store=store, clock=clock, default_project="shop", caller="pytest")
    sessions = SessionStore(store.sessions(), clock, idle_ms=IDLE_MS)
    with served_app(app, sessions) as port:
        yield Client(port)


def begin(client: Client) -> str:
    status, headers, body = client.post(initialize_message())
    assert status == 200, body
    return headers["mcp-session-id"]


def post(client: Client, session: str, method: str, **params: Any) -> tuple[int, Any]:
    """(status, answer) of one request in a session."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    status, _, body = client.post(message, session)
    return status, body


def search_text(client: Client, session: str, query: str) -> str:
    status, body = post(client, session, "tools/call", name="search", arguments={"query": query})
    assert status == 200, body
    text: str = body["result"]["content"][0]["text"]
    return text


# About SQLite's one write lock (a PostgreSQL read never waits for a writer).
@pytest.mark.sqlite_only
def test_reads_are_answered_while_another_process_holds_the_write_lock(
    client: Client, store: SqliteStore
) -> None:
    session = begin(client)
    _, saved = post(client, session, "tools/call", name="save_memory", arguments={"text": "pnpm"})
    assert saved["result"]["isError"] is False
    with closing(sqlite3.connect(store.path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        found = search_text(client, session, "pnpm")
        assert post(client, session, "ping") == (200, {"jsonrpc": "2.0", "id": 1, "result": {}})
        assert time.monotonic() - started < 5  # the busy timeout is 30 s
        writer.execute("ROLLBACK")
    assert "#1 " in found


def test_a_session_that_only_reads_has_its_use_recorded_and_expires(
    client: Client, store: SqliteStore, clock: FakeClock
) -> None:
    session = begin(client)
    begun = clock.now
    clock.advance(MINUTE_MS // 2)
    assert post(client, session, "ping")[0] == 200
    assert last_used(store) == [begun]  # recorded once a minute at most
    clock.advance(MINUTE_MS)
    assert post(client, session, "tools/list")[0] == 200
    assert last_used(store) == [clock.now]
    clock.advance(IDLE_MS + 1)
    status, body = post(client, session, "tools/call", name="search", arguments={"query": "x"})
    assert status == 404, body
    assert last_used(store) == []


@pytest.mark.sqlite_only
def test_the_json_api_says_when_to_try_again_while_another_process_keeps_the_store_busy(
    client: Client, store: SqliteStore
) -> None:
    store.set_busy_timeout(50)  # a save waits 30 s by default
    with closing(sqlite3.connect(store.path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # a large import, in another process
        conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=10)
        body = json.dumps({"text": "saved while the store is busy"})
        conn.request("POST", "/api/memories", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        answer = json.loads(response.read())
        conn.close()
        writer.execute("ROLLBACK")
    assert (response.status, response.getheader("Retry-After")) == (503, "5")
    assert answer["error"]["code"] == "store_unavailable"
    assert "is busy" in answer["error"]["message"]
    assert store.count_memories(None) == 0
