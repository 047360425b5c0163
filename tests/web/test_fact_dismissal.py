"""Dismiss and Restore of facts on the Facts page, in a real Chromium, each checked through the
JSON API; the forms carry the CSRF token as every other form does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import axe_violations

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-fact-dismissal")) as running:
        yield running


def record(server: RunningServer, subject: str, value: str, project: str) -> int:
    body = {"subject": subject, "predicate": "owner", "object": value, "project": project}
    reply = server.api("POST", "/api/facts", body)
    assert reply.status in (200, 201), reply.body
    return int(reply.json()["fact"]["id"])


def live_values(server: RunningServer, subject: str, project: str) -> list[str]:
    reply = server.api("GET", f"/api/facts?subject={subject}&project={project}")
    assert reply.status == 200, reply.body
    return [fact["object"] for fact in reply.json()["facts"]]


def test_a_fact_is_dismissed_and_restored_from_the_facts_page(
    server: RunningServer, page: Page
) -> None:
    fact = record(server, "svc", "alice", "dis")
    page.goto(server.url + "/facts?subject=svc&project=dis")
    row = page.locator(f'tr[data-fact="{fact}"]')
    row.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_have_text(f"Fact #{fact} dismissed.")
    assert live_values(server, "svc", "dis") == []
    # Only dismissed facts about it: no bars, so no time axis either.
    main = page.locator("main")
    expect(main).to_contain_text("No facts about “svc”.")
    expect(main).not_to_contain_text("Time axis")
    page.get_by_label("Show dismissed").check()
    page.get_by_role("button", name="Show").click()
    expect(row).to_contain_text("dismissed")
    assert axe_violations(page) == []
    row.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_have_text(f"Fact #{fact} restored.")
    assert live_values(server, "svc", "dis") == ["alice"]
    page.goto(server.url + "/facts?subject=svc&project=dis")
    expect(page.locator(f'tr[data-fact="{fact}"]')).to_contain_text("current")


def test_a_stale_dismiss_of_a_fact_says_nothing_changed(server: RunningServer, page: Page) -> None:
    fact = record(server, "queue", "bob", "stale")
    page.goto(server.url + "/facts?subject=queue&project=stale")
    reply = server.api("POST", f"/api/facts/{fact}/dismiss", {"reason": "an agent's"})
    assert reply.status == 200, reply.body
    page.locator(f'tr[data-fact="{fact}"]').get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Nothing to dismiss: fact #{fact} is already dismissed."
    )
    # A link made elsewhere shows no notice.
    page.goto(server.url + f"/facts?subject=queue&project=stale&done=dismiss&fact={fact}")
    expect(page.get_by_role("status")).to_have_count(0)


def test_a_fact_form_without_the_csrf_token_is_refused(server: RunningServer) -> None:
    fact = record(server, "cache", "carol", "csrf")
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Origin": server.url}
    reply = server.request("POST", f"/facts/{fact}/dismiss", "next=%2Ffacts", headers)
    assert reply.status == 403, reply.body[:200]
    assert live_values(server, "cache", "csrf") == ["carol"]
