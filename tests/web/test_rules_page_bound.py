"""The Rules page lists the rules oldest first, 50 a page. A sync keeps a pulled rule's own
``added_at``, so a rule pulled between two page loads may list before every rule seen: the next
page then showed again the last rule of the page before. Its pages now carry the store's bound
(``upto``, its place in the local insertion order, which a pull only moves forward)."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from aletheia_mem.clock import system_clock
from aletheia_mem.domain.rules import rule_id
from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.http_server import RunningServer

RULES = 55  # more than a page of 50
DAY_MS = 24 * 3600 * 1000
ORIGIN = "c" * 32  # another store's id: the pulled rule's origin


def _pull_an_older_rule(db: Path) -> None:
    """A rule added ten days ago on another machine, applied as a pull applies it."""
    now = system_clock()
    then, when, older = "Rule from a teammate", "", now - 10 * DAY_MS
    data = {
        "then": then, "when": when, "scope_tier": "project", "scope_name": "shop",
        "evidence_memories": [], "evidence_facts": [], "source": "codex",
        "added_at": older, "last_confirmed_at": older, "enabled": True, "updated_at": older,
    }  # fmt: skip
    record = {"kind": "rule", "key": rule_id(then, when, "project", "shop"), "v": [now, ORIGIN]}
    store = SqliteStore(db)
    try:
        stats = store.apply_changes([{**record, "data": data}], projects=None, now=now)
    finally:
        store.close()
    assert stats.applied == 1


def test_a_rule_pulled_between_two_pages_moves_no_rule_onto_the_next_page(
    server: RunningServer, page: Page, root: Path
) -> None:
    headers = {"Content-Type": "application/json"}
    for n in range(RULES):
        body = json.dumps({"then": f"Rule {n:03d} of the shop", "scopeTier": "project"})
        assert server.request("POST", "/api/rules", body, headers).status in (200, 201)
    page.goto(server.url + "/rules")
    expect(page.locator("tr.rule")).to_have_count(50)
    expect(page.locator("tr.rule").last).to_contain_text("Rule 049")
    _pull_an_older_rule(root / "data" / "aletheia.db")
    page.locator("p.pager").first.get_by_role("link", name="Next rules").click()
    expect(page.locator("tr.rule")).to_have_count(RULES - 50)
    expect(page.locator("tr.rule").first).to_contain_text("Rule 050")
    expect(page.locator("p.pager").first).to_contain_text(f"Rules 51 to {RULES} of {RULES}")
    page.get_by_role("link", name="Previous rules").last.click()
    expect(page.locator("tr.rule").first).to_contain_text("Rule 000")
    # Opened afresh, the list holds the pulled rule, in its place: the oldest.
    page.goto(server.url + "/rules")
    expect(page.locator("tr.rule").first).to_contain_text("Rule from a teammate")
    expect(page.locator("p.pager").first).to_contain_text(f"Rules 1 to 50 of {RULES + 1}")
    # An upto= that is no number: the rules as they are now, and the page says so.
    page.goto(server.url + "/rules?offset=50&upto=x")
    expect(page.locator("tr.rule")).to_have_count(RULES + 1 - 50)
    expect(page.get_by_text("This link's upto= is not a rule's place")).to_be_visible()
    listed = server.api("GET", "/api/rules?upto=3").json()
    assert [rule["then"] for rule in listed["rules"]] == [
        f"Rule {n:03d} of the shop" for n in range(3)
    ]
    assert listed["upto"] == 3
