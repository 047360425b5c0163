"""A JSON-RPC message that gives a key twice (``"text": "a", "text": "b"`` in a tool's
arguments, two ``id``) is refused with a JSON-RPC error, over HTTP and stdio, where the last
value silently won while a proxy or a log that reads the first saw another call; /api/ and
/sync/ refuse such a body too. Ordinary messages are answered as before."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.http_server import RunningServer, initialize_message, running_server
from tests.hub.helpers import running_hub
from tests.stores import rows_at

pytestmark = pytest.mark.e2e

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SAVE_TWICE = (
    '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "save_memory",'
    ' "arguments": {"text": "first words", "text": "second words"}}}'
)
TEXT_TWICE = 'Invalid params: an object gives "text" twice.'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("mcp-repeated")) as running:
        yield running


def _saved(server: RunningServer) -> list[str]:
    found = server.api("GET", "/api/memories?query=words&project=*").json()["memories"]
    return [memory["text"] for memory in found]


def test_a_tool_call_whose_arguments_give_a_key_twice_runs_nothing(
    server: RunningServer,
) -> None:
    session = server.initialize()
    reply = server.post_mcp(SAVE_TWICE, session).json()
    assert reply == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": TEXT_TWICE}}
    nested = SAVE_TWICE.replace('"text": "first words", "text": "second words"', '"text": "x"')
    nested = nested.replace(
        '"name": "save_memory",', '"name": "save_memory", "_meta": {"k": 1, "k": 2},'
    )
    refused = server.post_mcp(nested, session).json()["error"]
    assert refused == {"code": -32602, "message": 'Invalid params: an object gives "k" twice.'}
    assert _saved(server) == []
    secret = SAVE_TWICE.replace('"text"', json.dumps(SECRET))
    told = server.post_mcp(secret, session).json()["error"]["message"]
    assert told == 'Invalid params: an object gives "[REDACTED]" twice.'
    # Given once, the same call saves, as before.
    once = server.call_tool(session, "save_memory", {"text": "second words"})
    assert once["isError"] is False and _saved(server) == ["second words"]


def test_an_envelope_that_gives_a_key_twice_is_an_invalid_request(server: RunningServer) -> None:
    session = server.initialize()
    two_ids = '{"jsonrpc": "2.0", "id": 6, "id": 7, "method": "ping"}'
    assert server.post_mcp(two_ids, session).json() == {
        "jsonrpc": "2.0",
        "id": None,  # which one would a client wait for?
        "error": {"code": -32600, "message": 'Invalid request: the message gives "id" twice.'},
    }
    two_methods = '{"jsonrpc": "2.0", "id": 8, "method": "ping", "method": "tools/list"}'
    assert server.post_mcp(two_methods, session).json()["error"] == {
        "code": -32600,
        "message": 'Invalid request: the message gives "method" twice.',
    }
    # In a batch, only the message that gives a key twice is refused.
    batch = f'[{SAVE_TWICE}, {{"jsonrpc": "2.0", "id": 9, "method": "ping"}}]'
    answers = server.post_mcp(batch, session).json()
    assert answers == [
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": TEXT_TWICE}},
        {"jsonrpc": "2.0", "id": 9, "result": {}},
    ]
    first = json.dumps(initialize_message()).replace(
        '"capabilities"', '"x": 1, "x": 2, "capabilities"'
    )
    refused = server.post_mcp(first)
    assert refused.header("mcp-session-id") is None
    assert refused.json()["error"]["code"] == -32602


def test_a_response_that_gives_a_key_twice_is_answered_by_nothing(server: RunningServer) -> None:
    """JSON-RPC answers no response, and a POST of responses only gets 202."""
    session = server.initialize()
    for response in (
        '{"jsonrpc": "2.0", "id": 10, "result": {"a": 1, "a": 2}}',
        '{"jsonrpc": "2.0", "id": 10, "error": {"code": 1, "message": "m", "data": {"x": 1,'
        ' "x": 2}}}',
    ):
        for body in (response, f"[{response}]"):
            reply = server.post_mcp(body, session)
            assert (reply.status, reply.body) == (202, b"")


def test_a_repeated_key_inside_the_id_is_an_invalid_request(server: RunningServer) -> None:
    session = server.initialize()
    message = '{"jsonrpc": "2.0", "id": {"a": 1, "a": 2}, "method": "ping"}'
    assert server.post_mcp(message, session).json()["error"] == {
        "code": -32600,
        "message": 'Invalid request: the message gives "a" twice.',
    }


def test_a_transport_refusal_names_no_id_given_twice(server: RunningServer) -> None:
    """Refused before it is handled (no session here), the request is answered with id null,
    as once handled: the last id to this server may be the first's to a proxy."""
    reply = server.post_mcp('{"jsonrpc": "2.0", "id": "first", "id": "second", "method": "ping"}')
    assert reply.status == 400 and reply.json()["id"] is None


def _stdio_replies(tmp_path: Path, lines: list[str]) -> list[Any]:
    """The replies of a real ``aletheia-mcp`` (this checkout's code) to ``lines``."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem.server.stdio"],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_stdio_refuses_a_repeated_key_from_the_first_line_on(tmp_path: Path) -> None:
    """The first line, answered before the store opens when it is a plain initialize, is
    refused like any other when it gives a key twice; the next initialize is answered."""
    initialize = json.dumps(initialize_message(request_id=1))
    doubled = initialize.replace('"capabilities"', '"capabilities": {}, "capabilities"')
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    replies = _stdio_replies(tmp_path, [doubled, initialize, initialized, SAVE_TWICE])
    assert replies[0] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32602,
            "message": 'Invalid params: an object gives "capabilities" twice.',
        },
    }
    assert replies[1]["result"]["serverInfo"]["name"] == "aletheia"
    assert replies[2] == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32602, "message": TEXT_TWICE},
    }


def test_the_hub_refuses_it_and_audits_the_call_as_an_error(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("sync", None, "laptop")
        session = hub.initialize(token)
        parts = urlsplit(hub.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            "Mcp-Session-Id": session,
        }
        try:
            conn.request("POST", "/mcp", SAVE_TWICE, headers)
            reply = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        assert reply["error"] == {"code": -32602, "message": TEXT_TWICE}
        sql = "SELECT tool, project, result FROM audit WHERE actor = ? AND tool = ?"
        assert rows_at(hub.db, sql, "laptop", "save_memory") == [("save_memory", None, "error")]
        assert rows_at(hub.db, "SELECT count(*) FROM memories") == [(0,)]
        # A tool named twice is audited by neither name: each reader saw another call.
        named_twice = SAVE_TWICE.replace('"name": "save_memory"', '"name": "search", "name": "x"')
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        try:
            conn.request("POST", "/mcp", named_twice, headers)
            assert json.loads(conn.getresponse().read())["error"]["code"] == -32602
        finally:
            conn.close()
        sql = "SELECT tool FROM audit WHERE actor = ? AND tool IN ('search', 'x')"
        assert rows_at(hub.db, sql, "laptop") == []
