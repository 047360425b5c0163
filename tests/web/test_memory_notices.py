"""A memory page's notices in a real Chromium: only this browser's own action shows one, and a
Dismiss from a page an agent made stale neither replaces the agent's reason nor offers an Undo
of a dismissal the page did not make."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import mcp_tool
from tests.web.test_memories_page import save

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-notices")) as running:
        yield running


def reason_of(server: RunningServer, memory: int) -> str | None:
    reply = server.api("GET", f"/api/memories/{memory}")
    assert reply.status == 200, reply.body
    reason: str | None = reply.json()["dismiss_reason"]
    return reason


@pytest.mark.parametrize("done", ["restore", "dismiss", "pin", "unpin", "not-dismissed"])
def test_a_done_notice_in_a_link_made_elsewhere_shows_nothing(
    server: RunningServer, page: Page, done: str
) -> None:
    memory = save(server, text=f"A link made elsewhere says {done}")
    if done == "dismiss":  # each notice's state holds: only the signature is missing
        mcp_tool(server.mcp_url, "dismiss_memory", {"type": "memory", "id": memory})
    if done == "pin":
        server.api("POST", f"/api/memories/{memory}/pin", {"pinned": True})
    page.goto(f"{server.url}/memories/{memory}?done={done}")
    expect(page.locator("h1")).to_contain_text(f"#{memory}")
    expect(page.get_by_role("status")).to_have_count(0)
    expect(page.get_by_role("button", name="Undo")).to_have_count(0)


def test_the_pages_own_restore_still_shows_its_notice_and_undo(
    server: RunningServer, page: Page
) -> None:
    memory = save(server, text="Restored from this page")
    mcp_tool(server.mcp_url, "dismiss_memory", {"type": "memory", "id": memory, "reason": "old"})
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} restored.")
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} dismissed.")
    assert reason_of(server, memory) == "old"


def test_a_stale_dismiss_keeps_the_agents_reason_and_offers_no_undo(
    server: RunningServer, page: Page
) -> None:
    memory = save(server, text="Dismissed by an agent meanwhile")
    page.goto(f"{server.url}/memories/{memory}")
    arguments = {"type": "memory", "id": memory, "reason": "the agent found it wrong"}
    mcp_tool(server.mcp_url, "dismiss_memory", arguments)
    page.get_by_label("Reason").fill("mine")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Nothing to dismiss: memory #{memory} is already dismissed."
    )
    expect(page.get_by_role("button", name="Undo")).to_have_count(0)
    expect(page.locator(".props")).to_contain_text("the agent found it wrong")
    assert reason_of(server, memory) == "the agent found it wrong"
    # Reloaded once restored, the address says nothing that is no longer true.
    mcp_tool(server.mcp_url, "restore_memory", {"type": "memory", "id": memory})
    page.reload()
    expect(page.get_by_role("status")).to_have_count(0)
