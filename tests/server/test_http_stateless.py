"""Stateless 2026-07-28 POSTs to a real ``aletheia-server``: no session, the routing headers
checked against the body, the spec's status and error for every bad request, 2 workers."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "modern-http", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("stateless")
    with running_server(root, args=("--port", "0", "--workers", "2")) as started:
        yield started


def body(method: str, request_id: Any = 1, meta: Any = META, **params: Any) -> dict[str, Any]:
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def headers_for(message: dict[str, Any], **override: str | None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": message.get("method", "")}
    name = message.get("params", {}).get("name")
    if isinstance(name, str):
        headers["Mcp-Name"] = name
    headers.update(override)  # type: ignore[arg-type]
    return {key: value for key, value in headers.items() if value is not None}


def post(server: RunningServer, message: Any, **override: str | None) -> tuple[int, Any, Any]:
    headers = headers_for(message, **override) if isinstance(message, dict) else {}
    if not isinstance(message, dict):
        headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/list"}
    reply = server.post_mcp(message, headers=headers)
    return reply.status, (reply.json() if reply.body else None), reply.header("mcp-session-id")


def test_discover_answers_every_version_and_no_session_is_made(server: RunningServer) -> None:
    status, answer, session = post(server, body("server/discover"))
    assert (status, session) == (200, None)
    result = answer["result"]
    assert result["supportedVersions"] == [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "aletheia"


def test_calls_land_on_either_worker_and_see_one_store(server: RunningServer) -> None:
    save = body("tools/call", name="save_memory", arguments={"text": "stateless pnpm note"})
    status, answer, _ = post(server, save)
    assert status == 200 and answer["result"]["isError"] is False, answer
    for request_id in range(10):  # connections alternate between the 2 workers
        search = body("tools/call", request_id, name="search", arguments={"query": "stateless"})
        status, answer, _ = post(server, search)
        assert status == 200
        assert answer["result"]["structuredContent"]["memories"][0]["tool"] == "modern-http"


def test_a_base64_name_header_matches_its_body(server: RunningServer) -> None:
    message = body("tools/call", name="list_rules", arguments={})
    encoded = "=?base64?" + base64.b64encode(b"list_rules").decode() + "?="
    status, answer, _ = post(server, message, **{"Mcp-Name": encoded})
    assert status == 200, answer


@pytest.mark.parametrize(
    "override",
    [
        {"Mcp-Method": None},
        {"Mcp-Method": "tools/list"},
        {"Mcp-Name": None},
        {"Mcp-Name": "save_memory"},
        {"Mcp-Name": "=?base64?not base64?="},
    ],
)
def test_headers_that_contradict_the_body_get_400_header_mismatch(
    server: RunningServer, override: dict[str, str | None]
) -> None:
    message = body("tools/call", name="search", arguments={"query": "x"})
    status, answer, _ = post(server, message, **override)
    assert status == 400
    assert answer["id"] == 1
    assert answer["error"]["code"] == -32020


def test_an_envelope_without_the_version_header_is_a_header_mismatch(
    server: RunningServer,
) -> None:
    reply = server.post_mcp(body("tools/list"))  # no headers, no session: the body decides
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020


def test_a_body_version_other_than_the_header_is_a_header_mismatch(server: RunningServer) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    status, answer, _ = post(server, body("tools/list", meta=meta))
    assert (status, answer["error"]["code"]) == (400, -32020)


def test_an_unsupported_version_gets_400_unsupported_protocol_version(
    server: RunningServer,
) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    message = body("tools/list", meta=meta)
    status, answer, _ = post(server, message, **{"MCP-Protocol-Version": "2099-01-01"})
    assert status == 400
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"]["requested"] == "2099-01-01"
    assert "2026-07-28" in answer["error"]["data"]["supported"]


@pytest.mark.parametrize(
    "meta",
    [None, {}, {"io.modelcontextprotocol/protocolVersion": VERSION}, "x"],
)
def test_a_missing_or_partial_envelope_gets_400_invalid_params(
    server: RunningServer, meta: Any
) -> None:
    status, answer, _ = post(server, body("tools/list", meta=meta))
    assert (status, answer["error"]["code"]) == (400, -32602)


def test_an_unknown_stateless_method_gets_404_method_not_found(server: RunningServer) -> None:
    for method in ("ping", "resources/list", "initialize"):
        status, answer, _ = post(server, body(method))
        assert (status, answer["error"]["code"]) == (404, -32601), method


def test_a_batch_or_a_response_is_400_invalid_request(server: RunningServer) -> None:
    for message in ([body("tools/list")], {"jsonrpc": "2.0", "id": 1, "result": {}}):
        status, answer, _ = post(server, message)
        assert (status, answer["error"]["code"]) == (400, -32600)


def test_a_stateless_notification_is_accepted_with_202(server: RunningServer) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    reply = server.post_mcp(note, headers={"MCP-Protocol-Version": VERSION})
    assert (reply.status, reply.body) == (202, b"")


def test_a_legacy_session_ignores_an_envelope_in_meta_and_goes_on(server: RunningServer) -> None:
    session = server.initialize()
    reply = server.post_mcp(body("tools/list"), session)
    assert reply.status == 200
    assert len(reply.json()["result"]["tools"]) == 13  # served as the session's era: _meta ignored
    assert "resultType" not in reply.json()["result"]
    ping = server.post_mcp({"jsonrpc": "2.0", "id": 2, "method": "ping"}, session)
    assert json.loads(ping.body) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_the_handshake_still_works_after_a_discover_probe(server: RunningServer) -> None:
    probe = body("server/discover", "server-discover-probe-1")
    assert post(server, probe)[0] == 200
    session = server.initialize()
    listed = server.post_mcp({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, session)
    assert len(listed.json()["result"]["tools"]) == 13
