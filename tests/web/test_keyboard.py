"""Every page from the keyboard alone: Tab reaches each control in order with a visible focus
ring, and Enter or Space does what a click does; each result is checked again through MCP."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.hub.helpers import Hub, running_hub
from tests.web.browser import mcp_tool
from tests.web.keyboard import tab_through, tab_to

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("web-keyboard")
    (root / "shop" / ".git").mkdir(parents=True)
    (root / "home").mkdir()
    with running_server(root, env={"HOME": str(root / "home")}) as running:
        yield running


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with running_hub(tmp_path_factory.mktemp("web-keyboard-hub") / "hub.db") as running:
        yield running


def test_the_memories_page_searches_on_enter_in_place_and_back_returns(
    server: RunningServer, page: Page
) -> None:
    mcp_tool(server.mcp_url, "save_memory", {"text": "Cache keys carry the tenant id"})
    page.goto(server.url + "/")
    tab_through(page)
    tab_to(page, page.get_by_role("searchbox"))
    page.keyboard.type("tenant")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/\?q=tenant"))
    expect(page.locator("#results-label")).to_have_text("Search results.")
    expect(page.locator("#memories")).to_contain_text("Cache keys carry the tenant id")
    expect(page.get_by_role("searchbox")).to_be_focused()  # no page load took the focus
    page.go_back()
    expect(page.locator("#results-label")).to_contain_text("Newest first")


def test_facts_from_the_keyboard(server: RunningServer, page: Page) -> None:
    facts = [{"subject": "api", "predicate": "runtime", "object": "Python 3.12"}]
    mcp_tool(server.mcp_url, "save_memory", {"text": "The API runs 3.12", "facts": facts})
    page.goto(server.url + "/facts")
    tab_through(page)
    tab_to(page, page.get_by_role("link", name="api", exact=True))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="History of “api”")).to_be_visible()
    tab_through(page)
    tab_to(page, page.get_by_label("Predicate"))
    page.keyboard.type("runtime")
    page.keyboard.press("Enter")  # submits the form
    expect(page.locator("section.track")).to_have_count(1)
    expect(page.get_by_label("Predicate")).to_have_value("runtime")
    assert "Python 3.12" in mcp_tool(server.mcp_url, "fact_history", {"subject": "api"})


def test_rules_from_the_keyboard(server: RunningServer, page: Page) -> None:
    page.goto(server.url + "/rules")
    tab_through(page)
    tab_to(page, page.get_by_label("Rule", exact=True))
    page.keyboard.type("Squash before merging")
    tab_to(page, page.get_by_role("button", name="Add"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Rule added.")
    assert "Squash before merging" in mcp_tool(server.mcp_url, "list_rules", {})
    tab_through(page)
    row = page.locator("tr.rule", has_text="Squash before merging")
    tab_to(page, row.get_by_role("button", name="Confirm"))
    page.keyboard.press("Space")
    expect(page.get_by_role("status")).to_have_text("Rule confirmed.")
    tab_to(page, page.get_by_role("link", name="Write to tools…"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Write rules to tools")).to_be_visible()
    tab_through(page)
    box = page.get_by_role("checkbox").first
    before = box.is_checked()
    tab_to(page, box)
    page.keyboard.press("Space")
    assert box.is_checked() is not before
    page.goto(server.url + "/rules")
    row = page.locator("tr.rule", has_text="Squash before merging")
    tab_to(page, row.get_by_role("button", name="Disable"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Rule disabled.")
    assert "Squash before merging" not in mcp_tool(server.mcp_url, "list_rules", {})


def test_lists_from_the_keyboard(server: RunningServer, page: Page) -> None:
    page.goto(server.url + "/lists")
    tab_through(page)
    tab_to(page, page.get_by_label("List name"))
    page.keyboard.type("release")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Items, one per line")).to_be_focused()
    page.keyboard.type("tag v2\npublish notes")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save list")).to_be_focused()
    page.keyboard.press("Space")
    expect(page.get_by_role("status")).to_have_text("List saved.")
    read = mcp_tool(server.mcp_url, "work_state_read", {"list": "release"})
    assert "tag v2" in read and "publish notes" in read
    tab_through(page)


def test_context_from_the_keyboard(server: RunningServer, page: Page) -> None:
    mcp_tool(server.mcp_url, "save_memory", {"text": "Billing note", "project": "billing"})
    page.goto(server.url + "/context")
    tab_through(page)
    picker = page.get_by_role("combobox", name="Project")
    tab_to(page, picker)
    page.keyboard.press("Home")  # the first project, billing
    expect(picker).to_have_value("billing")
    tab_to(page, page.get_by_role("button", name="Show"))
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/context\?project=billing"))
    expected = mcp_tool(server.mcp_url, "session_start_context", {"project": "billing"})
    assert page.locator("#context-text").inner_text() == expected


def sign_in_by_keyboard(page: Page, hub: Hub, secret: str) -> None:
    page.goto(hub.url + "/")
    tab_through(page)
    tab_to(page, page.get_by_label("Admin token"))
    page.keyboard.type(secret)
    page.keyboard.press("Enter")
    expect(page).to_have_url(hub.url + "/tokens")


def test_hub_tokens_and_audit_from_the_keyboard(hub: Hub, page: Page) -> None:
    carol = hub.token("read", ("shop",), "carol")
    hub.call_tool(carol, hub.initialize(carol), "search", query="anything", project="shop")
    admin = hub.token("admin", None, "keyboard-admin")
    sign_in_by_keyboard(page, hub, admin)
    tab_through(page)
    tab_to(page, page.get_by_label("Name"))
    page.keyboard.type("ci-runner")
    tab_to(page, page.get_by_label("Your admin token (to confirm)"))
    page.keyboard.type(admin)
    tab_to(page, page.get_by_role("button", name="Create token"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("“ci-runner”")
    tab_through(page)
    tab_to(page, page.get_by_role("button", name="Revoke ci-runner"))
    page.keyboard.press("Space")
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm with your admin token")
    tab_through(page)
    tab_to(page, page.get_by_label("Your admin token"))
    page.keyboard.type(admin)
    page.keyboard.press("Enter")
    expect(page.locator("tr[data-token='ci-runner']")).to_contain_text("revoked")
    page.get_by_role("navigation").get_by_role("link", name="Audit").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(hub.url + "/audit")
    tab_through(page)
    tab_to(page, page.get_by_label("Tool"))
    page.keyboard.type("search")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/audit\?.*tool=search"))
    expect(page.locator("tr.audit-row")).to_have_count(1)
    expect(page.locator("tr.audit-row")).to_contain_text("carol")
