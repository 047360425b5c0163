"""The search audit's findings through the real ``aletheia-mcp`` over stdio, driven by the
official MCP Python SDK: a realistic shop store saved with ``save_memory``, then the queries a
coding agent sends (tests/tools/test_search_user_audit.py has each case on both stores)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SERVER = Path(sys.executable).parent / "aletheia-mcp"

# (key, title, text, extra save_memory arguments)
STORE: list[tuple[str, str, str, dict[str, Any]]] = [
    ("pnpm", "Use pnpm, not npm, in the shop repo", "The lockfile is pnpm-lock.yaml.", {}),
    (
        "rounding",
        "Fix rounding in calculateOrderTotal",
        "src/cart/checkout.py rounded each line before summing; totals were off by a cent.",
        {"type": "bugfix", "files": ["src/cart/checkout.py"]},
    ),
    (
        "timezone",
        "Timezone bug in the order export",
        "Order export used naive datetimes; now every timestamp is UTC (zoneinfo).",
        {"type": "bugfix"},
    ),
    (
        "vite",
        "Moved from webpack to Vite",
        "The build time went from 90 s to 12 s after the move to Vite.",
        {"type": "change"},
    ),
    (
        "java",
        "Billing service runs on Java 21",
        "The billing service was upgraded to Java 21 (virtual threads).",
        {"facts": [{"subject": "billing-service", "predicate": "runtime", "object": "Java 21"}]},
    ),
    (
        "bundle",
        "Checkout widget bundle size",
        "The checkout widget's JavaScript bundle is 240 kB; lazy-load the map.",
        {},
    ),
    (
        "strasse",
        "Adressen ohne Hausnummer",
        "Die Straße fehlt in der Lieferadresse, wenn der Kunde keine Hausnummer angibt.",
        {"type": "gotcha"},
    ),
    (
        "django",
        "Bump Django to v4.2.11",
        "Django v4.2.11 fixes the CSRF regression of v4.2.10.",
        {"type": "change"},
    ),
    (
        "python",
        "Pin Python 3.11.7 in CI",
        "3.11.8 broke the C extension of our ujson fork.",
        {"type": "decision"},
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: CallToolResult) -> str:
    assert result.is_error is False
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_search_finds_what_a_developer_asks_for_over_stdio(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "ALETHEIA_CWD": str(project)}
    params = StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path))
    keys: dict[int, str] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for key, title, text, extra in STORE:
            arguments = {"title": title, "text": text, **extra}
            saved = text_of(await session.call_tool("save_memory", arguments))
            match = re.fullmatch(r"Saved as #(\d+) in shop\.", saved)
            assert match, saved
            keys[int(match.group(1))] = key

        async def first_line(query: str) -> str:
            answer = text_of(await session.call_tool("search", {"query": query}))
            assert not answer.startswith("No matches."), (query, answer)
            line = answer.split("\n")[3]  # after the recall block's tag, preamble and blank
            found = re.match(r"#(\d+) ", line)
            return keys[int(found.group(1))] if found else line

        assert await first_line("time zone") == "timezone"
        assert await first_line("JavaScript") == "bundle"  # not the fact "runtime = Java 21"
        assert await first_line("Strasse") == "strasse"
        assert await first_line("4.2.11") == "django"
        assert await first_line("v3.11.7") == "python"
        assert await first_line("calculateOrderTotal") == "rounding"
