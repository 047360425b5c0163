"""Every page of a store whose every field holds bidi, zero-width and control characters, in a
real Chromium: no such character reaches what the owner reads (text, a field's value, an option,
a tooltip), and a form sent back unchanged keeps the stored values exactly."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import mcp_tool, memory_ids

pytestmark = pytest.mark.e2e

# A right-to-left override, an isolate, zero-width and mark characters, an Arabic letter mark,
# an escape sequence, a C1 control and a line separator: each reorders, hides or fakes text.
HOSTILE = "\u202eexe.txt\u2066 bidi \u200b\u200d\u200f\u061c \x1b[31m\x85\u2028 end"
PROJECT = "proj" + HOSTILE
LIST = "list " + HOSTILE
SUBJECT = "subject " + HOSTILE
SHOWN = "\\u202eexe.txt\\u2066 bidi \\u200b\\u200d\\u200f\\u061c \\x1b[31m\\x85\\u2028 end"
ITEMS = [HOSTILE, {"k": HOSTILE}, "#1 " + HOSTILE, "\\u202e is six characters"]
SEEDED = "proj-seeded"  # the project the tools write, renamed to PROJECT in the store
LISTS = "lists"  # the list's project, kept: a project with such characters takes no write

# What the owner can read: every text node (the page's title and SVG tooltips too), the value
# of every field that shows one, each option's label, and the attributes a browser shows or
# reads aloud. Hidden inputs and option values are sent back, never shown.
FIND_RAW = r"""() => {
  const raw = /[^\P{Cc}\n\t]|\p{Cf}|\p{Zl}|\p{Zp}/u;
  const found = [];
  const note = (where, text) => { if (text && raw.test(text)) found.push([where, text]); };
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode()); ) note(node.parentElement.tagName, node.data);
  for (const field of document.querySelectorAll("input:not([type=hidden]), textarea")) {
    note(field.tagName + "#" + field.id + " value", field.value);
  }
  for (const option of document.querySelectorAll("option")) note("option label", option.label);
  for (const element of document.querySelectorAll("[title], [aria-label], [placeholder], [alt]")) {
    for (const name of ["title", "aria-label", "placeholder", "alt"]) {
      note(element.tagName + " @" + name, element.getAttribute(name));
    }
  }
  return found;
}"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("web-shown")


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RunningServer]:
    (root / "home").mkdir()
    with running_server(root, env={"HOME": str(root / "home")}) as running:
        yield running


@pytest.fixture(scope="module")
def memory_id(server: RunningServer, root: Path) -> int:
    """The store a hostile memory author leaves, through the tools, every field seeded; the
    project name, which the tools now refuse with such characters, as a store of release 0.4.1
    may hold it (written into the store by hand)."""
    url = server.mcp_url
    facts = [{"subject": SUBJECT, "predicate": "pred " + HOSTILE, "object": "value " + HOSTILE}]
    saved = mcp_tool(
        url,
        "save_memory",
        {
            "text": "text " + HOSTILE + "\nsecond line",
            "title": "title " + HOSTILE,
            "project": SEEDED,
            "kind": "kind" + HOSTILE,
            "facts": facts,
            "files": ["src/" + HOSTILE + ".py"],
        },
    )
    found = memory_ids(saved)[0]
    other = mcp_tool(url, "save_memory", {"text": "other", "project": SEEDED})
    mcp_tool(url, "dismiss_memory", {"id": memory_ids(other)[0], "reason": "reason " + HOSTILE})
    rule = {"then": "then " + HOSTILE, "when": "when " + HOSTILE}
    mcp_tool(url, "add_rule", {**rule, "scopeTier": "situation", "scopeName": "sit " + HOSTILE})
    mcp_tool(url, "add_rule", {**rule, "scopeTier": "project", "scopeName": SEEDED})
    mcp_tool(url, "add_rule", {"then": "everywhere " + HOSTILE})
    mcp_tool(url, "work_state_write", {"list": LIST, "items": ITEMS, "project": LISTS})
    _rename_project(root / "data" / "aletheia.db", SEEDED, PROJECT)
    return found


def _rename_project(store: Path, old: str, new: str) -> None:
    with closing(sqlite3.connect(store)) as db, db:
        for table in ("memories", "facts", "episodes", "memory_rank"):
            db.execute(f"UPDATE {table} SET project = ? WHERE project = ?", (new, old))
        db.execute("UPDATE rules SET scope_name = ? WHERE scope_name = ?", (new, old))


def _pages(memory_id: int) -> list[str]:
    project = urlencode({"project": PROJECT})
    return [
        "/",
        "/?" + urlencode({"q": "title", "project": PROJECT, "kind": "kind" + HOSTILE}),
        "/?" + urlencode({"file": "src/" + HOSTILE + ".py", "project": "*"}),
        "/?dismissed=1",
        f"/memories/{memory_id}",
        f"/memories/{memory_id + 1}",
        "/facts",
        "/facts?" + urlencode({"subject": SUBJECT, "project": PROJECT, "as_of": "2030-01-01"}),
        "/rules",
        "/rules/sync",
        "/lists?" + project,
        "/lists?" + urlencode({"project": LISTS, "name": LIST}),
        "/context?" + project,
    ]


def test_no_page_shows_a_raw_control_or_format_character_from_the_store(
    server: RunningServer, memory_id: int, page: Page
) -> None:
    raw = {}
    for path in _pages(memory_id):
        page.goto(server.url + path)
        assert page.title() != "Error · Aletheia", path
        found = page.evaluate(FIND_RAW)
        if found:
            raw[path] = found
    assert raw == {}
    # Shown as the escapes the CLI prints, not dropped.
    page.goto(server.url + "/rules")
    expect(page.locator("tr.rule strong").first).to_contain_text("\\u202eexe.txt\\u2066 bidi")


def test_a_list_saved_unchanged_keeps_its_name_and_items_exactly(
    server: RunningServer, memory_id: int, page: Page
) -> None:
    page.goto(server.url + "/lists?" + urlencode({"project": LISTS, "name": LIST}))
    expect(page.get_by_label("List name")).to_have_value("list " + SHOWN)
    shown_items = page.get_by_label("Items, one per line").input_value()
    assert '{"k": "\\u202eexe.txt\\u2066 bidi' in shown_items
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("status")).to_have_text("List saved.")
    read = mcp_tool(server.mcp_url, "work_state_read", {"list": LIST, "project": LISTS})
    assert json.loads(read[read.index("[") : read.rindex("]") + 1]) == ITEMS
    expect(page.locator("main ul li")).to_have_count(1)  # no second list named with escapes


def test_a_filter_sent_again_unchanged_still_names_the_stored_value(
    server: RunningServer, memory_id: int, page: Page
) -> None:
    page.goto(server.url + "/facts?" + urlencode({"project": PROJECT}))
    page.get_by_role("link", name="subject \\u202e", exact=False).click()
    expect(page.locator("section.track")).to_have_count(1)
    page.get_by_label("As of").fill("2030-01-01")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("section.track")).to_have_count(1)
    expect(page.locator("tr.fact-row")).to_contain_text("value \\u202e")
    page.goto(server.url + "/")
    page.get_by_label("Project").select_option(PROJECT)
    page.get_by_role("button", name="Search").click()
    expect(page.locator("li.memory")).to_have_count(1)
    page.goto(server.url + f"/memories/{memory_id}")
    page.get_by_role("link", name="src/" + SHOWN).click()
    expect(page.locator("li.memory")).to_have_count(1)
    page.get_by_role("button", name="Search").click()
    expect(page.locator("li.memory")).to_have_count(1)
