"""A secret a client sends where a name belongs (a tool's name, an ``Origin`` or ``Host``) is
never repeated by the hub: not in its answer, not in the audit row of the call (DESIGN §9:
"Secrets are redacted before anything is stored"; §4: an audit row holds the tool, never the
arguments). A real ``aletheia-sync`` on both stores; for ordinary names, the answers and rows
are as they always were."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub, stateless_post
from tests.stores import rows_at

pytestmark = pytest.mark.e2e

GH = "ghp_" + "Z1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r9"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db) as started:
        yield started


def _post(hub: Hub, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=WAIT_SECONDS)
    try:
        conn.request("POST", path, json.dumps(body), {**HEADERS, **headers})
        reply = conn.getresponse()
        raw = reply.read()
        return reply.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def _call(name: str, request_id: int | None = 5) -> dict[str, Any]:
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": name, "arguments": {}},
    }
    return message if request_id is None else {**message, "id": request_id}


def _audit(hub: Hub, actor: str) -> list[tuple[Any, ...]]:
    sql = "SELECT tool, project, result, detail FROM audit WHERE actor = ? ORDER BY id"
    return rows_at(hub.db, sql, actor)


def test_a_secret_named_as_a_tool_is_answered_and_audited_redacted(hub: Hub) -> None:
    token = hub.token("read", ("shop",), "tool-named-secret")
    session = hub.initialize(token)
    auth = {"Authorization": f"Bearer {token}"}
    answers = [
        _post(hub, "/mcp", _call(name), {**auth, "Mcp-Session-Id": session})
        for name in (GH, f"search\u202e{GH}", "drop_tables")
    ]
    assert [(status, body["error"]) for status, body in answers] == [
        (200, {"code": -32602, "message": "Unknown tool: [REDACTED]"}),
        (200, {"code": -32602, "message": "Unknown tool: search\\u202e[REDACTED]"}),
        (200, {"code": -32602, "message": "Unknown tool: drop_tables"}),
    ]
    # Sent as a notification (nothing may answer it), and refused before it ran (another
    # session): each is audited all the same.
    notified = _post(hub, "/mcp", _call(GH, None), {**auth, "Mcp-Session-Id": session})
    assert notified == (202, None)
    unknown = _post(hub, "/mcp", _call(GH), {**auth, "Mcp-Session-Id": "0" * 32})
    assert unknown[0] == 404
    status, modern = stateless_post(hub, token, "tools/call", name=GH, arguments={})
    assert (status, modern["error"]["message"]) == (400, "Unknown tool: [REDACTED]")
    assert _audit(hub, "tool-named-secret") == [
        ("[REDACTED]", None, "error", None),
        ("search\\u202e[REDACTED]", None, "error", None),
        ("drop_tables", None, "error", None),
        ("[REDACTED]", None, "error", None),
        ("[REDACTED]", None, "refused", "404 Not Found"),
        ("[REDACTED]", None, "error", None),
    ]
    assert GH not in repr(rows_at(hub.db, "SELECT * FROM audit"))
    target = str(hub.db)
    printed = CliRunner().invoke(
        cli, ["audit", "--hub-db", target, "--token", "tool-named-secret", "--json"]
    )
    assert printed.exit_code == 0, printed.output
    assert GH not in printed.output and "search\\\\u202e[REDACTED]" in printed.output


@pytest.mark.parametrize("path", ["/mcp", "/sync/push"])
def test_an_origin_or_host_holding_a_secret_is_refused_without_repeating_it(
    hub: Hub, path: str
) -> None:
    token = hub.token("sync", None, f"origin-secret{path.replace('/', '-')}")
    auth = {"Authorization": f"Bearer {token}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = {
        "origin": _post(hub, path, body, {**auth, "Origin": f"http://{GH}.evil.com"}),
        "host": _post(hub, path, body, {**auth, "Host": f"{GH}.evil.com"}),
        "plain origin": _post(hub, path, body, {**auth, "Origin": "http://evil.example.com"}),
        "plain host": _post(hub, path, body, {**auth, "Host": "evil.example.com:8080"}),
    }
    messages = {
        case: (status, reply["error"]["message"]) for case, (status, reply) in refused.items()
    }
    assert messages == {
        "origin": (403, "Origin 'http://[REDACTED].evil.com' is not allowed."),
        "host": (421, "Host '[REDACTED].evil.com' is not served here: check the address."),
        "plain origin": (403, "Origin 'http://evil.example.com' is not allowed."),
        "plain host": (
            421,
            "Host 'evil.example.com:8080' is not served here: start the server with"
            " --allow-host evil.example.com to serve it.",
        ),
    }
