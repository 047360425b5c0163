"""An error that repeats a name the client gave shows its control and format characters (bidi
overrides, zero-width spaces, line separators) as escapes, so that the line a log or a terminal
shows reads as sent; printable text, ``é`` and ``中`` included, stays as typed. Over stdio with
a real ``aletheia-mcp`` and a real ``aletheia-server`` (a hub token's project refusal:
tests/hub/test_official_client.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e import http_server
from tests.e2e.test_stdio import running_server, server_env, text_of, tools_call

pytestmark = [pytest.mark.e2e]
TAG = "<img src=x onerror=alert(1)>"


def test_stdio_errors_show_a_given_name_s_invisible_characters_as_escapes(tmp_path: Path) -> None:
    env = server_env(tmp_path, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    with running_server(env, tmp_path) as server:
        server.initialize()
        unknown = server.ask(tools_call(2, TAG + "\u202e", {}))
        assert unknown["error"] == {"code": -32602, "message": f"Unknown tool: {TAG}\\u202e"}
        spelt = server.ask(tools_call(3, "outil_é中\u2028\x1b", {}))
        assert spelt["error"]["message"] == "Unknown tool: outil_é中\\u2028\\x1b"
        plain = server.ask(tools_call(4, "drop_tables", {}))
        assert plain["error"]["message"] == "Unknown tool: drop_tables"
        method = server.ask({"jsonrpc": "2.0", "id": 5, "method": "ping\u200b"})
        assert method["error"] == {"code": -32601, "message": "Method not found: ping\\u200b"}
        rule = server.call(6, "confirm_rule", {"id": "r-1\u200b\u202e"})
        assert rule["isError"] is True
        assert text_of(rule) == 'No rule with id "r-1\\u200b\\u202e".'
        listed = server.call(7, "work_state_read", {"list": "todo\u200b"})
        assert text_of(listed) == 'No list named "todo\\u200b".'
        assert server.close() == 0


def test_the_json_api_names_an_unknown_field_with_its_escapes(tmp_path: Path) -> None:
    with http_server.running_server(tmp_path) as server:
        reply = server.api("POST", "/api/memories", {"text": "x", "bogus\u202e": 1, "né": 2})
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["message"] == (
        'Unknown fields "bogus\\u202e", "né" in the request body: POST /api/memories takes'
        " text, title, project, type, pinned, facts, files."
    )


def test_stdio_errors_show_a_secret_in_a_given_name_redacted(tmp_path: Path) -> None:
    """A secret sent as a tool's or a method's name is not repeated (DESIGN §9), as one sent as
    a rule id is not; every other name is told as before (above)."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    env = server_env(tmp_path, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    with running_server(env, tmp_path) as server:
        server.initialize()
        unknown = server.ask(tools_call(2, secret, {}))
        assert unknown["error"] == {"code": -32602, "message": "Unknown tool: [REDACTED]"}
        hidden = server.ask(tools_call(3, f"search\u202e{secret}", {}))
        assert hidden["error"]["message"] == "Unknown tool: search\\u202e[REDACTED]"
        method = server.ask({"jsonrpc": "2.0", "id": 4, "method": secret})
        assert method["error"] == {"code": -32601, "message": "Method not found: [REDACTED]"}
        assert server.close() == 0
