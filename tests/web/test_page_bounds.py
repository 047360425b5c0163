"""Pages a memory author can grow (a subject's fact history, the rules, the Write to tools
preview) show a bounded part, say how much more there is and link to it, in a real Chromium."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer
from tests.web.browser import mcp_tool

pytestmark = pytest.mark.e2e

FACTS = 250  # more than a page of 200
RULES = 55  # more than a page of 50
PAGE_WEIGHT = 150_000  # the README's target for every page


def flood_facts(server: RunningServer, subject: str = "payments") -> None:
    """250 values of five predicates about one subject, and one owner set long before them
    (still current: nothing superseded it)."""
    facts = [
        {
            "subject": subject,
            "predicate": f"p{n % 5}",
            "object": f"value {n}",
            "valid_from": f"{2000 + n // 12}-{n % 12 + 1:02d}-01",
        }
        for n in range(FACTS)
    ]
    owner = {"subject": subject, "predicate": "owner", "object": "team-pay"}
    facts.append({**owner, "valid_from": "1990-01-01"})
    for start in range(0, len(facts), 100):
        text = f"flood {subject} {start}"
        mcp_tool(server.mcp_url, "save_memory", {"text": text, "facts": facts[start : start + 100]})


def flood_ledger(server: RunningServer) -> None:
    """``flood_facts`` about "ledger", once for the module's server."""
    if "owner" not in server.request("GET", "/facts?subject=ledger").body.decode():
        flood_facts(server, "ledger")


def test_a_long_fact_history_shows_the_latest_facts_and_links_the_older_ones(
    server: RunningServer, page: Page
) -> None:
    flood_facts(server)
    reply = server.request("GET", "/facts?subject=payments")
    assert reply.status == 200 and len(reply.body) < PAGE_WEIGHT
    page.goto(server.url + "/facts?subject=payments")
    rows = page.locator("tr.fact-row")
    expect(rows).to_have_count(201)  # the latest 200, and the current owner set in 1990
    expect(page.locator("rect.bar.current")).to_have_count(6)
    expect(rows.filter(has_text="value 249")).to_contain_text("current")
    owner = page.locator("section.track", has=page.get_by_role("heading", name="owner"))
    expect(owner.locator("tr.fact-row")).to_contain_text("current")
    pager = page.locator("p.pager").first
    expect(pager).to_contain_text("Facts 1 to 200 of 251")
    expect(pager).to_contain_text("51 older not shown")
    pager.get_by_role("link", name="Older facts").click()
    expect(rows).to_have_count(51)
    expect(rows.filter(has_text="value 0")).to_contain_text("superseded")
    expect(page.locator("p.pager").first).to_contain_text("Facts 201 to 251 of 251")
    page.locator("p.pager").first.get_by_role("link", name="Newer facts").click()
    expect(rows).to_have_count(201)


@pytest.mark.parametrize(
    ("older", "shown"),
    [
        ("", "Facts 1 to 200 of 251"),  # no value, or one that is no whole number: the first
        ("abc", "Facts 1 to 200 of 251"),
        ("-1", "Facts 1 to 200 of 251"),
        ("1e3", "Facts 1 to 200 of 251"),
        ("%C2%B2", "Facts 1 to 200 of 251"),  # "²": str.isdigit() says yes, int() says no
        ("0", "Facts 1 to 200 of 251"),
        ("200", "Facts 201 to 251 of 251"),
        # Past the end, however long the number: the oldest fact, as the Rules page does.
        ("1000", "Facts 251 to 251 of 251"),
        ("12345678", "Facts 251 to 251 of 251"),
        ("99999999999999999999", "Facts 251 to 251 of 251"),
    ],
)
def test_the_older_facts_parameter_is_bounded_like_every_offset(
    server: RunningServer, older: str, shown: str
) -> None:
    flood_ledger(server)
    reply = server.request("GET", f"/facts?subject=ledger&older={older}")
    assert reply.status == 200, reply.body[:300]
    body = reply.body.decode()
    assert shown in body
    assert "Traceback" not in body
    # A value that is no whole number is told, as an odd upto= is.
    told = "This link&#39;s older= is not a number of facts: the latest facts are shown."
    assert (told in body) == (older in ("abc", "-1", "1e3", "%C2%B2"))


