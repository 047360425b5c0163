"""Structured results of the 7 read tools: outputSchema and structuredContent from 2025-06-18 on,
the text block the same byte for byte in every version, nothing new for 2024-11-05/2025-03-26."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from aletheia_mem.server.mcp import McpSession, handle_payload
from aletheia_mem.tools.app import AppContext
from tests.conftest import FakeClock

READ_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("session_start_context", {}),
    ("search", {"query": "pnpm"}),
    ("search", {"query": "nothing-like-this"}),
    ("search", {"file": "package.json"}),
    ("timeline", {"anchor": 1}),
    ("timeline", {"anchor": 999}),
    ("get_observations", {"ids": [1, 2, 999]}),
    ("get_observations", {"ids": [999]}),
    ("fact_history", {"subject": "shop", "include_superseded": True}),
    ("fact_history", {"subject": "shop", "as_of": "2026-01-01"}),
    ("fact_history", {"subject": "unknown"}),
    ("list_rules", {}),
    ("work_state_read", {"list": "todo"}),
    ("work_state_read", {"list": "missing"}),
]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _ask(session: McpSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = handle_payload(session, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert isinstance(reply, dict) and "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def _session(app: AppContext, version: str) -> McpSession:
    session = McpSession(app=app)
    _ask(session, "initialize", {"protocolVersion": version, "capabilities": {}})
    return session


def _fill(app: AppContext) -> None:
    session = McpSession(app=app)
    writes: list[tuple[str, dict[str, Any]]] = [
        (
            "save_memory",
            {
                "text": "Use pnpm, not npm",
                "type": "decision",
                "pinned": True,
                "files": ["package.json"],
                "facts": [{"subject": "shop", "predicate": "pm", "object": "npm"}],
            },
        ),
        (
            "save_memory",
            {
                "text": "Switched to pnpm",
                "facts": [{"subject": "shop", "predicate": "pm", "object": "pnpm"}],
            },
        ),
        ("add_rule", {"then": "Run the tests before you commit"}),
        ("work_state_write", {"list": "todo", "items": ["ship", 2, True, {"done": False}]}),
    ]
    for name, arguments in writes:
        assert (
            _ask(session, "tools/call", {"name": name, "arguments": arguments})["isError"] is False
        )


@pytest.fixture
def filled(app: AppContext, clock: FakeClock) -> AppContext:
    _fill(app)
    clock.advance(1)  # read a millisecond on: pnpm, saved in the same one as npm, holds from it
    return app


def _schemas(session: McpSession) -> dict[str, Any]:
    tools = _ask(session, "tools/list", {})["tools"]
    return {tool["name"]: tool.get("outputSchema") for tool in tools}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_every_read_result_carries_structured_content_its_output_schema_accepts(
    filled: AppContext, version: str
) -> None:
    session = _session(filled, version)
    schemas = _schemas(session)
    for name, arguments in READ_CALLS:
        result = _ask(session, "tools/call", {"name": name, "arguments": arguments})
        assert result["isError"] is False, (name, result)
        Draft202012Validator.check_schema(schemas[name])
        errors = list(Draft202012Validator(schemas[name]).iter_errors(result["structuredContent"]))
        assert errors == [], (name, arguments, errors)


def test_the_text_block_is_the_same_in_every_era(filled: AppContext) -> None:
    oldest, newest = _session(filled, "2024-11-05"), _session(filled, "2025-11-25")
    stateless = McpSession(app=filled)
    for name, arguments in READ_CALLS:
        params = {"name": name, "arguments": arguments}
        plain = _ask(oldest, "tools/call", params)
        assert plain == {"content": plain["content"], "isError": False}
        assert _ask(newest, "tools/call", params)["content"] == plain["content"]
        modern = _ask(stateless, "tools/call", {**params, "_meta": MODERN_META})
        assert modern["content"] == plain["content"]
        assert "structuredContent" in modern


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_older_versions_see_no_output_schema(app: AppContext, version: str) -> None:
    assert set(_schemas(_session(app, version)).values()) == {None}


def test_exactly_the_7_read_tools_declare_an_output_schema(app: AppContext) -> None:
    schemas = _schemas(_session(app, "2025-11-25"))
    declared = {name for name, schema in schemas.items() if schema is not None}
    assert declared == {name for name, _ in READ_CALLS}


def test_structured_search_has_ranks_facts_with_validity_and_the_recall_notice(
    filled: AppContext,
) -> None:
    session = _session(filled, "2025-11-25")
    params = {"name": "search", "arguments": {"query": "pnpm"}}
    found = _ask(session, "tools/call", params)["structuredContent"]
    assert found["notice"].startswith("Recalled memory from earlier sessions.")
    assert [memory["rank"] for memory in found["memories"]] == [1, 2]
    assert {memory["id"] for memory in found["memories"]} == {1, 2}
    assert found["memories"][0]["created_at"] == "2026-10-29T19:46:45.563Z"
    current = [fact for fact in found["facts"] if fact["current"]]
    assert [(fact["object"], "valid_to" in fact) for fact in current] == [("pnpm", False)]


def test_an_error_result_carries_no_structured_content(app: AppContext) -> None:
    session = _session(app, "2025-11-25")
    result = _ask(session, "tools/call", {"name": "search", "arguments": {}})
    assert result == {"content": [{"type": "text", "text": "query is required."}], "isError": True}


def test_a_search_head_lists_its_rank_last_and_a_later_page_counts_on(
    filled: AppContext,
) -> None:
    session = _session(filled, "2025-11-25")
    # The fact line comes first and counts in the offset: 2 skips it and the first memory.
    params = {"name": "search", "arguments": {"query": "pnpm", "offset": 2}}
    found = _ask(session, "tools/call", params)["structuredContent"]
    assert found["facts"] == []
    keys = ["id", "project", "type", "title", "tool", "pinned", "created_at", "rank"]
    assert [list(memory) for memory in found["memories"]] == [keys]
    assert [memory["rank"] for memory in found["memories"]] == [2]
