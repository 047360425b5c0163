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
    for methods in document["paths"].values():
        for operation in methods.values():
            if "requestBody" in operation:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                assert schema["additionalProperties"] is False