def test_many_rules_are_shown_a_page_at_a_time(server: RunningServer, page: Page) -> None:
    headers = {"Content-Type": "application/json"}
    for n in range(RULES):
        body = json.dumps({"then": f"Rule {n:03d}: " + "always do the thing carefully " * 26})
        assert server.request("POST", "/api/rules", body, headers).status in (200, 201)
    reply = server.request("GET", "/rules")
    assert reply.status == 200 and len(reply.body) < PAGE_WEIGHT
    page.goto(server.url + "/rules")
    expect(page.locator("tr.rule")).to_have_count(50)
    pager = page.locator("p.pager").first  # above the table and again below it
    expect(pager).to_contain_text(f"Rules 1 to 50 of {RULES}")
    pager.get_by_role("link", name="Next rules").click()
    expect(page.locator("tr.rule")).to_have_count(RULES - 50)
    expect(page.locator("tr.rule").last).to_contain_text(f"Rule {RULES - 1:03d}")
    page.get_by_role("link", name="Previous rules").last.click()
    expect(page.locator("tr.rule")).to_have_count(50)

    reply = server.request("GET", "/rules/sync")
    assert reply.status == 200 and len(reply.body) < PAGE_WEIGHT
    page.goto(server.url + "/rules/sync")
    claude = page.locator("fieldset.file", has_text="shop/CLAUDE.md")
    diff = claude.locator("pre.diff")
    assert len(diff.inner_text().splitlines()) <= 60
    expect(claude).to_contain_text("more line(s) of this change not shown")
    claude.get_by_role("link", name="Show the whole change").click()
    claude = page.locator("fieldset.file", has_text="shop/CLAUDE.md")
    shown = claude.locator("pre.diff").inner_text()
    # every line of the change, which holds the oldest rules up to the block's bound
    # (rule_sync.MAX_BLOCK_RULE_CHARS) and a line for the newer ones left out
    written = [n for n in range(RULES) if f"Rule {n:03d}" in shown]
    assert written == list(range(len(written))) and len(written) >= 30
    assert f"({RULES - len(written)} newer enabled rules are left out" in shown
    expect(claude).not_to_contain_text("not shown")
    # The other files stay cut.
    expect(page.locator("fieldset.file", has_text="AGENTS.md").first).to_contain_text("not shown")


def test_a_long_history_marks_what_held_at_as_of_and_refuses_an_odd_date(
    server: RunningServer, page: Page
) -> None:
    flood_ledger(server)
    # p4 took "value 4" from 2000-05-01 to "value 9" on 2000-10-01; the owner held since 1990.
    page.goto(server.url + "/facts?subject=ledger&as_of=2000-06-15&older=200")
    held = page.locator("tr.fact-row", has_text="held on 2000-06-15")
    expect(held).to_have_count(6)  # a value of each of p0 to p4 and the owner, on this page
    value_4 = page.get_by_role("cell", name="value 4", exact=True)
    expect(page.locator("tr.fact-row", has=value_4)).to_contain_text("held on")
    page.goto(server.url + "/facts?subject=ledger&as_of=2000-06-15")
    expect(page.locator("tr.fact-row", has_text="team-pay")).to_contain_text("held on")
    reply = server.request("GET", "/facts?subject=ledger&as_of=someday")
    assert reply.status == 400 and b"as_of" in reply.body and b"Traceback" not in reply.body


def fact_ids(page: Page) -> list[int]:
    found = page.locator("tr.fact-row").evaluate_all("rows => rows.map(r => +r.dataset.fact)")
    return [int(i) for i in found]


