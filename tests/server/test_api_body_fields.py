"""A JSON API write body holds only the fields its endpoint takes, on a real ``aletheia-server``:
a field it does not take (``scope_tier`` for ``scopeTier``) is refused, never left unread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e

RULE_FIELDS = "then, when, scopeTier, scopeName, evidence_memory_ids, evidence_fact_ids"
EMPTY = "There are no memories yet."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("api-fields")) as s:
        yield s


def refused(server: RunningServer, method: str, path: str, body: Any = None) -> str:
    reply = server.api(method, path, body)
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "invalid_input"
    message: str = reply.json()["error"]["message"]
    assert "\n" not in message
    return message


def test_a_snake_case_scope_is_refused_naming_the_fields_taken(server: RunningServer) -> None:
    body = {"then": "t", "when": "w", "scope_tier": "situation", "scope_name": "n"}
    assert refused(server, "POST", "/api/rules", body) == (
        'Unknown fields "scope_tier", "scope_name" in the request body: POST /api/rules takes'
        f" {RULE_FIELDS}."
    )
    assert server.api("GET", "/api/rules").json()["rules"] == []  # nothing was saved
    taken = {"then": "t", "when": "w", "scopeTier": "situation", "scopeName": "n"}
    saved = server.api("POST", "/api/rules", taken)
    assert saved.status == 201, saved.body
    assert (saved.json()["rule"]["scope_tier"], saved.json()["rule"]["scope_name"]) == (
        "situation",
        "n",
    )


def test_every_write_refuses_a_field_it_does_not_take(server: RunningServer) -> None:
    assert refused(server, "POST", "/api/memories", {"text": "x", "bogus": 1}) == (
        'Unknown field "bogus" in the request body: POST /api/memories takes text, title,'
        " project, type, pinned, facts, files."
    )
    assert server.api("GET", "/api/memories?project=*&query=x").json()["empty_reason"] == EMPTY
    memory = server.api("POST", "/api/memories", {"text": "kept", "project": "p"}).json()
    memory_id = memory["memory"]["id"]
    writes: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", f"/api/memories/{memory_id}/dismiss", {"reason": "r", "why": "w"}),
        ("POST", f"/api/memories/{memory_id}/pin", {"pin": False}),
        ("POST", "/api/facts", {"subject": "s", "predicate": "p", "object": "o", "memory": 1}),
        ("PUT", "/api/work-state/todo", {"items": ["a"], "version": "x"}),
        ("POST", "/api/work-state/todo/rename", {"to": "b", "items": ["a"], "name": "c"}),
    ]
    for method, path, body in writes:
        unknown = [name for name in body if name in ("why", "pin", "memory", "version", "name")]
        assert f'Unknown field "{unknown[0]}" in the request body: {method} ' in refused(
            server, method, path, body
        )
    restore = refused(server, "POST", f"/api/memories/{memory_id}/restore", {"reason": "r"})
    assert restore == (
        'Unknown field "reason" in the request body: POST'
        " /api/memories/{memory_id}/restore takes no body fields."
    )
    assert server.api("GET", f"/api/memories/{memory_id}").json()["pinned"] is False
    assert server.api("GET", "/api/work-state").json()["lists"] == []
    assert server.api("POST", f"/api/memories/{memory_id}/restore").status == 200


def test_the_openapi_document_says_no_other_field_is_taken(server: RunningServer) -> None:
    document = server.api("GET", "/api/openapi.json").json()
    assert "a key of the body (at any depth) given twice" in document["info"]["description"]
    for methods in document["paths"].values():
        for operation in methods.values():
            if "requestBody" in operation:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                assert schema["additionalProperties"] is False


def raw_refused(server: RunningServer, method: str, path: str, body: str) -> str:
    """``refused`` for a body sent as written (``json.dumps`` cannot give a key twice)."""
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    reply = server.request(method, path, body, headers)
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "invalid_input"
    message: str = reply.json()["error"]["message"]
    return message


def test_a_field_given_twice_is_refused_naming_it(server: RunningServer) -> None:
    """``{"text": "a", "text": "b"}`` saved "b" (the last one given), where a proxy or a log
    that reads the first sees "a": it is refused, as a sync body that gives a key twice is."""
    rules = server.api("GET", "/api/rules").json()["rules"]
    twice = '{"text": "first draft", "text": "second draft"}'
    assert raw_refused(server, "POST", "/api/memories", twice) == (
        'Repeated field "text" in the request body: POST /api/memories takes each field once.'
    )
    two = '{"then": "t", "when": "w", "then": "u", "when": "v", "scopeTier": "global"}'
    assert raw_refused(server, "POST", "/api/rules", two) == (
        'Repeated fields "then", "when" in the request body: POST /api/rules takes each field once.'
    )
    # An object inside the body too: a list item's task.
    item = '{"items": [{"task": "a", "done": false, "task": "b"}]}'
    assert raw_refused(server, "PUT", "/api/work-state/todo", item) == (
        'Repeated field "task" in the request body: PUT /api/work-state/{name} takes each field'
        " once."
    )
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    told = raw_refused(server, "POST", "/api/memories", f'{{"{secret}": 1, "{secret}": 2}}')
    assert told.startswith('Repeated field "[REDACTED]" in the request body: ')
    assert server.api("GET", "/api/memories?query=draft&project=*").json()["memories"] == []
    assert server.api("GET", "/api/rules").json()["rules"] == rules
    assert server.api("GET", "/api/work-state/todo").status == 404


def test_every_write_refuses_a_body_key_given_twice(server: RunningServer) -> None:
    """Each operation that reads a body, with or without fields of its own (a pin's)."""
    document = server.api("GET", "/api/openapi.json").json()
    checked = 0
    for path, methods in document["paths"].items():
        for method in methods:
            if method == "get":
                continue
            address = path.replace("{memory_id}", "1").replace("{fact_id}", "1")
            address = address.replace("{rule_id}", "r_1").replace("{name}", "todo")
            message = raw_refused(server, method.upper(), address, '{"a": 1, "a": 2}')
            assert message == (
                f'Repeated field "a" in the request body: {method.upper()} {path} takes each'
                " field once."
            )
            checked += 1
    assert checked >= 8
