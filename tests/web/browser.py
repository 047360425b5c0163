"""Real Chromium (Debian's ``chromium``) driven by Playwright, and the official MCP client.

Nothing is downloaded at test time: the browser is launched by its path, and axe-core comes from
``tests/web/node_modules`` (``make web-test-deps`` installs both).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
from mcp.types import TextContent
from playwright.sync_api import Browser, Page, Playwright

from tests.e2e.test_http_python_client import session_for

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 5000
MEMORY_ID = re.compile(r"#(\d+)\b")


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
    )


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """The serious and critical violations axe-core finds on the page as it is now."""
    page.evaluate(AXE.read_text(encoding="utf-8"))  # evaluated by DevTools: the CSP allows it
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document)).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target)}))"
    )
    return found


def mcp_tool(mcp_url: str, tool: str, arguments: dict[str, Any], token: str | None = None) -> str:
    """Call one tool with the official MCP Python client; returns its text (errors too)."""

    async def run() -> str:
        async with session_for(mcp_url, token) as session:
            await session.initialize()
            result = await session.call_tool(tool, arguments)
        block = result.content[0]
        assert isinstance(block, TextContent)
        return block.text

    # Playwright's sync API keeps an event loop in this thread: the client runs in its own.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result(timeout=30)


def memory_ids(text: str) -> list[int]:
    """The memory ids of a search or timeline answer, in its order."""
    return [int(found) for found in MEMORY_ID.findall(text)]
