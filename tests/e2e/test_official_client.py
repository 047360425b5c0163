"""The official MCP Python SDK (mcp 2.3.0) drives the real ``aletheia-mcp`` over stdio.

Both APIs of /work/shared/clients/python_client.py: the low-level ``ClientSession`` (plain
``initialize``) and the high-level ``Client(mode="auto")``, which probes ``server/discover``
first and then speaks 2026-07-28 (stateless) to it; ``mode="legacy"`` still gets 2025-11-25.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client import Client
from mcp.types import CallToolResult, Implementation, TextContent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SERVER = Path(sys.executable).parent / "aletheia-mcp"
TOOL_NAMES = {
    "search",
    "timeline",
    "get_observations",
    "session_start_context",
    "fact_history",
    "list_rules",
    "work_state_read",
    "save_memory",
    "add_rule",
    "confirm_rule",
    "dismiss_memory",
    "restore_memory",
    "work_state_write",
}
DATE = r"\d{4}-\d\d-\d\d"
MEMORY = "Use pnpm, not npm, in the shop repo"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_params(tmp_path: Path) -> StdioServerParameters:
    project = tmp_path / "shop"
    project.mkdir()
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "ALETHEIA_CWD": str(project)}
    return StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path))


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def ok(session: Any, name: str, arguments: dict[str, Any]) -> str:
    result = await session.call_tool(name, arguments)
    assert result.is_error is False, text(result)
    return text(result)


async def check_all_13_tools(session: Any, caller: str) -> set[str]:
    """Call every tool with valid arguments, in the reference's order of use."""
    called: set[str] = set()

    async def run(name: str, arguments: dict[str, Any]) -> str:
        called.add(name)
        return await ok(session, name, arguments)

    empty = await run("session_start_context", {"limit": 5})
    assert "# Memory for shop" in empty
    saved = await run(
        "save_memory",
        {
            "text": MEMORY,
            "title": MEMORY,
            "type": "decision",
            "pinned": True,
            "facts": [{"subject": "shop", "predicate": "package manager", "object": "pnpm"}],
            "files": ["package.json"],
        },
    )
    assert saved == "Saved as #1 in shop."
    assert await ok(session, "save_memory", {"text": MEMORY, "title": MEMORY}) == (
        "Already saved as #1."
    )
    found = await run("search", {"query": "pnpm", "limit": 5})
    assert re.search(rf"#1 {DATE} \[decision\] {MEMORY}  \(shop, {caller}, pinned\)", found)
    assert "</aletheia-memory>" in found
    around = await run("timeline", {"anchor": 1, "before": 1, "after": 1})
    assert re.search(rf"→ #1 {DATE}T\d\d:\d\d \[decision\] {MEMORY}", around)
    full = await run("get_observations", {"ids": [1, 999]})
    assert f"#1 [decision] {MEMORY}" in full
    assert f"source: {caller}" in full
    history = await run("fact_history", {"subject": "shop"})
    assert 'Current facts about "shop":' in history
    assert "pnpm" in history
    rule = await run(
        "add_rule",
        {
            "then": "Run the tests before you commit",
            "when": "you are about to commit",
            "evidence_memory_ids": [1],
        },
    )
    match = re.fullmatch(
        r"Rule saved \((r_[0-9a-f]+)\)\. The owner syncs rules to tools from the Rules page\.",
        rule,
    )
    assert match, rule
    rule_id = match.group(1)
    rules = await run("list_rules", {})
    assert re.search(
        rf"- When you are about to commit: Run the tests before you commit  \[everywhere\]"
        rf"  \(id {rule_id}, added {DATE}, source: {caller}, last confirmed {DATE}\)",
        rules,
    )
    confirmed = await run("confirm_rule", {"id": rule_id})
    assert re.fullmatch(
        rf"Confirmed rule {rule_id} on {DATE}\. It stays as it is; only the date it was last"
        r" checked changed\.",
        confirmed,
    )
    assert await run("dismiss_memory", {"id": 1, "type": "memory", "reason": "duplicate"}) == (
        "Dismissed memory #1. It is hidden from search and context; restore_memory undoes this."
    )
    assert await run("restore_memory", {"id": 1, "type": "memory"}) == "Restored memory #1."
    items = ["ship docs", {"task": "test hooks", "done": False}]
    assert await run("work_state_write", {"list": "todo", "items": items}) == (
        'Saved list "todo" with 2 item(s) as #2.'
    )
    listed = (await run("work_state_read", {"list": "todo"})).splitlines()
    # Stored text comes back inside the recall block (DESIGN.md section 9).
    assert listed[0] == "<aletheia-memory>"
    assert listed[-1] == "</aletheia-memory>"
    assert '["ship docs",{"task":"test hooks","done":false}]' in listed
    failed = await session.call_tool("search", {})
    assert failed.is_error is True
    assert text(failed) == "query is required."
    return called


