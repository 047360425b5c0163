"""A store with more projects than the Project list holds (500): Find project asks the server
for the projects starting with what is typed, so every project can be chosen, in a real
Chromium (the Memories page with its script, the Lists and Facts pages without)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from aletheia_mem.clock import system_clock
from aletheia_mem.domain.memories import FactInput, MemoryInput, save_memory
from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.http_server import RunningServer
from tests.web.browser import axe_violations

pytestmark = pytest.mark.e2e

PROJECTS = 520  # more than the 500 the list holds


def _name(number: int) -> str:
    return f"proj-{number:04d}"


@pytest.fixture(scope="module")
def crowded(root: Path, server: RunningServer) -> RunningServer:
    """The module's server, its store holding one note in each of 520 projects and a fact in
    one more project."""
    store = SqliteStore(root / "data" / "aletheia.db")
    try:
        for number in range(PROJECTS):
            item = MemoryInput(f"note of {_name(number)}", _name(number), "test")
            save_memory(store, system_clock, item)
        fact = FactInput(subject="db", predicate="engine", object="PostgreSQL 16")
        item = MemoryInput("db engine", "zz-facts", "test", facts=[fact])
        save_memory(store, system_clock, item)
    finally:
        store.close()
    return server


def _options(page: Page) -> list[str]:
    return page.locator("#project option").evaluate_all("options => options.map(o => o.value)")


def test_memories_find_project_lists_the_projects_past_the_first_500(
    crowded: RunningServer, page: Page
) -> None:
    page.goto(crowded.url + "/")
    options = _options(page)
    assert options[0] == "*" and len(options) == 501
    assert _name(519) not in options
    finder = page.get_by_label("Find project")
    expect(page.locator("#find-project-note")).to_contain_text("Only the first 500 projects")
    assert axe_violations(page) == []
    finder.fill("PROJ-051")  # typed in any case, as project keys are lower-case
    finder.press("Enter")
    page.wait_for_url("**find_project=PROJ-051**")
    assert _options(page) == ["*", *(_name(n) for n in range(510, 520))]
    expect(finder).to_have_value("proj-051")
    page.locator("#project").select_option(_name(519))
    expect(page.locator("#memories")).to_contain_text("note of proj-0519")
    expect(page.locator("#memories li[data-id]")).to_have_count(1)


def test_lists_and_facts_pages_find_a_project_without_the_script(
    crowded: RunningServer, page: Page
) -> None:
    page.goto(crowded.url + "/lists")
    # The first 500 projects, and the server's own project "shop" (holding nothing yet).
    assert _options(page) == [*(_name(n) for n in range(500)), "shop"]
    page.get_by_label("Find project").fill("proj-0519")
    page.get_by_label("Find project").press("Enter")
    assert _options(page) == [_name(519), "shop"]
    page.locator("#project").select_option(_name(519))
    page.get_by_role("button", name="Show").click()
    assert "project=proj-0519" in page.url
    expect(page.locator("#project")).to_have_value(_name(519))
    # The Facts page offers projects that hold only facts too, found the same way.
    page.goto(crowded.url + "/facts?find_project=zz")
    assert _options(page) == ["*", "zz-facts"]
    page.goto(crowded.url + "/facts?find_project=nothing-here")
    expect(page.locator("#find-project-note")).to_have_text("No project starts with that.")
    assert _options(page) == ["*"]
