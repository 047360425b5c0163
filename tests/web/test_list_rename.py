"""Renaming a list in its Edit form renames it: nothing live is left under the old name (the old
list is dismissed, restorable), the list keeps its pin and project, the rename is audited, and a
taken name changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer
from tests.web.browser import axe_violations, mcp_tool
from tests.web.test_daily_user import browser_token, read_list, text_of
from tests.web.test_web_security import form_post

pytestmark = pytest.mark.e2e

ALETHEIA = Path(sys.executable).parent / "aletheia"


def write_list(server: RunningServer, name: str, items: list[object]) -> int:
    reply = server.api("PUT", f"/api/work-state/{name}", {"items": items})
    assert reply.status == 200, reply.body
    list_id: int = reply.json()["id"]
    return list_id


def local_audit(root: Path) -> list[dict[str, object]]:
    """The store's audit rows as the real CLI prints them (``aletheia audit --local``)."""
    env = {**os.environ, "ALETHEIA_DATA_DIR": str(root / "data"), "HOME": str(root / "home")}
    done = subprocess.run(
        [str(ALETHEIA), "audit", "--local", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_a_renamed_list_leaves_no_live_copy_and_keeps_its_pin(
    server: RunningServer, root: Path
) -> None:
    list_id = write_list(server, "groceries", ["milk", {"item": "eggs", "count": 12}])
    assert server.api("POST", f"/api/memories/{list_id}/pin", {"pinned": True}).status == 200
    before = server.api("GET", f"/api/memories/{list_id}").json()
    items = 'milk\n{"item": "eggs", "count": 6}'
    fields = {"name": "shopping", "items": items, "editing": "groceries"}
    token = browser_token(server)
    reply = form_post(server, "/lists/save", fields, token)
    assert reply.status == 303, reply.body
    location = reply.header("location") or ""
    query = parse_qs(urlsplit(location).query)
    assert (query["name"], query["done"]) == (["shopping"], ["renamed"])
    cookie = {"Cookie": f"aletheia_csrf={token}"}
    assert "List renamed." in text_of(server.request("GET", location, headers=cookie))
    missing = server.api("GET", "/api/work-state/groceries")
    assert missing.status == 404
    assert read_list(server, "shopping") == ["milk", {"item": "eggs", "count": 6}]
    index = server.api("GET", "/api/work-state").json()["lists"]
    assert [entry["name"] for entry in index].count("groceries") == 0
    (new_id,) = [entry["id"] for entry in index if entry["name"] == "shopping"]
    after = server.api("GET", f"/api/memories/{new_id}").json()
    kept = ("project", "pinned", "kind")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert after["pinned"] is True
    assert after["title"] == "shopping list"
    # The old list is dismissed (restorable), its reason naming the new one.
    old = server.api("GET", f"/api/memories/{list_id}").json()
    assert old["dismissed_at"] is not None and old["dismiss_reason"] == "renamed to shopping"
    rows = [row for row in local_audit(root) if row["tool"] == "rename_list"]
    assert [(row["project"], row["result"]) for row in rows] == [("shop", "ok")]
    # The agent reads it under its new name only.
    assert "No list named" in mcp_tool(server.mcp_url, "work_state_read", {"list": "groceries"})
    assert "eggs" in mcp_tool(server.mcp_url, "work_state_read", {"list": "shopping"})


def test_a_rename_onto_a_taken_name_changes_nothing(server: RunningServer) -> None:
    write_list(server, "sprint", ["ship coupons"])
    write_list(server, "backlog", ["rewrite search"])
    fields = {"name": "backlog", "items": "changed", "editing": "sprint"}
    reply = form_post(server, "/lists/save", fields)
    assert reply.status == 409
    assert "A list named “backlog” exists: open it to edit it." in text_of(reply)
    assert read_list(server, "sprint") == ["ship coupons"]
    assert read_list(server, "backlog") == ["rewrite search"]


def test_a_rename_back_brings_the_first_list_back(server: RunningServer) -> None:
    first = write_list(server, "relaese", ["tag v3"])
    fields = {"name": "release-3", "items": "tag v3", "editing": "relaese"}
    assert form_post(server, "/lists/save", fields).status == 303
    back = {"name": "relaese", "items": "tag v3\nfix typo", "editing": "release-3"}
    reply = form_post(server, "/lists/save", back)
    assert reply.status == 303, reply.body
    assert read_list(server, "relaese") == ["tag v3", "fix typo"]
    assert server.api("GET", "/api/work-state/release-3").status == 404
    index = server.api("GET", "/api/work-state").json()["lists"]
    names = ("relaese", "release-3")
    assert [(e["name"], e["id"]) for e in index if e["name"] in names] == [("relaese", first)]


def test_a_list_is_renamed_from_its_edit_form(server: RunningServer, page: Page) -> None:
    mcp_tool(server.mcp_url, "work_state_write", {"list": "release", "items": ["tag v2"]})
    page.goto(server.url + "/lists")
    page.get_by_role("link", name="release", exact=True).click()
    page.get_by_label("List name").fill("release-2")
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("status")).to_have_text(
        "List renamed. The list “release” is dismissed; its page restores it."
    )
    expect(page.get_by_role("heading", name="Edit “release-2”")).to_be_visible()
    expect(page.get_by_role("link", name="release-2", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="release", exact=True)).to_have_count(0)
    expect(page.get_by_label("Items, one per line")).to_have_value("tag v2")
    assert axe_violations(page) == []


def test_show_dismissed_lists_a_list_renamed_away(server: RunningServer, page: Page) -> None:
    """Renaming plain to plain2 and back dismisses plain2: Show dismissed lists it (with its
    reason), where Restore brings it back; the live list stays on the Lists page only."""
    write_list(server, "plain", ["one"])
    for old, new in (("plain", "plain2"), ("plain2", "plain")):
        page.goto(server.url + "/lists?" + urlencode({"name": old}))
        page.get_by_label("List name").fill(new)
        page.get_by_role("button", name="Save list").click()
        expect(page.get_by_role("heading", name=f"Edit “{new}”")).to_be_visible()
    page.goto(server.url + "/")
    page.get_by_label("Show dismissed").check()
    page.get_by_role("button", name="Search").click()
    renamed = page.locator("#memories li.memory", has_text="plain2 list")
    expect(renamed).to_contain_text("renamed to plain")
    expect(page.locator("#memories li.memory", has_text="plain list")).to_have_count(0)
    renamed.get_by_role("link", name="plain2 list").click()
    page.get_by_role("button", name="Restore").click()
    assert read_list(server, "plain2") == ["one"]
    page.goto(server.url + "/")  # the live list: lists stay on the Lists page
    expect(page.locator("#memories li.memory", has_text="plain2 list")).to_have_count(0)