async def test_client_session_initializes_lists_and_calls_all_13_tools(tmp_path):
    info = Implementation(name="sdk-session", version="1.0")
    async with (
        stdio_client(server_params(tmp_path)) as (read, write),
        ClientSession(read, write, client_info=info) as session,
    ):
        await session.initialize()
        assert session.protocol_version == "2025-11-25"
        assert session.server_info is not None
        assert session.server_info.name == "aletheia"
        listed = await session.list_tools()
        assert listed.next_cursor is None
        assert {tool.name for tool in listed.tools} == TOOL_NAMES
        assert await check_all_13_tools(session, "sdk-session") == TOOL_NAMES


async def test_high_level_client_negotiates_2026_07_28_quickly_and_calls_all_13_tools(
    tmp_path,
):
    params = server_params(tmp_path)
    started = time.monotonic()
    info = Implementation(name="sdk-client", version="1.0")
    async with Client(params, mode="auto", client_info=info) as client:
        connected = time.monotonic() - started
        assert client.protocol_version == "2026-07-28"
        assert client.server_info is not None
        assert client.server_info.name == "aletheia"
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOL_NAMES
        for tool in listed.tools:
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is (
                tool.name
                in {
                    "search",
                    "timeline",
                    "get_observations",
                    "session_start_context",
                    "fact_history",
                    "list_rules",
                    "work_state_read",
                }
            )
        assert await check_all_13_tools(client, "sdk-client") == TOOL_NAMES
    elapsed = time.monotonic() - started
    # The SDK waits DISCOVER_TIMEOUT_SECONDS (10 s) for a silent server; an answer is quick.
    assert connected < 3.0
    assert elapsed < 5.0


async def test_arguments_as_models_fill_them_work_over_stdio(tmp_path):
    """Blank optional arguments are the defaults, an array may come as its JSON text, and every
    id of the widest timeline is fetched in one call (the client validates each result)."""
    async with (
        stdio_client(server_params(tmp_path)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()  # the client then checks results against outputSchema
        for number in range(1, 102):
            await ok(session, "save_memory", {"text": f"step {number}", "type": ""})
        facts = [{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL"}]
        files = '["src/db.py", "src/app.py"]'
        await ok(session, "save_memory", {"text": "db", "facts": facts, "files": files})
        shown = await ok(session, "timeline", {"anchor": 51, "before": 50, "after": 50})
        ids = [int(number) for number in re.findall(r"#(\d+) ", shown)]

        fetched = await ok(session, "get_observations", {"ids": ids})
        history = await ok(session, "fact_history", {"subject": "payments-api", "predicate": ""})
        found = await ok(session, "search", {"file": "src/app.py", "order": "", "limit": ""})

    assert len(ids) == 101
    assert fetched.count("\n---\n") == 100
    assert "[note] step 1\n" in fetched
    assert "- fact #1 payments-api · database = PostgreSQL" in history
    assert "\n#102 " in found
