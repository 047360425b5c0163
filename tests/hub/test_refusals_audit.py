"""Requests to the hub's ``/mcp`` refused before any tool runs, sent with a valid token.

Each refusal answers with the status and JSON-RPC error mcp-protocol.md gives (H2, H4, H6, H8-H11,
J2, J4, E2), tells nothing of the hub's inside, counts against the token's rate limit (DESIGN
§11: 60 requests per minute per token, whatever they asked for), and a refused ``tools/call``
leaves one audit row (DESIGN §11: one audit row per tools/call) without its arguments.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.hub.helpers import STATELESS_META, WAIT_SECONDS, Hub, running_hub
from tests.stores import rows_at

pytestmark = pytest.mark.e2e

RATE_LIMIT = 6
SECRET = "zebra-quartz-refused-4711"  # an argument's value: never in the audit trail
_INSIDE = ("Traceback", 'File "', "aletheia_mem", "psycopg", "sqlite", "Exception")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


@dataclass
class Caller:
    """A limited token, its own session, and another token's session."""

    hub: Hub
    token: str
    name: str
    session: str
    others_session: str
    other_token: str

    def send(self, method: str, body: bytes | None, headers: dict[str, str]) -> Answer:
        parts = urlsplit(self.hub.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=WAIT_SECONDS)
        try:
            conn.request(method, "/mcp", body=body, headers=headers)
            reply = conn.getresponse()
            raw = reply.read()
            return Answer(reply.status, {k.lower(): v for k, v in reply.getheaders()}, raw)
        finally:
            conn.close()


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", str(RATE_LIMIT)) as started:
        yield started


def _caller(hub: Hub, name: str) -> Caller:
    token = hub.token("read", ("shop",), name)
    other = hub.token("read", ("shop",), f"{name}-victim")
    return Caller(hub, token, name, hub.initialize(token), hub.initialize(other), other)


def _call(name: str = "search", **extra: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": {"query": SECRET}}
    return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params, **extra}