def test_facts_recorded_between_two_pages_of_a_history_push_none_onto_the_older_page(
    server: RunningServer, page: Page
) -> None:
    flood_facts(server, "journal")
    page.goto(server.url + "/facts?subject=journal")
    rows = page.locator("tr.fact-row")
    expect(rows).to_have_count(201)  # the latest 200, and the owner set in 1990 (current)
    first = fact_ids(page)
    for n in range(3):  # recorded meanwhile, valid from now: the latest of the history
        fact = {"subject": "journal", "predicate": f"p{n}", "object": f"later {n}"}
        assert server.api("POST", "/api/facts", fact).status == 201
    page.locator("p.pager").first.get_by_role("link", name="Older facts").click()
    expect(page.locator("p.pager").first).to_contain_text("Facts 201 to 251 of 251")
    expect(rows).to_have_count(51)
    second = fact_ids(page)
    assert len(set(first) | set(second)) == 251  # each once (the owner: current, on both)
    expect(page.locator("main")).not_to_contain_text("later 0")
    # The first page is read anew: the facts recorded meanwhile are on it.
    page.locator("p.pager").first.get_by_role("link", name="Newer facts").click()
    expect(page.locator("p.pager").first).to_contain_text("Facts 1 to 200 of 254")
    expect(rows.filter(has_text="later 0")).to_contain_text("current")


@pytest.mark.parametrize(
    "upto", ["abc", "-1", "0", "1e3", "%C2%B2", "99999999999999999999", "5%00", "<b>"]
)
def test_an_odd_upto_on_a_fact_history_says_so_and_shows_it_as_it_is_now(
    server: RunningServer, upto: str
) -> None:
    flood_ledger(server)
    reply = server.request("GET", f"/facts?subject=ledger&older=200&upto={upto}")
    assert reply.status == 200, reply.body[:300]
    body = reply.body.decode()
    assert "This link&#39;s upto= is not a fact id: the history is shown as it is now." in body
    assert "Facts 201 to 251 of 251" in body and "Traceback" not in body
    both = server.request("GET", f"/facts?subject=ledger&older=-5&upto={upto}").body.decode()
    assert "older= is not a number of facts" in both and "upto= is not a fact id" in both
    assert "Facts 1 to 200 of 251" in both
    whole = server.request("GET", "/facts?subject=ledger&older=200&upto=999999999999999")
    assert "Facts 201 to 251 of 251" in whole.body.decode()
    assert "not a fact id" not in whole.body.decode()


ODD_OFFSETS = ["abc", "-1", "1e3", "%C2%B2", "%EF%BC%91", "%D9%A3", "1_0", "+1", "%201"]


@pytest.mark.parametrize("offset", [*ODD_OFFSETS, "", "0"])
def test_an_odd_offset_on_the_memories_and_rules_pages_is_the_first_page_and_told(
    server: RunningServer, offset: str
) -> None:
    """As the Facts page tells an odd older=: a link's offset= that is no whole number in the
    digits 0-9 (a sign, a full-width or Arabic-Indic digit, "1_0") showed the first page
    without a word."""
    headers = {"Content-Type": "application/json"}
    mcp_tool(server.mcp_url, "save_memory", {"text": "Odd offsets are told", "project": "odd"})
    rule = json.dumps({"then": "Tell odd offsets", "scopeTier": "project"})
    assert server.request("POST", "/api/rules", rule, headers).status in (200, 201)
    odd = offset in ODD_OFFSETS
    listed = server.request("GET", f"/?project=odd&offset={offset}")
    assert listed.status == 200, listed.body[:300]
    body = listed.body.decode()
    assert "Odd offsets are told" in body
    told = "This link&#39;s offset= is not a number of memories: the first page is shown."
    assert (told in body) is odd
    # with an odd upto= too, both are told
    both = server.request("GET", f"/?project=odd&offset={offset}&upto=x").body.decode()
    assert (told in both) is odd and "upto= is not a memory id" in both
    rules = server.request("GET", f"/rules?offset={offset}")
    assert rules.status == 200, rules.body[:300]
    body = rules.body.decode()
    first = server.request("GET", "/rules").body.decode()
    assert re.findall(r'data-rule="([^"]+)"', body) == re.findall(r'data-rule="([^"]+)"', first)
    told = "This link&#39;s offset= is not a number of rules: the first rules are shown."
    assert (told in body) is odd
