"""An error of ``aletheia-server`` that repeats what a client sent (a header, a tool or method
name, a query parameter or body field, an address's part) shows a secret in it redacted, as
every error that repeats a rule id or a subject already did: an error's text is kept in client
logs, proxies and terminals. Text that holds no secret is repeated exactly as before. A real
server on 127.0.0.1 (the hub's own: tests/hub/test_echoed_secrets.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from tests.e2e.http_server import Reply, RunningServer, running_server

pytestmark = pytest.mark.e2e

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SEARCH_PARAMETERS = (
    "query, file, file_suffix, project, type, kind, limit, offset, since, until,"
    " older_than_days, order, upto, at"
)
SAVE_FIELDS = "text, title, project, type, pinned, facts, files"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("echoed-secrets")) as running:
        yield running


def _message(reply: Reply) -> str:
    assert GH not in reply.body.decode("utf-8", "replace"), reply.body
    message: str = reply.json()["error"]["message"]
    return message


def _get(server: RunningServer, path: str, **headers: str) -> Reply:
    return server.request("GET", path, None, {"Accept": "application/json", **headers})


def _mcp(
    server: RunningServer, message: dict[str, Any], session: str | None = None, **headers: str
) -> Reply:
    return server.post_mcp(
        message, session, {key.replace("_", "-"): v for key, v in headers.items()}
    )


def test_a_refused_origin_is_repeated_with_a_secret_in_it_redacted(server: RunningServer) -> None:
    for origin, shown in ((f"http://{GH}.evil.com", "http://[REDACTED].evil.com"),
                          ("http://evil.example.com", "http://evil.example.com")):  # fmt: skip
        api = _get(server, "/api/memories?query=x", Origin=origin)
        mcp = _mcp(server, PING, Origin=origin)
        assert (api.status, mcp.status) == (403, 403)
        assert _message(api) == _message(mcp) == f"Origin '{shown}' is not allowed."


def test_a_refused_host_is_repeated_with_a_secret_in_it_redacted(server: RunningServer) -> None:
    secret = _get(server, "/api/memories?query=x", Host=f"{GH}.evil.com")
    assert secret.status == 421
    assert _message(secret) == "Host '[REDACTED].evil.com' is not served here: check the address."
    plain = _get(server, "/api/memories?query=x", Host="Evil.Example.com:8080")
    assert _message(plain) == (
        "Host 'Evil.Example.com:8080' is not served here: start the server with --allow-host"
        " evil.example.com to serve it."
    )


def test_an_unsupported_protocol_version_is_repeated_redacted(server: RunningServer) -> None:
    session = server.initialize()
    speaks = "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
    for version, shown in ((GH, "[REDACTED]"), ("1999-01-01", "1999-01-01")):
        reply = _mcp(server, PING, session, MCP_Protocol_Version=version)
        assert reply.status == 400
        assert _message(reply) == (
            f"Bad Request: unsupported MCP-Protocol-Version '{shown}'; this server speaks {speaks}."
        )
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}
        modern = _mcp(server, listing, MCP_Protocol_Version=version, Mcp_Method="tools/list")
        assert _message(modern) == f"Unsupported protocol version: '{shown}'."
        assert modern.json()["error"]["data"]["requested"] == shown


def test_an_unknown_tool_or_method_is_named_redacted(server: RunningServer) -> None:
    session = server.initialize()
    told = {}
    for name in (GH, f"search\u202e{GH}", "drop_tables"):
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name}}
        told[name] = _message(_mcp(server, call, session))
        method = _mcp(server, {"jsonrpc": "2.0", "id": 4, "method": name}, session)
        told["method " + name] = _message(method)
    assert told == {
        GH: "Unknown tool: [REDACTED]",
        f"search\u202e{GH}": "Unknown tool: search\\u202e[REDACTED]",
        "drop_tables": "Unknown tool: drop_tables",
        f"method {GH}": "Method not found: [REDACTED]",
        f"method search\u202e{GH}": "Method not found: search\\u202e[REDACTED]",
        "method drop_tables": "Method not found: drop_tables",
    }


def test_an_unknown_parameter_or_field_is_named_redacted(server: RunningServer) -> None:
    bidi = quote("bogus\u202e")
    parameter = _get(server, f"/api/memories?{GH}=1&{bidi}=2&projct=shop")
    assert parameter.status == 400
    assert _message(parameter) == (
        'Unknown parameters "[REDACTED]", "bogus\\u202e", "projct" in the query string:'
        f" GET /api/memories takes {SEARCH_PARAMETERS}."
    )
    field = server.api("POST", "/api/memories", {"text": "x", GH: 1, "titel": "y"})
    assert field.status == 400
    assert _message(field) == (
        'Unknown fields "[REDACTED]", "titel" in the request body: POST /api/memories takes'
        f" {SAVE_FIELDS}."
    )


def test_a_web_page_s_address_is_repeated_redacted(server: RunningServer) -> None:
    """The pages are HTML: the error is in the page's alert, escaped as any value is."""
    for given, shown in ((GH, "[REDACTED]"), ("seven", "seven")):
        page = server.request("GET", f"/memories/{given}", None, {"Accept": "text/html"})
        assert page.status == 404
        text = page.body.decode()
        assert GH not in text
        alert = re.search(r'<p class="error" role="alert">(.*?)</p>', text)
        assert alert is not None, text[:500]
        assert alert.group(1) == f"A memory&#39;s id is a number: “{shown}” names no memory."


def test_a_page_action_named_by_a_secret_is_refused_without_repeating_it(
    server: RunningServer,
) -> None:
    """The Dismiss/Restore/Pin forms post to an address that names the action: one that names
    none is a 404 that says which it was given (as Python writes it), a secret redacted."""
    page = server.request("GET", "/")
    cookie = (page.header("set-cookie") or "").split(";")[0]
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.body.decode())
    assert cookie and token, page.body[:200]
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": cookie,
        "Origin": server.url,
    }
    told = {}
    for path in (f"/memories/1/{GH}", f"/facts/1/{GH}", f"/facts/{GH}/dismiss",
                 f"/rules/r_1/{GH}", "/rules/r_1/shred"):  # fmt: skip
        reply = server.request("POST", path, urlencode({"csrf": token.group(1)}), headers)
        text = reply.body.decode()
        assert reply.status == 404 and GH not in text, (path, text[:300])
        alert = re.search(r'<p class="error" role="alert">(.*?)</p>', text)
        assert alert is not None, text[:500]
        told[path] = alert.group(1)
    assert told == {
        f"/memories/1/{GH}": "No action &#39;[REDACTED]&#39;.",
        f"/facts/1/{GH}": "No action &#39;[REDACTED]&#39; on fact &#39;1&#39;.",
        f"/facts/{GH}/dismiss": "No action &#39;dismiss&#39; on fact &#39;[REDACTED]&#39;.",
        f"/rules/r_1/{GH}": "No action &#39;[REDACTED]&#39;.",
        "/rules/r_1/shred": "No action &#39;shred&#39;.",
    }
