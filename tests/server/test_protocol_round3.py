"""Protocol audit, round 3: what real ``aletheia-server`` and ``aletheia-sync`` processes answer on
``/mcp`` when the store under them fails (DESIGN.md section 10: the answer is always JSON)."""

from __future__ import annotations

import http.client
import json
import queue
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from aletheia_mem.server.api import UNAVAILABLE
from tests.e2e.http_server import Reply, RunningServer, initialize_message, running_server
from tests.hub.helpers import Hub, running_hub

pytestmark = pytest.mark.e2e

INTERNAL_ERROR = -32603
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def lose_the_session_table(db: Path) -> None:
    """Make every session read and write fail, as a damaged or vanished table would."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("ALTER TABLE mcp_sessions RENAME TO mcp_sessions_gone")
        conn.commit()


@pytest.fixture
def broken_server(tmp_path: Path) -> Iterator[RunningServer]:
    with running_server(tmp_path, args=("--port", "0", "--workers", "1")) as server:
        lose_the_session_table(tmp_path / "data" / "aletheia.db")
        yield server


# A lost table is a damaged store: told in its line (a hub names no file: that it cannot be
# reached), 503 as for any store that cannot serve, never 500.
DAMAGED = "is damaged (no such table: mcp_sessions)."


def assert_internal_error(reply: Reply, request_id: Any, told: str = DAMAGED) -> None:
    assert reply.status == 503, reply.body
    assert reply.header("content-type") == "application/json", reply.body
    error = reply.json()
    assert error["jsonrpc"] == "2.0"
    assert error["id"] == request_id
    assert error["error"]["code"] == INTERNAL_ERROR
    assert "Traceback" not in error["error"]["message"]
    assert told in error["error"]["message"]


def test_a_store_failure_at_initialize_is_a_json_rpc_internal_error(
    broken_server: RunningServer,
) -> None:
    reply = broken_server.post_mcp(initialize_message(7))
    assert_internal_error(reply, 7)
    assert reply.header("mcp-session-id") is None


def test_a_store_failure_in_a_session_request_is_a_json_rpc_internal_error(
    broken_server: RunningServer,
) -> None:
    ping = {"jsonrpc": "2.0", "id": "p-1", "method": "ping"}
    assert_internal_error(broken_server.post_mcp(ping, "0" * 32), "p-1")
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "save_memory", "arguments": {"text": "kept?"}},
    }
    assert_internal_error(broken_server.post_mcp(call, "0" * 32), 3)


def test_a_store_failure_when_ending_a_session_is_a_json_rpc_internal_error(
    broken_server: RunningServer,
) -> None:
    reply = broken_server.request("DELETE", "/mcp", headers={"Mcp-Session-Id": "0" * 32})
    assert_internal_error(reply, None)


def test_the_server_goes_on_answering_after_a_store_failure(
    broken_server: RunningServer,
) -> None:
    assert broken_server.post_mcp(initialize_message(1)).status == 503
    assert broken_server.process.poll() is None
    assert broken_server.request("GET", "/mcp").status == 405
    assert _stderr_line(broken_server, "MCP request failed")


def _stderr_line(server: RunningServer, text: str) -> str:
    """The server's first stderr line holding ``text``, waited for: a worker may write its log
    line after the reply has reached the client, and a reader thread passes it on."""
    for line in server.lines:
        if text in line:
            return line
    while True:
        try:
            line = server.stderr.get(timeout=30)
        except queue.Empty:
            raise AssertionError(f"no stderr line holds {text!r}") from None
        if text in line:
            return line


def test_the_hub_answers_a_store_failure_with_a_json_rpc_internal_error(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db, "--rate-limit", "0") as hub:
        token = hub.token("sync", ("shop",), "round3")
        lose_the_session_table(db)
        reply = _post(hub, initialize_message(5), token)
    assert_internal_error(reply, 5, UNAVAILABLE)


def _post(hub: Hub, payload: dict[str, Any], token: str) -> Reply:
    url = urlsplit(hub.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        conn.request("POST", "/mcp", json.dumps(payload), headers)
        response = conn.getresponse()
        headers_seen = {name.lower(): value for name, value in response.getheaders()}
        return Reply(response.status, headers_seen, response.read())
    finally:
        conn.close()
