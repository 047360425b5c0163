"""The official MCP client over stdio, on each store (``ALETHEIA_HUB_DB``): a fact whose
successor is written for a later time is the current one until then, in fact_history's and
search's structuredContent and text, in session_start_context, and in list_rules's re-check."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from tests.e2e.test_official_client import text
from tests.stores import store_target

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SERVER = Path(sys.executable).parent / "aletheia-mcp"
IN_FORCE = "fact #1 svc · db = PG 16  (shop, since 2020-01-01; #2 from 2999-01-01)"
UPCOMING = "fact #2 svc · db = PG 17  (shop, upcoming from 2999-01-01)"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _current(result: CallToolResult) -> dict[int, bool]:
    assert result.structured_content is not None
    return {fact["id"]: fact["current"] for fact in result.structured_content["facts"]}


async def _calls(params: StdioServerParameters) -> dict[str, CallToolResult]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for value, start in (("PG 16", "2020-01-01"), ("PG 17", "2999-01-01")):
            fact = {"subject": "svc", "predicate": "db", "object": value, "valid_from": start}
            text(await session.call_tool("save_memory", {"text": value, "facts": [fact]}))
        rule = {"then": "Use PG 16 features only", "evidence_fact_ids": [1]}
        text(await session.call_tool("add_rule", rule))
        asked: dict[str, tuple[str, dict[str, Any]]] = {
            "now": ("fact_history", {"subject": "svc"}),
            "all": ("fact_history", {"subject": "svc", "include_superseded": True}),
            "search": ("search", {"query": "svc db"}),
            "context": ("session_start_context", {}),
            "rules": ("list_rules", {}),
        }
        return {key: await session.call_tool(name, args) for key, (name, args) in asked.items()}


async def test_the_value_in_force_is_current_in_every_read_tool(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    env = {
        "HOME": str(tmp_path),
        "ALETHEIA_HUB_DB": str(store_target(request, store_kind, tmp_path)),
        "ALETHEIA_CWD": str(project),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a worktree's sources, when tested
    }
    found = await _calls(StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path)))

    assert f'Current facts about "svc":\n- {IN_FORCE}\n' in text(found["now"])
    assert _current(found["now"]) == {1: True}
    assert f"- {UPCOMING}\n- {IN_FORCE}\n" in text(found["all"])
    assert _current(found["all"]) == {2: False, 1: True}
    assert f"\n{IN_FORCE}\n" in text(found["search"])
    assert _current(found["search"]) == {1: True}
    assert f"\n- {IN_FORCE}\n" in text(found["context"])
    assert _current(found["context"]) == {1: True}
    assert "re-check" not in text(found["rules"])
    assert found["rules"].structured_content is not None
    assert "recheck" not in found["rules"].structured_content["rules"][0]
