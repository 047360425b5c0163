"""The Memories page in a real Chromium, each action checked again through MCP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import WAIT_MS, axe_violations, mcp_tool, memory_ids

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-memories")) as running:
        yield running


def save(server: RunningServer, **arguments: object) -> int:
    text = mcp_tool(server.mcp_url, "save_memory", arguments)
    found = re.search(r"#(\d+)", text)
    assert found, text
    return int(found.group(1))


def row(page: Page, memory_id: int) -> object:
    return page.locator(f'#memories li[data-id="{memory_id}"]')


def test_the_list_shows_the_newest_first_and_new_memories_appear_without_a_reload(
    server: RunningServer, page: Page
) -> None:
    older = save(server, text="Older note about caching", title="Caching layer is Redis")
    newer = save(server, text="Newer note about queues", title="Queue is RabbitMQ")
    page.goto(server.url + "/")
    ids = [
        int(i)
        for i in page.locator("#memories li[data-id]").evaluate_all(
            "rows => rows.map(r => r.dataset.id)"
        )
    ]
    assert ids.index(newer) < ids.index(older)
    fresh = save(server, text="Saved while the page is open", title="Live feed works")
    expect(page.locator("#memories li[data-id]").first).to_have_attribute(
        "data-id", str(fresh), timeout=WAIT_MS
    )
    expect(page.locator("#memories li").first).to_contain_text("Live feed works")


def test_the_search_box_ranks_as_the_search_tool_does(server: RunningServer, page: Page) -> None:
    for n in range(4):
        save(server, text=f"pnpm workspace tip {n} " + "pnpm " * n, title=f"pnpm tip {n}")
    save(server, text="npm is slow here", title="unrelated npm")
    page.goto(server.url + "/")
    box = page.get_by_role("searchbox")
    box.fill("pnpm workspace")
    expect(page.locator("body")).to_have_attribute("data-searched", re.compile("q=pnpm"))
    shown = [
        int(i)
        for i in page.locator("#memories li[data-id]").evaluate_all(
            "rows => rows.map(r => r.dataset.id)"
        )
    ]
    by_tool = memory_ids(
        mcp_tool(server.mcp_url, "search", {"query": "pnpm workspace", "project": "*", "limit": 51})
    )
    assert shown == by_tool
    assert len(shown) == 4
    assert "q=pnpm+workspace" in page.url


def test_every_filter_of_the_search_tool_is_on_the_form(server: RunningServer, page: Page) -> None:
    decision = save(server, text="We decided on Postgres for billing", type="decision")
    save(server, text="Postgres gotcha: vacuum", type="gotcha", files=["db/vacuum.sql"])
    page.goto(server.url + "/")
    page.get_by_role("combobox", name="Project").select_option("shop")
    page.get_by_label("Type").select_option("decision")
    page.get_by_label("Kind").fill("")
    page.get_by_label("Since").fill("2000-01-01")
    page.get_by_label("Until").fill("2100-01-01")
    page.get_by_label("Order").select_option("date_desc")
    page.get_by_role("searchbox").fill("Postgres")
    page.get_by_role("searchbox").press("Enter")
    expect(page.locator("#memories li[data-id]")).to_have_count(1)
    expect(row(page, decision)).to_be_visible()  # type: ignore[attr-defined]
    page.goto(server.url + "/")
    page.get_by_label("File", exact=True).fill("vacuum.sql")
    page.get_by_label("File path ends with").check()
    page.get_by_role("button", name="Search").click()
    by_tool = memory_ids(
        mcp_tool(server.mcp_url, "search", {"file": "vacuum.sql", "file_suffix": True})
    )
    shown = page.locator("#memories li[data-id]").evaluate_all("r => r.map(x => +x.dataset.id)")
    assert shown == by_tool and len(shown) == 1


def test_a_memory_opens_with_its_text_facts_files_tool_and_timeline(
    server: RunningServer, page: Page
) -> None:
    before = save(server, text="The step before", title="Step one")
    anchor = save(
        server,
        text="Full text of the anchor\nsecond line",
        title="Anchor memory",
        facts=[{"subject": "billing", "predicate": "database", "object": "Postgres 16"}],
        files=["src/billing/db.py"],
    )
    after = save(server, text="The step after", title="Step three")
    page.goto(server.url + "/")
    page.get_by_role("link", name=re.compile("Anchor memory")).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Anchor memory")
    expect(page.locator("pre.text")).to_have_text("Full text of the anchor\nsecond line")
    expect(page.locator("main")).to_contain_text("Postgres 16")
    expect(page.locator("main")).to_contain_text("src/billing/db.py")
    expect(page.locator(".props")).to_contain_text("Saved bymcp")  # the client says it is mcp
    timeline = page.locator("ol.timeline")
    expect(timeline.get_by_role("link", name=re.compile("Step one"))).to_have_attribute(
        "href", f"/memories/{before}"
    )
    expect(timeline.get_by_role("link", name=re.compile("Step three"))).to_have_attribute(
        "href", f"/memories/{after}"
    )
    by_tool = memory_ids(mcp_tool(server.mcp_url, "timeline", {"anchor": anchor}))
    assert before in by_tool and after in by_tool


def test_dismiss_with_a_reason_then_undo_and_restore(server: RunningServer, page: Page) -> None:
    memory = save(server, text="Deploys go through Jenkins", title="Jenkins deploys")
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_label("Reason").fill("we moved to GitHub Actions")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_contain_text("dismissed")
    expect(page.locator(".props")).to_contain_text("we moved to GitHub Actions")
    assert memory not in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Jenkins"}))
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("button", name="Dismiss")).to_be_visible()
    assert memory in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Jenkins"}))
    page.get_by_role("button", name="Dismiss").click()
    page.goto(server.url + "/?dismissed=1")
    expect(row(page, memory)).to_contain_text("dismissed")  # type: ignore[attr-defined]
    page.goto(server.url + "/")
    expect(row(page, memory)).to_have_count(0)  # type: ignore[attr-defined]
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("button", name="Dismiss")).to_be_visible()
    assert memory in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Jenkins"}))


def test_pin_and_unpin_each_undoable(server: RunningServer, page: Page) -> None:
    memory = save(server, text="Run migrations before tests", title="Migrations first")
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_role("button", name="Pin").click()
    expect(page.get_by_role("button", name="Unpin")).to_be_visible()
    context = mcp_tool(server.mcp_url, "session_start_context", {})
    assert f"#{memory}" in context.split("## Pinned")[1].split("##")[0]
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("button", name="Pin")).to_be_visible()
    context = mcp_tool(server.mcp_url, "session_start_context", {})
    assert "## Pinned" not in context or f"#{memory} " not in context.split("## Pinned")[1]
    page.get_by_role("button", name="Pin").click()
    page.get_by_role("button", name="Unpin").click()
    expect(page.get_by_role("button", name="Pin")).to_be_visible()


def test_the_list_and_a_memory_are_usable_from_the_keyboard(
    server: RunningServer, page: Page
) -> None:
    memory = save(server, text="Keyboard users find this", title="Keyboard reachable")
    page.goto(server.url + "/")
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Enter")
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.type") == "search":
            break
    page.keyboard.type("Keyboard reachable")
    page.keyboard.press("Enter")
    link = page.get_by_role("link", name=re.compile("Keyboard reachable"))
    link.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{server.url}/memories/{memory}")
    page.get_by_role("button", name="Pin").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Unpin")).to_be_visible()


def test_the_memories_pages_have_no_serious_accessibility_violations(
    server: RunningServer, page: Page
) -> None:
    memory = save(server, text="Accessible text", title="Accessible memory", files=["a.py"])
    for path in ("/", "/?q=Accessible", "/?dismissed=1", f"/memories/{memory}"):
        page.goto(server.url + path)
        assert axe_violations(page) == [], path


def test_stored_xss_in_titles_texts_facts_and_files_is_rendered_inert(
    server: RunningServer, page: Page, tmp_path: Path
) -> None:
    payload = '<img src=x onerror="window.__xss=1">"><script>window.__xss=2</script>'
    memory = save(
        server,
        title="XSS " + payload,
        text="javascript:window.__xss=3 " + payload,
        facts=[{"subject": "xss" + payload, "predicate": "p" + payload, "object": payload}],
        files=['x"><svg onload="window.__xss=4">.py'],
    )
    for path in ("/", "/?q=XSS", f"/memories/{memory}", "/?q=xss"):
        page.goto(server.url + path)
        expect(page.locator("main")).to_contain_text("<img src=x onerror=")
        assert page.evaluate("window.__xss") is None, path
        assert page.locator("main img, main script, main svg").count() == 0, path
    hrefs = page.locator("a").evaluate_all("links => links.map(a => a.href)")
    assert not [h for h in hrefs if not h.startswith(server.url)]


def test_the_oldest_first_list_is_not_fed_the_newest_again_and_again(
    server: RunningServer, page: Page
) -> None:
    first = save(server, text="Oldest-first view starts here", project="asc")
    save(server, text="Oldest-first view goes on", project="asc")
    page.goto(server.url + "/?project=asc&order=date_asc")
    expect(row(page, first)).to_be_visible()
    expect(page.locator("#memories")).not_to_have_attribute("data-live", "1")
    rows = server.request("GET", f"/memories/rows?project=asc&order=date_asc&after={first}")
    assert b"data-id" not in rows.body
    page.goto(server.url + "/?project=asc")
    expect(page.locator("#memories")).to_have_attribute("data-live", "1")
    page.get_by_label("Order").select_option("date_asc")
    expect(page.locator("body")).to_have_attribute("data-searched", re.compile("date_asc"))
    expect(page.locator("#memories")).not_to_have_attribute("data-live", "1")
    expect(page.locator("#results-label")).to_have_text("Oldest first.")


def shown_ids(page: Page) -> list[int]:
    found = page.locator("#memories li[data-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.id)"
    )
    return [int(i) for i in found]


def test_memories_saved_between_two_pages_push_none_onto_the_next_page_again(
    server: RunningServer, page: Page
) -> None:
    saved = []
    for n in range(55):
        reply = server.api(
            "POST", "/api/memories", {"text": f"Paging note {n}", "project": "paging"}
        )
        assert reply.status == 201, reply.body
        saved.append(int(reply.json()["memory"]["id"]))
    page.goto(server.url + "/?project=paging")
    first = shown_ids(page)
    assert first == saved[:4:-1]  # the newest 50
    for n in range(3):  # saved while the first page is open: the live feed shows them on it
        save(server, text=f"Saved meanwhile {n}", project="paging")
    expect(page.locator("#memories li[data-id]")).to_have_count(53)
    page.locator("#more").get_by_role("link", name="More").click()
    expect(page.locator("#results-label")).to_have_text("Newest first.")
    assert shown_ids(page) == saved[4::-1]  # the five oldest, none of the first page again
    expect(page.locator("#more")).to_be_hidden()
    # Started again, the list shows the new ones first and the same last page.
    page.goto(server.url + "/?project=paging")
    assert len(shown_ids(page)) == 50 and shown_ids(page)[0] > saved[-1]
    page.locator("#more").get_by_role("link", name="More").click()
    assert shown_ids(page) == saved[7::-1]


@pytest.mark.parametrize(
    "upto", ["abc", "-1", "0", "1e3", "%C2%B2", "99999999999999999999", "5%00", "<b>"]
)
def test_an_odd_upto_in_a_link_says_so_and_shows_the_list_as_it_is_now(
    server: RunningServer, upto: str
) -> None:
    save(server, text="Odd bounds are told", project="bounds")
    reply = server.request("GET", f"/?project=bounds&offset=0&upto={upto}")
    assert reply.status == 200, reply.body[:300]
    body = reply.body.decode()
    assert "is not a memory id: the list is shown as it is now." in body
    assert "Odd bounds are told" in body and "Traceback" not in body
    rows = server.request("GET", f"/memories/rows?project=bounds&upto={upto}")
    assert rows.status == 200 and b"Odd bounds are told" in rows.body
    # A bound above every id shows everything, without a notice.
    whole = server.request("GET", "/?project=bounds&upto=999999999999999").body.decode()
    assert "Odd bounds are told" in whole and "not a memory id" not in whole


def test_memories_saved_between_two_pages_of_a_search_push_none_onto_the_next_page_again(
    server: RunningServer, page: Page
) -> None:
    # The best match states a fact that another agent supersedes between the two pages.
    best = save(
        server,
        text="Searchpage searchpage best match",
        project="results",
        facts=[{"subject": "pager", "predicate": "version", "object": "1"}],
    )
    saved = [best] + [
        save(server, text=f"Searchpage note {n}", project="results") for n in range(54)
    ]
    page.goto(server.url + "/?project=results")
    page.get_by_role("searchbox").fill("searchpage")
    page.get_by_role("searchbox").press("Enter")
    expect(page.locator("#results-label")).to_have_text("Search results.")
    expect(page.locator("#memories li[data-id]")).to_have_count(50)
    first = shown_ids(page)
    assert first[0] == best and set(first) < set(saved)
    # Saved meanwhile: three newer matches (ranked first now), and a fact that makes the best
    # match stale (ranked last now).
    later = [save(server, text=f"Searchpage later {n}", project="results") for n in range(3)]
    save(
        server,
        text="Pager moved on",
        project="results",
        facts=[{"subject": "pager", "predicate": "version", "object": "2"}],
    )
    page.locator("#more").get_by_role("link", name="More").click()
    expect(page.locator("#results-label")).to_have_text("Search results.")
    second = shown_ids(page)
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(saved)  # each one once, none saved since
    expect(page.locator("#more")).to_be_hidden()
    # Searched again, the results are as they are now: the newer ones first, the stale one last.
    page.goto(server.url + "/?project=results&q=searchpage")
    again = shown_ids(page)
    assert set(again[:3]) == set(later) and best not in again
    page.locator("#more").get_by_role("link", name="More").click()
    assert shown_ids(page)[-1] == best
    assert not set(again) & set(shown_ids(page))


def more_query(body: bytes) -> str:
    found = re.search(r'<p id="more"[^>]*><a href="/\?([^"]*)"', body.decode())
    assert found, "no More link"
    return found.group(1).replace("&amp;", "&")


def listed(body: bytes) -> list[int]:
    return [int(i) for i in re.findall(r'<li[^>]*\bdata-id="(\d+)"', body.decode())]


def test_a_file_search_pages_on_without_showing_its_first_page_again(
    server: RunningServer,
) -> None:
    note = {"project": "filepages", "files": ["src/pager.py"]}
    saved = []
    for n in range(55):
        reply = server.api("POST", "/api/memories", {**note, "text": f"Touches the pager {n}"})
        assert reply.status == 201, reply.body
        saved.append(int(reply.json()["memory"]["id"]))
    first = server.request("GET", "/?project=filepages&file=src/pager.py")
    assert listed(first.body) == saved[:4:-1]  # the newest 50
    for n in range(2):
        server.api("POST", "/api/memories", {**note, "text": f"Touches it later {n}"})
    second = server.request("GET", "/?" + more_query(first.body))
    assert listed(second.body) == saved[4::-1]
    assert b'<p id="more" hidden>' in second.body


@pytest.mark.parametrize("name", ["upto", "at"])
@pytest.mark.parametrize(
    "value", ["abc", "-1", "0", "1e3", "%C2%B2", "99999999999999999999", "5%00", "<b>"]
)  # a value that is not UTF-8 (%F0%9F) refuses the address: test_web_round5
def test_an_odd_bound_in_a_search_link_says_so_and_shows_the_results_as_they_are_now(
    server: RunningServer, name: str, value: str
) -> None:
    memory = save(server, text="Odd search bounds are told", project="oddsearch")
    told = {
        "upto": "This link's upto= is not a memory id: the list is shown as it is now.",
        "at": "This link's at= is not a time: the results are ranked as they are now.",
    }[name]
    for search in ("q=odd+search+bounds", "file=&q=told&order=date_desc"):
        reply = server.request("GET", f"/?project=oddsearch&{search}&offset=0&{name}={value}")
        assert reply.status == 200, reply.body[:300]
        body = reply.body.decode()
        assert told.replace("'", "&#39;") in body and "Traceback" not in body
        assert listed(reply.body) == [memory]
        rows = server.request("GET", f"/memories/rows?project=oddsearch&{search}&{name}={value}")
        assert rows.status == 200 and listed(rows.body) == [memory]


def test_a_search_bound_above_every_id_or_a_time_to_come_is_no_odd_bound(
    server: RunningServer,
) -> None:
    memory = save(server, text="Bounds from the future", project="farbounds")
    reply = server.request(
        "GET", "/?project=farbounds&q=future&upto=999999999999999&at=999999999999999&offset=0"
    )
    assert reply.status == 200 and listed(reply.body) == [memory]
    assert "This link&#39;s" not in reply.body.decode()
    both = server.request("GET", "/?project=farbounds&q=future&upto=x&at=y")
    assert "not a memory id" in both.body.decode() and "not a time" in both.body.decode()


@pytest.mark.parametrize(
    ("filters", "told"),
    [
        ("order=bogus", "order must be one of: relevance, date_desc, date_asc."),
        ("order=newest", "order must be one of: relevance, date_desc, date_asc."),
        ("type=bogus", "type must be one of: decision, gotcha, bugfix, feature,"),
        ("since=someday", "since must be an ISO 8601 date, date-time or epoch milliseconds."),
    ],
)
def test_a_filter_the_search_refuses_is_refused_without_a_query_too(
    server: RunningServer, filters: str, told: str
) -> None:
    """Listing with no query takes the search's checks: one answer for one filter."""
    for listing in ("", "q=filler&", "dismissed=1&", "project=*&"):
        reply = server.request("GET", f"/?{listing}{filters}", headers={"Accept": "text/html"})
        assert reply.status == 400, (listing, reply.body[:300])
        assert told in reply.body.decode() and "Traceback" not in reply.body.decode()
        rows = server.request("GET", f"/memories/rows?{listing}{filters}")
        assert rows.status == 400 and told in rows.body.decode()
    for order in ("relevance", "date_desc", "date_asc"):  # with no query: newest or oldest first
        assert server.request("GET", f"/?order={order}").status == 200
