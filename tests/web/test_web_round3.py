"""Third audit of the owner's UI in a real Chromium: a stale Restore, values written for a
later time, and long unbroken values (paths, hashes, names) on every page."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.hub.helpers import running_hub
from tests.web.browser import axe_violations, mcp_tool, memory_ids
from tests.web.test_hub_pages import sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-round3")) as running:
        yield running


def test_restore_on_a_stale_page_says_the_memory_is_not_dismissed(
    server: RunningServer, page: Page
) -> None:
    saved = mcp_tool(server.mcp_url, "save_memory", {"text": "Restored twice from two tabs"})
    memory = memory_ids(saved)[0]
    mcp_tool(server.mcp_url, "dismiss_memory", {"id": memory})
    page.goto(f"{server.url}/memories/{memory}")  # this tab still offers Restore
    mcp_tool(server.mcp_url, "restore_memory", {"id": memory})  # restored meanwhile
    page.get_by_role("button", name="Restore").click()
    status = page.get_by_role("status")
    expect(status).to_have_text(f"Nothing to restore: memory #{memory} is not dismissed.")
    expect(page.get_by_role("button", name="Undo")).to_have_count(0)  # Undo would dismiss it
    assert memory in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Restored twice"}))


def test_a_value_written_for_a_later_time_is_upcoming_and_the_old_one_still_current(
    server: RunningServer, page: Page
) -> None:
    now = {"subject": "checkout", "predicate": "provider", "object": "Stripe"}
    later = {**now, "object": "Adyen", "valid_from": "2999-01-01"}
    mcp_tool(server.mcp_url, "save_memory", {"text": "Checkout on Stripe", "facts": [now]})
    mcp_tool(server.mcp_url, "save_memory", {"text": "Adyen from 2999", "facts": [later]})
    current = mcp_tool(server.mcp_url, "fact_history", {"subject": "checkout"})
    assert "Stripe" in current and "Adyen" not in current  # what the tool calls current
    page.goto(server.url + "/facts?subject=checkout")
    stripe = page.locator("tr.fact-row", has_text="Stripe")
    adyen = page.locator("tr.fact-row", has_text="Adyen")
    expect(stripe).to_contain_text("current")
    expect(adyen).to_contain_text("upcoming")
    expect(adyen).not_to_contain_text("current")
    expect(adyen).not_to_contain_text("now")
    expect(page.locator("rect.bar.current title")).to_contain_text("Stripe")
    assert axe_violations(page) == []


LONG = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 6


def test_long_unbroken_values_do_not_widen_any_page(server: RunningServer, page: Page) -> None:
    project = "p" + "x" * 190
    session = server.initialize(client="agent-" + "c" * 120)
    saved = server.call_tool(
        session,
        "save_memory",
        {
            "title": "Hash " + LONG,
            "text": LONG,
            "project": project,
            "kind": "k" * 90,
            "facts": [{"subject": "s" + LONG, "predicate": "sha", "object": LONG}],
            "files": ["src/" + LONG + ".py"],
        },
    )
    memory = memory_ids(saved["content"][0]["text"])[0]
    server.call_tool(session, "add_rule", {"then": "Check " + LONG, "when": LONG})
    server.call_tool(
        session, "work_state_write", {"list": "l" + "y" * 150, "items": [LONG], "project": project}
    )
    paths = [
        "/",
        f"/memories/{memory}",
        "/facts",
        "/facts?" + urlencode({"subject": "s" + LONG}),
        "/rules",
        "/lists?" + urlencode({"project": project}),
        "/context?" + urlencode({"project": project}),
    ]
    for path in paths:
        page.goto(server.url + path)
        wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wider <= 0, (path, wider)


@pytest.fixture
def other_port(tmp_path: Path) -> Iterator[str]:
    """Another origin on this machine (another port of 127.0.0.1), serving an empty page."""
    (tmp_path / "evil.html").write_text("<title>evil</title>", encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def test_a_page_on_another_loopback_port_cannot_write_through_the_api(
    server: RunningServer, page: Page, other_port: str
) -> None:
    memory = memory_ids(mcp_tool(server.mcp_url, "save_memory", {"text": "Blind API writes"}))[0]
    page.goto(other_port + "/evil.html")
    for action in ("dismiss", "pin"):  # no body: a "simple" request, sent without a preflight
        with page.expect_response(f"{server.url}/api/memories/{memory}/{action}") as answer:
            page.evaluate(
                "url => fetch(url, {method: 'POST', mode: 'no-cors'}).catch(() => null)",
                f"{server.url}/api/memories/{memory}/{action}",
            )
        assert answer.value.status == 403, action
    shown = server.api("GET", f"/api/memories/{memory}").json()
    assert shown["dismissed_at"] is None and shown["pinned"] is False
    assert server.api("POST", f"/api/memories/{memory}/pin").status == 200  # scripts still can


def test_the_hub_pages_keep_long_token_and_project_names_inside_the_page(
    tmp_path: Path, page: Page
) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        hub.token("mcp", ("p" + LONG[:190],), "laptop-" + LONG[:90])
        sign_in(page, hub, hub.token("admin", None, "ops"))
        for path in ("/tokens", "/audit"):
            page.goto(hub.url + path)
            wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert wider <= 0, (path, wider)
