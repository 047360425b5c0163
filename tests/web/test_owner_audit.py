"""The owner's UI over a store that agents and capture hooks filled, in a real Chromium: stored
text cannot reorder what the owner reads, and a dismissed memory says why where it is listed,
with the memory its reason names one click away."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import axe_violations, mcp_tool
from tests.web.test_memories_page import save

pytestmark = pytest.mark.e2e

HOOK = Path(sys.executable).parent / "aletheia-hook"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("web-owner-audit")
    (found / "shop" / ".git").mkdir(parents=True)  # a work tree, as the hooks expect
    return found


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RunningServer]:
    with running_server(root) as running:
        yield running


def hook(root: Path, event: str, payload: dict[str, object]) -> None:
    """A real ``aletheia-hook`` run by Claude Code in ``root/shop``, on the server's store."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(root / "home"),
        "ALETHEIA_DATA_DIR": str(root / "data"),
        "ALETHEIA_TOOL": "claude-code",
    }
    body = json.dumps({"cwd": str(root / "shop"), **payload})
    done = subprocess.run(
        [str(HOOK), event], input=body, capture_output=True, text=True, env=env, timeout=20
    )
    assert (done.returncode, done.stderr) == (0, ""), done


def test_a_bidi_override_in_a_title_or_path_is_shown_not_obeyed(
    server: RunningServer, page: Page
) -> None:
    # U+202E reverses what follows: "src/\u202eyp.evil.txt" would read as src/txt.live.py.
    memory_id = save(
        server,
        text="Fixed the refund \u202eno end of override",
        title="Refund \u202efdp.exe",
        files=["src/\u202eyp.evil.txt"],
    )
    page.goto(server.url + "/")
    row = page.locator(f'#memories li[data-id="{memory_id}"]')
    expect(row.get_by_role("link")).to_have_text(f"#{memory_id} Refund \\u202efdp.exe")
    page.goto(f"{server.url}/memories/{memory_id}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"#{memory_id} Refund \\u202efdp.exe")
    expect(page.locator("pre.text")).to_have_text("Fixed the refund \\u202eno end of override")
    expect(page.locator("main li code")).to_have_text("src/\\u202eyp.evil.txt")
    # The link still searches for the stored path itself.
    page.locator("main li code").click()
    expect(page.locator(f'#memories li[data-id="{memory_id}"]')).to_be_visible()


def test_a_resumed_sessions_old_summary_says_why_it_was_dismissed_and_links_the_new_one(
    server: RunningServer, root: Path, page: Page
) -> None:
    base = {"session_id": "resumed"}
    hook(root, "session-start", base)
    hook(root, "user-prompt", {**base, "prompt": "refactor the checkout flow"})
    edit = {"file_path": str(root / "shop" / "src" / "checkout.py")}
    edit |= {"old_string": "x", "new_string": "y"}
    hook(root, "post-tool-use", {**base, "tool_name": "Edit", "tool_input": edit})
    hook(root, "session-end", base)
    hook(root, "session-start", {**base, "source": "resume"})
    hook(root, "user-prompt", {**base, "prompt": "and update the docs"})
    write = {"file_path": str(root / "shop" / "docs" / "checkout.md"), "content": "# Checkout\n"}
    hook(root, "post-tool-use", {**base, "tool_name": "Write", "tool_input": write})
    hook(root, "session-end", base)

    page.goto(server.url + "/?dismissed=1&kind=summary")
    [old] = page.locator("#memories li[data-id]").all()
    expect(old).to_contain_text("Session: refactor the checkout flow")
    reason = re.compile(r"the session went on: #(\d+) sums it up")
    expect(old).to_contain_text(reason)
    text = old.inner_text()
    found = reason.search(text)
    assert found, text
    newer = found.group(1)
    assert axe_violations(page) == []
    old.get_by_role("link", name=f"#{newer}", exact=True).click()
    expect(page).to_have_url(f"{server.url}/memories/{newer}")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Session: refactor")
    expect(page.locator(".props")).to_contain_text("summary")
    expect(page.locator("main")).to_contain_text("docs/checkout.md")


def test_the_reason_on_a_dismissed_memorys_page_links_the_memory_it_names(
    server: RunningServer, page: Page
) -> None:
    kept = save(server, text="Vacuum is automatic since Postgres 16", title="Autovacuum")
    gone = save(server, text="Run vacuum by hand every night", title="Manual vacuum")
    reason = f'replaced by #{kept} "autovacuum" <b>'
    mcp_tool(server.mcp_url, "dismiss_memory", {"id": gone, "reason": reason})
    page.goto(f"{server.url}/memories/{gone}")
    expect(page.locator(".props")).to_contain_text(f'replaced by #{kept} "autovacuum" <b>')
    page.locator(".props").get_by_role("link", name=f"#{kept}", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Autovacuum")
