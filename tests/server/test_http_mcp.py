"""Streamable HTTP at /mcp on a real ``aletheia-server`` (mcp-protocol.md sections 1.8 and 1.9)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.http_server import (
    RunningServer,
    initialize_message,
    running_server,
    server_env,
)

pytestmark = pytest.mark.e2e

KEY = "s3cret-key"
STDIO_SERVER = Path(sys.executable).parent / "aletheia-mcp"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("http")
    with running_server(
        root, args=("--port", "0", "--allow-origin", "https://app.example.com")
    ) as s:
        yield s


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("http-keyed")
    with running_server(root, env={"ALETHEIA_API_KEY": KEY}) as s:
        yield s


def rpc(method: str, request_id: Any = 1, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_initialize_answers_json_and_issues_a_session_id(server: RunningServer) -> None:
    reply = server.post_mcp(initialize_message())
    assert reply.status == 200
    assert reply.header("content-type") == "application/json"
    session = reply.header("mcp-session-id")
    assert session is not None and len(session) >= 32
    assert all(0x21 <= ord(char) <= 0x7E for char in session)
    result = reply.json()["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "aletheia"


def test_each_initialize_gets_its_own_session(server: RunningServer) -> None:
    assert server.initialize() != server.initialize()


def test_get_and_other_methods_get_405(server: RunningServer) -> None:
    for method in ("GET", "PUT", "PATCH", "HEAD", "OPTIONS"):
        reply = server.request(method, "/mcp", headers={"Accept": "text/event-stream"})
        assert reply.status == 405, method
        assert reply.header("allow") == "POST, DELETE"


def test_answer_to_a_request_is_always_application_json(server: RunningServer) -> None:
    session = server.initialize()
    for message in (rpc("ping"), rpc("tools/list"), rpc("no/such/method")):
        reply = server.post_mcp(message, session)
        assert reply.status == 200
        assert reply.header("content-type") == "application/json"
        assert reply.json()["id"] == 1


def test_notification_only_post_gets_202_without_body(server: RunningServer) -> None:
    session = server.initialize()
    reply = server.post_mcp({"jsonrpc": "2.0", "method": "notifications/cancelled"}, session)
    assert reply.status == 202
    assert reply.body == b""
    batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"}] * 2
    assert server.post_mcp(batch, session).status == 202


def test_request_without_session_id_gets_400(server: RunningServer) -> None:
    reply = server.post_mcp(rpc("tools/list", 7))
    assert reply.status == 400
    error = reply.json()
    assert error["id"] == 7
    assert error["error"]["code"] == -32600
    assert "Mcp-Session-Id" in error["error"]["message"]


def test_unknown_session_gets_404(server: RunningServer) -> None:
    reply = server.post_mcp(rpc("ping"), "0" * 32)
    assert reply.status == 404
    assert reply.json()["error"]["code"] == -32600


def test_delete_ends_the_session(server: RunningServer) -> None:
    session = server.initialize()
    ended = server.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
    assert ended.status == 204
    assert server.post_mcp(rpc("ping"), session).status == 404
    again = server.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
    assert again.status == 404
    assert server.request("DELETE", "/mcp").status == 400


def test_unsupported_protocol_version_header_gets_400(server: RunningServer) -> None:
    session = server.initialize()
    reply = server.post_mcp(rpc("ping"), session, {"MCP-Protocol-Version": "2099-01-01"})
    assert reply.status == 400
    message = reply.json()["error"]["message"]
    assert "'2099-01-01'" in message
    assert message.endswith(
        "this server speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05."
    )


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_supported_protocol_version_header_is_accepted(server: RunningServer, version: str) -> None:
    session = server.initialize()
    reply = server.post_mcp(rpc("ping"), session, {"MCP-Protocol-Version": version})
    assert reply.status == 200
    assert reply.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_absent_protocol_version_header_is_accepted(server: RunningServer) -> None:
    session = server.initialize()
    assert server.post_mcp(rpc("ping"), session).status == 200


def test_server_discover_before_initialize_gets_an_error_clients_fall_back_on(
    server: RunningServer,
) -> None:
    probe = rpc("server/discover", "server-discover-probe-1")
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    for sent in (headers, {}):
        reply = server.post_mcp(probe, headers=sent)
        assert reply.status == 400
        error = reply.json()["error"]
        assert error["code"] != -32022  # that code would mean "modern server" and stop fallback
        assert "data" not in error
    assert server.post_mcp(initialize_message()).status == 200


@pytest.mark.parametrize(
    "origin", ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443"]
)
def test_loopback_origins_are_accepted(server: RunningServer, origin: str) -> None:
    reply = server.post_mcp(initialize_message(), headers={"Origin": origin})
    assert reply.status == 200


def test_allow_listed_origin_is_accepted(server: RunningServer) -> None:
    reply = server.post_mcp(initialize_message(), headers={"Origin": "https://app.example.com"})
    assert reply.status == 200


@pytest.mark.parametrize(
    "origin", ["http://evil.example.com", "https://app.example.com:444", "null", "file://"]
)
def test_foreign_origin_is_refused_with_403(server: RunningServer, origin: str) -> None:
    reply = server.post_mcp(initialize_message(), headers={"Origin": origin})
    assert reply.status == 403
    assert reply.json()["error"]["code"] == -32600
    assert reply.header("mcp-session-id") is None


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_header_with_any_port_is_accepted(server: RunningServer, host: str) -> None:
    for value in (host, f"{host}:{server.port}", f"{host}:1"):
        assert server.post_mcp(initialize_message(), headers={"Host": value}).status == 200


def test_foreign_host_header_is_refused_against_dns_rebinding(server: RunningServer) -> None:
    headers = {"Host": "evil.example.com", "Origin": "http://evil.example.com"}
    assert server.post_mcp(initialize_message(), headers=headers).status == 421
    assert server.post_mcp(initialize_message(), headers={"Host": "evil.example.com"}).status == 421
    assert server.api("GET", "/api/rules").status == 200  # the same guard covers the API
    refused = server.request("GET", "/api/rules", headers={"Host": "attacker.test:80"})
    assert refused.status == 421
    assert refused.json()["error"]["code"] == "invalid_host"


def test_body_over_the_cap_gets_413(server: RunningServer) -> None:
    session = server.initialize()
    big = json.dumps(rpc("tools/call", name="search", arguments={"query": "x" * (5 << 20)}))
    assert server.post_mcp(big, session).status == 413
    chunked = server.request(
        "POST",
        "/mcp",
        iter([big[: 1 << 20].encode(), big[1 << 20 :].encode()]),  # type: ignore[arg-type]
        {"Content-Type": "application/json", "Mcp-Session-Id": session},
    )
    assert chunked.status == 413


def test_accept_without_json_gets_406_and_other_media_types_415(server: RunningServer) -> None:
    session = server.initialize()
    assert server.post_mcp(rpc("ping"), session, {"Accept": "text/event-stream"}).status == 406
    assert server.post_mcp(rpc("ping"), session, {"Content-Type": "text/plain"}).status == 415


def test_a_body_without_a_content_type_gets_415_and_opens_no_session(server: RunningServer) -> None:
    # A page on another loopback port sends this with fetch(mode: "no-cors"), which a browser
    # sends without a preflight: 1,100 of them opened sessions that pushed out the agents' own.
    agent = server.initialize()
    page = {"Origin": "http://127.0.0.1:5555", "Sec-Fetch-Site": "same-site"}
    for _ in range(3):
        body = json.dumps(initialize_message(client="evil-page")).encode()
        sent = server.request("POST", "/mcp", body, {**page, "Accept": "*/*"})
        assert sent.status == 415, sent.body
        assert sent.header("mcp-session-id") is None
    assert server.post_mcp(rpc("ping"), agent).status == 200


def test_unreadable_body_gets_400_parse_error(server: RunningServer) -> None:
    session = server.initialize()
    reply = server.post_mcp(b"{not json", session)
    assert reply.status == 400
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the body is not valid JSON."},
    }


def test_batch_is_answered_with_an_array_as_on_stdio(server: RunningServer) -> None:
    session = server.initialize()
    batch = [rpc("ping", 1), {"jsonrpc": "2.0", "method": "notifications/x"}, rpc("tools/list", 2)]
    reply = server.post_mcp(batch, session)
    assert reply.status == 200
    answers = reply.json()
    assert isinstance(answers, list)
    assert sorted(answer["id"] for answer in answers) == [1, 2]
    empty = server.post_mcp([], session)
    assert empty.json()["error"]["code"] == -32600


def test_initialize_in_a_batch_without_a_session_is_told_as_on_stdio(server: RunningServer) -> None:
    reply = server.post_mcp([initialize_message(), rpc("tools/list", 2)])
    assert reply.status == 400
    assert reply.header("mcp-session-id") is None
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid request: initialize must not be in a batch."},
    }
    assert (
        "send initialize first"
        in server.post_mcp([rpc("tools/list", 2)]).json()["error"]["message"]
    )


def test_a_batch_holds_at_most_100_messages_and_one_more_is_refused_whole(
    server: RunningServer,
) -> None:
    session = server.initialize()
    saves = [
        rpc("tools/call", n, name="save_memory", arguments={"text": f"overbatched {n} quokka"})
        for n in range(101)
    ]
    refused = server.post_mcp(saves, session)
    assert refused.status == 400
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid request: a batch holds at most 100 messages; this one has 101.",
        },
    }
    found = server.call_tool(session, "search", {"query": "overbatched quokka"})
    assert found["content"][0]["text"].startswith("No matches.")  # nothing of it ran
    searches = [rpc("tools/call", n, name="search", arguments={"query": "x"}) for n in range(100)]
    answered = server.post_mcp(searches, session)
    assert answered.status == 200
    assert sorted(answer["id"] for answer in answered.json()) == list(range(100))


def test_a_batchs_answer_stays_bounded_however_large_each_answer(tmp_path: Path) -> None:
    words = " ".join(f"w{n:06d}" for n in range(2_400))  # 19,199 characters
    saves = [
        rpc("tools/call", n, name="save_memory", arguments={"text": f"{n} {words}"})
        for n in range(100)
    ]
    observe = [
        rpc("tools/call", n, name="get_observations", arguments={"ids": list(range(1, 101))})
        for n in range(100)
    ]
    with running_server(tmp_path) as fresh:
        session = fresh.initialize()
        assert fresh.post_mcp(saves, session).status == 200
        one = fresh.post_mcp(observe[0], session)
        reply = fresh.post_mcp(observe, session)
    assert reply.status == 200
    answers = reply.json()
    assert [answer["id"] for answer in answers] == list(range(100))
    ran = [answer for answer in answers if "result" in answer]
    assert 1 <= len(ran) < 100 and ran == answers[: len(ran)]
    assert {answer["error"]["code"] for answer in answers[len(ran) :]} == {-32000}
    # 100 answers of this size would take 100 times as much.
    assert len(reply.body) < (len(ran) + 1) * len(one.body)


def test_tools_call_saves_under_the_client_name_and_search_finds_it(server: RunningServer) -> None:
    session = server.initialize(client="http-test-client")
    saved = server.call_tool(session, "save_memory", {"text": "HTTP saved: use pnpm in shop"})
    assert saved["isError"] is False
    assert saved["content"][0]["text"].startswith("Saved as #")
    found = server.call_tool(session, "search", {"query": "pnpm"})
    assert "(shop, http-test-client)" in found["content"][0]["text"]
    missing = server.call_tool(session, "search", {})
    assert missing == {"content": [{"type": "text", "text": "query is required."}], "isError": True}


def _stdio_replies(root: Path, lines: list[dict[str, Any]]) -> list[Any]:
    cwd = root / "shop"
    cwd.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    done = subprocess.run(
        [str(STDIO_SERVER)],
        input=data,
        capture_output=True,
        env=server_env(root / "data", cwd),
        cwd=cwd,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_json_rpc_answers_are_the_same_as_over_stdio(tmp_path: Path) -> None:
    messages: list[Any] = [
        rpc("tools/list", 2),
        rpc("tools/call", 3, name="search", arguments={"query": "nothing here"}),
        rpc("tools/call", 4, name="search", arguments={}),
        rpc("tools/call", 5, name="no_such_tool"),
        rpc("tools/call", 6),
        rpc("no/such/method", "seven"),
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1]},
        [rpc("ping", 9), rpc("tools/call", 10, name="list_rules")],
    ]
    stdio = _stdio_replies(tmp_path / "stdio", [initialize_message(1), *messages])
    with running_server(tmp_path / "http") as server:
        first = server.post_mcp(initialize_message(1))
        session = first.header("mcp-session-id")
        over_http = [first.json()] + [server.post_mcp(m, session).json() for m in messages]
    assert over_http == stdio


def test_api_key_is_required_on_every_call(keyed: RunningServer) -> None:
    missing = keyed.post_mcp(initialize_message())
    assert missing.status == 401
    assert missing.header("www-authenticate") == 'Bearer realm="aletheia"'
    assert missing.json()["error"]["message"].startswith("Unauthorized")
    wrong = keyed.post_mcp(initialize_message(), headers={"Authorization": "Bearer nope"})
    assert wrong.status == 401
    assert wrong.header("www-authenticate") == 'Bearer realm="aletheia", error="invalid_token"'
    assert keyed.post_mcp(initialize_message(), headers={"Authorization": KEY}).status == 401
    good = {"Authorization": f"Bearer {KEY}"}
    session = keyed.initialize(headers=good)
    assert keyed.post_mcp(rpc("ping"), session, good).status == 200
    assert keyed.post_mcp(rpc("ping"), session).status == 401  # a session is no credential
    assert keyed.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session}).status == 401
    assert keyed.request("GET", "/api/rules").status == 401
    assert keyed.request("GET", "/api/openapi.json").status == 401
    assert keyed.api("GET", "/api/rules", key=KEY).status == 200


def test_bearer_scheme_is_case_insensitive(keyed: RunningServer) -> None:
    reply = keyed.post_mcp(initialize_message(), headers={"Authorization": f"bearer {KEY}"})
    assert reply.status == 200


def test_a_refusal_at_the_front_door_is_compact_json_as_every_other_reply(
    server: RunningServer,
) -> None:
    refused = server.request("POST", "/mcp", b"{}", {"Host": "evil.example"})
    assert refused.status == 421
    assert refused.body.startswith(b'{"jsonrpc":"2.0","id":null,"error":{')