def _headers(caller: Caller, session: str | None = None, **more: str) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {caller.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
    headers.update({key.replace("_", "-"): value for key, value in more.items()})
    return headers


def _stateless(caller: Caller, **more: str) -> tuple[bytes, dict[str, str]]:
    body = _call()
    body["params"]["_meta"] = STATELESS_META
    headers = _headers(caller, **{"MCP_Protocol_Version": "2026-07-28", **more})
    return json.dumps(body).encode(), headers


Request = tuple[str, bytes | None, dict[str, str]]
CALL = json.dumps(_call()).encode()


@dataclass(frozen=True)
class Case:
    request: Callable[[Caller], Request]
    status: int
    code: int | None  # the JSON-RPC error code; None: no body at all
    echoes_id: bool  # the error carries the request's id (5)
    audit: tuple[str, str | None] | None  # the call's audit row: (result, detail)


REFUSED_CALLS: dict[str, Case] = {
    # H9 / H15: a session is its token's; anyone else's (or none known) is 404.
    "another-tokens-session": Case(
        lambda c: ("POST", CALL, _headers(c, c.others_session)),
        404,
        -32600,
        True,
        ("refused", "404 Not Found"),
    ),
    "unknown-session": Case(
        lambda c: ("POST", CALL, _headers(c, "0" * 32)),
        404,
        -32600,
        True,
        ("refused", "404 Not Found"),
    ),
    # H8: a request other than initialize without the session it needs is 400.
    "no-session": Case(
        lambda c: ("POST", CALL, _headers(c)),
        400,
        -32600,
        True,
        ("refused", "400 Bad Request"),
    ),
    # H11: an unsupported MCP-Protocol-Version is 400.
    "unsupported-version-header": Case(
        lambda c: ("POST", CALL, _headers(c, c.session, MCP_Protocol_Version="1999-01-01")),
        400,
        -32600,
        True,
        ("refused", "400 Bad Request"),
    ),
    # 2026-07-28 named on a legacy session: that era's request, whose envelope is missing.
    "modern-version-on-a-legacy-session": Case(
        lambda c: ("POST", CALL, _headers(c, c.session, MCP_Protocol_Version="2026-07-28")),
        400,
        -32602,
        True,
        ("refused", "400 Bad Request"),
    ),
    # The 2026-07-28 headers must match the body (HeaderMismatch, -32020, 400).
    "mcp-name-not-the-body's": Case(
        lambda c: ("POST", *_stateless(c, Mcp_Method="tools/call", Mcp_Name="list_rules")),
        400,
        -32020,
        True,
        ("refused", "400 Bad Request"),
    ),
    "mcp-method-not-the-body's": Case(
        lambda c: ("POST", *_stateless(c, Mcp_Method="tools/list", Mcp_Name="search")),
        400,
        -32020,
        True,
        ("refused", "400 Bad Request"),
    ),
    # A 2026-07-28 body is one message: an array is refused whole (-32600, 400).
    "stateless-batch": Case(
        lambda c: (
            "POST",
            json.dumps([_call()]).encode(),
            _headers(c, MCP_Protocol_Version="2026-07-28", Mcp_Method="tools/call"),
        ),
        400,
        -32600,
        False,
        ("refused", "400 Bad Request"),
    ),
    # H2: the SDK server's 415 and 406.
    "wrong-content-type": Case(
        lambda c: ("POST", CALL, _headers(c, c.session, Content_Type="text/plain")),
        415,
        -32600,
        True,
        ("refused", "415 Unsupported Media Type"),
    ),
    "accept-without-json": Case(
        lambda c: ("POST", CALL, _headers(c, c.session, Accept="text/event-stream")),
        406,
        -32600,
        True,
        ("refused", "406 Not Acceptable"),
    ),
    # J2: a null id is no request id; the call is refused like any malformed one.
    "null-id": Case(
        lambda c: ("POST", json.dumps(_call(id=None)).encode(), _headers(c, c.session)),
        400,
        -32600,
        False,
        ("error", None),
    ),
    # J4, H4: a notification gets no answer (202), and a tools/call sent as one runs nothing.
    "call-as-notification": Case(
        lambda c: (
            "POST",
            json.dumps({k: v for k, v in _call().items() if k != "id"}).encode(),
            _headers(c, c.session),
        ),
        202,
        None,
        False,
        ("error", None),
    ),
    "stateless-call-as-notification": Case(
        lambda c: (
            "POST",
            json.dumps(
                {k: v for k, v in json.loads(_stateless(c)[0]).items() if k != "id"}
            ).encode(),
            _stateless(c, Mcp_Method="tools/call", Mcp_Name="search")[1],
        ),
        202,
        None,
        False,
        ("error", None),
    ),
}

OTHER_REFUSALS: dict[str, Case] = {
    # Past the body cap: refused unread (413), so nothing tells it was a call.
    "oversized-body": Case(
        lambda c: (
            "POST",
            json.dumps(_call(pad="x" * (16 * 1024 * 1024 + 1))).encode(),
            _headers(c, c.session),
        ),
        413,
        -32600,
        False,
        None,
    ),
    # H4: a response to a request the hub never sent is accepted and dropped (202, no body).
    "a-response": Case(
        lambda c: ("POST", b'{"jsonrpc":"2.0","id":5,"result":{}}', _headers(c, c.session)),
        202,
        None,
        False,
        None,
    ),
    "an-error-response": Case(
        lambda c: (
            "POST",
            b'{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}',
            _headers(c, c.session),
        ),
        202,
        None,
        False,
        None,
    ),
    # H6: no SSE stream; 405 with or without a session.
    "get": Case(lambda c: ("GET", None, _headers(c)), 405, -32600, False, None),
    "get-with-session": Case(
        lambda c: ("GET", None, _headers(c, c.session)), 405, -32600, False, None
    ),
    # H10 / H9: DELETE needs a session of the token's own.
    "delete-without-session": Case(
        lambda c: ("DELETE", None, _headers(c)), 400, -32600, False, None
    ),
    "delete-another-tokens-session": Case(
        lambda c: ("DELETE", None, _headers(c, c.others_session)), 404, -32600, False, None
    ),
    "delete-unknown-session": Case(
        lambda c: ("DELETE", None, _headers(c, "f" * 32)), 404, -32600, False, None
    ),
}
ALL = {**REFUSED_CALLS, **OTHER_REFUSALS}


def _audit(db: Path | str, actor: str) -> list[tuple[str, str | None, str, str | None]]:
    sql = "SELECT tool, project, result, detail FROM audit WHERE actor = ? ORDER BY id"
    return rows_at(db, sql, actor)  # type: ignore[return-value]


def _ping(caller: Caller, token: str | None = None, session: str | None = None) -> int:
    body = b'{"jsonrpc":"2.0","id":9,"method":"ping"}'
    headers = _headers(caller, session or caller.session)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return caller.send("POST", body, headers).status


def _slug(case: str) -> str:
    return "".join(char for char in case if char.isalnum() or char == "-")


@pytest.mark.parametrize("case", list(ALL))
def test_a_refused_request_gets_its_status_and_a_json_rpc_error_telling_nothing_inside(
    hub: Hub, case: str
) -> None:
    expected = ALL[case]
    caller = _caller(hub, f"status-{_slug(case)}")
    answer = caller.send(*expected.request(caller))
    assert answer.status == expected.status, answer.raw[:300]
    if expected.code is None:
        assert answer.raw == b""
    else:
        assert answer.headers["content-type"].startswith("application/json")
        error = answer.body["error"]
        assert error["code"] == expected.code and answer.body["jsonrpc"] == "2.0"
        assert answer.body["id"] == (5 if expected.echoes_id else None)
        assert not any(word in error["message"] for word in _INSIDE), error["message"]
    assert SECRET.encode() not in answer.raw
    if case in ("get", "get-with-session"):
        assert answer.headers["allow"] == "POST, DELETE"
    # Another token's session is neither used nor ended by the attempt.
    assert _ping(caller, caller.other_token, caller.others_session) == 200


@pytest.mark.parametrize("case", list(ALL))
def test_a_refused_tools_call_leaves_one_audit_row_and_other_refusals_none(
    hub: Hub, case: str
) -> None:
    expected = ALL[case]
    caller = _caller(hub, f"audit-{_slug(case)}")
    caller.send(*expected.request(caller))
    rows = _audit(hub.db, caller.name)
    if expected.audit is None:
        assert rows == []
    else:
        result, detail = expected.audit
        assert rows == [("search", None, result, detail)]
    assert not any(SECRET in str(row) for row in _audit(hub.db, f"{caller.name}-victim"))


@pytest.mark.parametrize("case", list(ALL))
def test_every_refused_request_counts_against_the_tokens_rate_limit(hub: Hub, case: str) -> None:
    expected = ALL[case]
    caller = _caller(hub, f"limit-{_slug(case)}")  # initialize: the token's first request
    statuses = [caller.send(*expected.request(caller)).status for _ in range(RATE_LIMIT - 1)]
    assert statuses == [expected.status] * (RATE_LIMIT - 1)
    assert _ping(caller) == 429  # the limit is spent
    assert _audit(hub.db, caller.name)[-1][:3] == ("rate-limit", "shop", "refused")


def test_a_call_after_initialize_without_the_version_header_is_served(hub: Hub) -> None:
    """mcp-protocol.md finding 5: Gemini CLI sends none; only a wrong one is refused."""
    caller = _caller(hub, "no-version-header")
    headers = _headers(caller, caller.session)
    del headers["MCP-Protocol-Version"]
    answer = caller.send("POST", CALL, headers)
    assert answer.status == 200 and answer.body["result"]["isError"] is False
    assert _audit(hub.db, caller.name) == [("search", "shop", "ok", None)]


def test_a_legacy_session_ignores_routing_headers_that_do_not_match_the_body(hub: Hub) -> None:
    """mcp-protocol.md E4: Mcp-Method and Mcp-Name are ignored outside 2026-07-28."""
    caller = _caller(hub, "legacy-routing-headers")
    headers = _headers(caller, caller.session, Mcp_Method="tools/list", Mcp_Name="save_memory")
    answer = caller.send("POST", CALL, headers)
    assert answer.status == 200 and answer.body["result"]["isError"] is False
    assert _audit(hub.db, caller.name) == [("search", "shop", "ok", None)]


@pytest.mark.parametrize(
    ("case", "params", "tool"),
    [
        ("nul-in-name", {"name": "sea\x00rch", "arguments": {}}, "sea\\x00rch"),
        (
            "nul-in-project",
            {"name": "search", "arguments": {"query": "x", "project": "s\x00p"}},
            "search",
        ),
    ],
)
def test_a_nul_character_in_a_call_gets_a_clean_answer_and_its_audit_row(
    hub: Hub, case: str, params: dict[str, Any], tool: str
) -> None:
    """PostgreSQL text holds no NUL: the row is written with it shown as its escape (an
    unknown tool's name is recorded as errors repeat it, ``escapes.escaped``), never a 500."""
    caller = _caller(hub, f"nul-{case}")
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
    answer = caller.send("POST", body.encode(), _headers(caller, caller.session))
    assert answer.status == 200, answer.raw[:300]
    assert "error" in answer.body or answer.body["result"]["isError"]
    rows = _audit(hub.db, caller.name)
    assert len(rows) == 1 and rows[0][0] == tool and rows[0][2] in ("error", "refused")
