"""Write to tools, round 3: a write needs the page's CSRF token, and a file its tool would cut
short is shown but not offered."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.e2e.http_server import RunningServer
from tests.web.browser import mcp_tool

pytestmark = pytest.mark.e2e


def test_write_to_tools_is_refused_without_the_csrf_token_or_from_another_site(
    server: RunningServer, root: Path
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Keep pull requests small"})
    shop = (root / "shop").resolve()
    key = "repo:" + hashlib.sha256(str(shop).encode()).hexdigest()[:16]
    body = f"write%3A{key}%3Aclaude-code=1&csrf=forged"
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for origin in (server.url, "https://evil.example"):
        reply = server.request("POST", "/rules/sync", body, {**form, "Origin": origin})
        assert reply.status == 403
    assert not (shop / "CLAUDE.md").exists()


def test_a_windsurf_file_too_long_for_windsurf_is_shown_but_not_offered(
    server: RunningServer, root: Path
) -> None:
    for n in range(10):
        mcp_tool(server.mcp_url, "add_rule", {"then": f"Long rule {n} " + "x" * 700})
    page = server.request("GET", "/rules/sync").body.decode("utf-8")
    windsurf = page.split(".windsurf/rules/aletheia.md</code>", 1)[1].split("</fieldset>", 1)[0]
    assert "Not offered:" in windsurf
    assert "reads only the first 6,000" in windsurf
    assert 'type="checkbox"' not in windsurf
    claude = page.split("shop/CLAUDE.md</code>", 1)[1].split("</fieldset>", 1)[0]
    assert 'type="checkbox"' in claude
