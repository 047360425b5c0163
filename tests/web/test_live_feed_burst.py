"""The live Memories list when more memories arrive between two polls than one page holds: none
is skipped (on SQLite and on PostgreSQL), in a real Chromium whose poll timer the test drives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.stores import store_target
from tests.web.test_memories_page import shown_ids

pytestmark = pytest.mark.e2e

POLL_MS = 3000  # ui.js's
BURST = 70  # more than the 50 a page holds


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, store_kind: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("web-burst")
    store = store_target(request, store_kind, folder)
    env = {} if isinstance(store, Path) else {"ALETHEIA_HUB_DB": store}
    with running_server(folder, env=env) as running:
        yield running


def save(server: RunningServer, text: str, project: str) -> int:
    reply = server.api("POST", "/api/memories", {"text": text, "project": project})
    assert reply.status == 201, reply.body
    return int(reply.json()["memory"]["id"])


def test_a_burst_larger_than_a_page_between_two_polls_skips_no_memory(
    server: RunningServer, page: Page
) -> None:
    before = [save(server, f"Before the burst {n}", "burst") for n in range(30)]
    page.clock.install()  # the poll runs when the test moves the page's clock, not before
    page.goto(server.url + "/?project=burst")
    assert shown_ids(page) == before[::-1]
    burst = [save(server, f"Burst note {n}", "burst") for n in range(BURST)]
    page.clock.run_for(POLL_MS)
    notice = page.locator("#feed-more")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("More than 50 new memories")
    # The list has no hole: what it shows is what it showed, and it stops feeding itself.
    assert shown_ids(page) == before[::-1]
    expect(page.locator("#memories")).not_to_have_attribute("data-live", "1")
    page.clock.run_for(POLL_MS)
    assert shown_ids(page) == before[::-1]
    # The notice's link shows the list as it is now, and More leads on without a gap.
    notice.get_by_role("link").click()
    expect(page.locator("#feed-more")).to_be_hidden()
    everything = before + burst
    assert shown_ids(page) == everything[:-51:-1]
    page.locator("#more").get_by_role("link", name="More").click()
    expect(page.locator("#results-label")).to_have_text("Newest first.")
    assert shown_ids(page) == everything[-51::-1]


def test_a_few_new_memories_still_join_the_list_at_the_top(
    server: RunningServer, page: Page
) -> None:
    first = save(server, "A quiet project's first note", "quiet")
    page.clock.install()
    page.goto(server.url + "/?project=quiet")
    fresh = [save(server, f"Quiet note {n}", "quiet") for n in range(50)]  # exactly a page
    page.clock.run_for(POLL_MS)
    expect(page.locator("#memories li[data-id]")).to_have_count(51)
    assert shown_ids(page) == [*fresh[::-1], first]
    expect(page.locator("#feed-more")).to_be_hidden()
