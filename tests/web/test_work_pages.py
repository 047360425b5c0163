"""The Lists and Context pages in a real Chromium, checked again through MCP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import axe_violations, mcp_tool

pytestmark = pytest.mark.e2e

XSS = '</textarea><img src=x onerror="window.__xss=1">'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-work")) as running:
        yield running


def test_a_list_written_by_an_agent_is_read_and_edited_in_the_page(
    server: RunningServer, page: Page
) -> None:
    items = ["write the migration", {"task": "review PR 12", "done": False}, XSS]
    mcp_tool(server.mcp_url, "work_state_write", {"list": "todo", "items": items})
    page.goto(server.url + "/lists")
    page.get_by_role("link", name="todo").click()
    editor = page.get_by_label("Items, one per line")
    expect(editor).to_have_value(
        'write the migration\n{"task": "review PR 12", "done": false}\n' + XSS
    )
    assert page.evaluate("window.__xss") is None
    editor.fill('write the migration\n{"task": "review PR 12", "done": true}\nship it\n\n')
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("status")).to_have_text("List saved.")
    read = mcp_tool(server.mcp_url, "work_state_read", {"list": "todo"})
    payload = read[read.index("[") : read.rindex("]") + 1]
    assert json.loads(payload) == [
        "write the migration",
        {"task": "review PR 12", "done": True},
        "ship it",
    ]
    assert axe_violations(page) == []


def test_a_new_list_is_made_from_the_page(server: RunningServer, page: Page) -> None:
    page.goto(server.url + "/lists")
    page.get_by_label("List name").fill("blockers")
    page.get_by_label("Items, one per line").fill("CI is red\nwaiting on review")
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("link", name="blockers")).to_be_visible()
    read = mcp_tool(server.mcp_url, "work_state_read", {"list": "blockers"})
    assert "CI is red" in read and "waiting on review" in read


def test_context_shows_exactly_the_tools_text_and_its_size_on_the_budget(
    server: RunningServer, page: Page
) -> None:
    mcp_tool(
        server.mcp_url, "save_memory", {"text": "Pinned: deploy on Fridays never", "pinned": True}
    )
    mcp_tool(server.mcp_url, "save_memory", {"text": "Recent: cache warmed " + XSS})
    page.goto(server.url + "/context")
    expected = mcp_tool(server.mcp_url, "session_start_context", {"project": "shop"})
    shown = page.locator("#context-text").inner_text()
    assert shown == expected
    expect(page.locator("#size")).to_contain_text("of 6,000 characters")
    assert page.evaluate("window.__xss") is None
    page.get_by_role("combobox", name="Project").select_option("shop")
    page.get_by_role("button", name="Show").click()
    assert page.locator("#context-text").inner_text() == expected
    assert axe_violations(page) == []


def test_saving_a_list_unchanged_keeps_every_item_as_the_agent_wrote_it(
    server: RunningServer, page: Page
) -> None:
    items = ["line one\nline two", '{"a": 1}', 7, True, "  padded  ", "7"]
    mcp_tool(server.mcp_url, "work_state_write", {"list": "exact", "items": items})
    page.goto(server.url + "/lists")
    page.get_by_role("link", name="exact").click()
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("status")).to_have_text("List saved.")
    read = mcp_tool(server.mcp_url, "work_state_read", {"list": "exact"})
    assert json.loads(read[read.index("[") : read.rindex("]") + 1]) == items
