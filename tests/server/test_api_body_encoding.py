"""A body is UTF-8 JSON, on a real ``aletheia-server``: a UTF-16 or UTF-32 body (which
``json.loads`` would read, guessing) is refused by the JSON API and by /mcp, and a body that is
not JSON for a reason the client can fix is told that reason."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.http_server import RunningServer, initialize_message, running_server

pytestmark = pytest.mark.e2e

JSON = {"Content-Type": "application/json", "Accept": "application/json"}
NOT_UTF8 = "The request body is not UTF-8."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("api-encoding")) as s:
        yield s


def message(server: RunningServer, raw: bytes) -> str:
    reply = server.request("POST", "/api/memories", raw, JSON)
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "invalid_input"
    told: str = reply.json()["error"]["message"]
    return told


def saved_texts(server: RunningServer, word: str) -> list[str]:
    found = server.api("GET", f"/api/memories?query={word}&project=*").json()
    return [memory["text"] for memory in found["memories"]]


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-16", "utf-16-be"])
def test_a_utf16_or_utf32_body_is_refused_as_not_utf8(server: RunningServer, encoding: str) -> None:
    raw = '{"text": "wide text"}'.encode(encoding)
    assert message(server, raw) == NOT_UTF8
    assert saved_texts(server, "wide") == []


def test_a_utf8_body_after_a_byte_order_mark_is_read(server: RunningServer) -> None:
    reply = server.request(
        "POST", "/api/memories", '{"text": "bom encoded"}'.encode("utf-8-sig"), JSON
    )
    assert reply.status == 201, reply.body
    assert reply.json()["memory"]["text"] == "bom encoded"


def test_mcp_refuses_a_utf32_message_as_a_parse_error(server: RunningServer) -> None:
    raw = json.dumps(initialize_message()).encode("utf-32")
    reply = server.post_mcp(raw)
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == -32700
    assert reply.header("mcp-session-id") is None
    assert server.post_mcp(json.dumps(initialize_message()).encode()).status == 200


def test_a_body_nested_past_the_parser_is_told_so(server: RunningServer) -> None:
    raw = ('{"text": "x", "facts": ' + "[" * 100_000 + "]" * 100_000 + "}").encode()
    assert message(server, raw) == (
        "The request body is refused: arguments must not nest more than 32 levels deep."
    )


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_is_told_not_json(server: RunningServer, constant: str) -> None:
    raw = f'{{"text": "constant text", "pinned": {constant}}}'.encode()
    assert message(server, raw) == (
        f"The request body is not JSON: it holds {constant}, and JSON has no NaN or Infinity."
    )
    assert saved_texts(server, "constant") == []
