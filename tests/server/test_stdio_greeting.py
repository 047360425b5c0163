"""The stdio server answers a first ``initialize`` before it loads the tools and the store: the
same reply, and the same session state, as the dispatcher gives that message."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest

from aletheia_mem.server.mcp import McpSession, handle_payload, initialize
from aletheia_mem.server.stdio import greet
from aletheia_mem.server.stdio_session import serve
from aletheia_mem.tools.app import AppContext


def _initialize(params: Any = None, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize", **fields}
    if params is not None:
        message["params"] = params
    return message


FIRST_LINES: list[Any] = [
    _initialize({"protocolVersion": "2025-06-18", "clientInfo": {"name": " Claude\n Code "}}),
    _initialize({"protocolVersion": "2099-01-01", "capabilities": {}}),
    _initialize({"protocolVersion": ["2025-06-18"], "clientInfo": {"name": 7}}),
    _initialize({"clientInfo": "cursor"}),
    _initialize(),
    _initialize({"protocolVersion": "2024-11-05"}, id="init-1"),
    _initialize(id=True),
    _initialize(id=None),
    _initialize(id=1.5),
    _initialize([1, 2]),
    _initialize({}, jsonrpc="1.0"),
    {"id": 1, "method": "initialize"},
    [_initialize({"protocolVersion": "2025-06-18"})],
    {"jsonrpc": "2.0", "method": "initialize"},
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    _initialize({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
]


@pytest.mark.parametrize("first", FIRST_LINES)
def test_the_first_line_gets_the_dispatchers_reply_and_leaves_its_session(
    app: AppContext, first: Any
) -> None:
    line = json.dumps(first).encode() + b"\n"
    then = b'{"jsonrpc":"2.0","id":9,"method":"tools/list"}\n'
    expected = McpSession(app=app, fixed_caller="bench")
    expected_replies = [handle_payload(expected, first), handle_payload(expected, {"x": 1})]

    writer = io.BytesIO()
    reader = io.BytesIO(b"\n  \n" + line + then)
    pending, greeted = greet(reader, writer)
    session = McpSession(app=app, fixed_caller="bench")
    if greeted is not None:
        initialize(session, greeted)
        assert pending == b""
    else:
        assert pending == line
        assert writer.getvalue() == b""
    serve(session, io.BytesIO(pending + b'{"x":1}\n'), writer)
    replies = [json.loads(out) for out in writer.getvalue().splitlines()]
    assert replies == [reply for reply in expected_replies if reply is not None]
    assert session == expected
    assert reader.read() == then  # the rest is left for the loop


def test_end_of_input_before_any_line_answers_nothing() -> None:
    writer = io.BytesIO()
    assert greet(io.BytesIO(b"\n\n"), writer) == (b"", None)
    assert writer.getvalue() == b""


def test_the_greeting_needs_neither_the_tools_nor_the_store() -> None:
    probe = (
        "import io, sys\n"
        "from aletheia_mem.server.stdio import greet\n"
        'line = b\'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\\n\'\n'
        "greet(io.BytesIO(line), io.BytesIO())\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('aletheia_mem'))))\n"
        "print(' '.join(m for m in ('typing', 'logging', 'dataclasses', 'sqlite3', 'pathlib')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    ours, stdlib = result.stdout.split("\n")[:2]
    assert ours.split() == [
        "aletheia_mem",
        "aletheia_mem.json_objects",
        "aletheia_mem.printable",
        "aletheia_mem.server",
        "aletheia_mem.server.handshake",
        "aletheia_mem.server.stdio",
    ]
    assert stdlib == ""
