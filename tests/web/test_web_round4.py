"""A daily web user's fourth round: a New list or a rename never brings a dismissed list back
over its items, notices claim only what happened (this browser's own redirect signed them, or
the page's state proves them), a renamed list's old name still leads somewhere, and small
pages (sign-in without a key, a re-enabled rule, an offset past the end, a refused rule, the
favicon) say what is true."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer
from tests.web.browser import axe_violations
from tests.web.test_daily_user import browser_token, text_of
from tests.web.test_list_rename import write_list
from tests.web.test_web_security import form_post

pytestmark = pytest.mark.e2e


def dismiss(server: RunningServer, memory_id: int, reason: str) -> None:
    reply = server.api("POST", f"/api/memories/{memory_id}/dismiss", {"reason": reason})
    assert reply.status == 200, reply.body


def stored_text(server: RunningServer, memory_id: int) -> str:
    text: str = server.api("GET", f"/api/memories/{memory_id}").json()["text"]
    return text


def test_a_new_list_or_a_rename_onto_a_dismissed_list_is_refused(server: RunningServer) -> None:
    old = write_list(server, "errands", ["post office", "bank"])
    dismiss(server, old, "done for the week")
    fields = {"name": "errands", "items": "pharmacy", "editing": ""}
    reply = form_post(server, "/lists/save", fields)
    assert reply.status == 409
    page = text_of(reply)
    assert "A dismissed list named “errands” exists: restore it to edit it." in page
    assert f'href="/memories/{old}"' in page
    assert ">pharmacy</textarea>" in page and 'value="errands"' in page
    assert server.api("GET", f"/api/memories/{old}").json()["dismissed_at"] is not None
    assert stored_text(server, old) == '["post office","bank"]'  # its items kept
    # A rename onto it is refused too: it was not renamed to the list being edited.
    write_list(server, "chores", ["laundry"])
    fields = {"name": "errands", "items": "laundry", "editing": "chores"}
    assert form_post(server, "/lists/save", fields).status == 409
    assert stored_text(server, old) == '["post office","bank"]'
    assert server.api("GET", "/api/work-state/chores").status == 200


def test_a_dismissed_list_in_the_way_is_restored_from_its_page(
    server: RunningServer, page: Page
) -> None:
    old = write_list(server, "packing", ["tent", "stove"])
    dismiss(server, old, "trip cancelled")
    page.goto(server.url + "/lists")
    page.get_by_label("List name").fill("packing")
    page.get_by_label("Items, one per line").fill("sunscreen")
    page.get_by_role("button", name="Save list").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("A dismissed list named “packing” exists: restore it to edit it.")
    expect(page.get_by_label("Items, one per line")).to_have_value("sunscreen")
    assert axe_violations(page) == []
    alert.get_by_role("link", name="Open its page").click()
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{old} restored.")
    assert server.api("GET", "/api/work-state/packing").json()["items"] == ["tent", "stove"]


def test_nothing_to_restore_shows_only_on_a_memory_that_is_not_dismissed(
    server: RunningServer,
) -> None:
    memory = write_list(server, "notes-for-restore", ["a"])
    told = f"Nothing to restore: memory #{memory} is not dismissed."
    token = browser_token(server)
    restored = form_post(server, f"/memories/{memory}/restore", {}, token)
    address = restored.header("location") or ""
    assert address.startswith(f"/memories/{memory}?done=not-dismissed&signed=")
    mine = {"Cookie": f"aletheia_csrf={token}"}
    assert told in text_of(server.request("GET", address, headers=mine))  # true: not dismissed
    crafted = f"/memories/{memory}?done=not-dismissed"
    assert told not in text_of(server.request("GET", crafted, headers=mine))  # made elsewhere
    dismiss(server, memory, "stale")
    assert told not in text_of(server.request("GET", address, headers=mine))  # a reload


def test_a_link_made_elsewhere_shows_no_notice_of_an_action(server: RunningServer) -> None:
    token = browser_token(server)
    added = form_post(server, "/rules/add", {"then": "Tag releases from main"}, token)
    rules = server.api("GET", "/api/rules").json()["rules"]
    (rule_id,) = [rule["id"] for rule in rules if rule["then"] == "Tag releases from main"]
    write_list(server, "crafted", ["x"])
    crafted = {
        "/rules?done=added": "Rule added.",
        "/rules?done=disable": "Rule disabled.",
        "/rules?done=confirm": "Rule confirmed.",
        "/rules?" + urlencode({"done": "exists", "rule": rule_id}): "Rule already saved",
        "/lists?project=shop&name=crafted&done=renamed": "List renamed.",
        "/lists?project=shop&name=crafted&done=saved": "List saved.",
    }
    for address, notice in crafted.items():
        for signed in ("", "&signed=" + "0" * 64):
            assert notice not in text_of(server.request("GET", address + signed)), address
    # This browser's own redirect after its action shows it; another browser's copy does not.
    location = added.header("location") or ""
    mine = {"Cookie": f"aletheia_csrf={token}"}
    assert "Rule added." in text_of(server.request("GET", location, headers=mine))
    theirs = {"Cookie": f"aletheia_csrf={browser_token(server)}"}
    assert "Rule added." not in text_of(server.request("GET", location, headers=theirs))


def test_after_a_rename_the_old_name_leads_to_its_dismissed_list(
    server: RunningServer, page: Page
) -> None:
    old = write_list(server, "roadmap", ["q3 launch"])
    page.goto(server.url + "/lists?project=shop&name=roadmap")
    page.get_by_label("List name").fill("roadmap-2026")
    page.get_by_role("button", name="Save list").click()
    status = page.get_by_role("status")
    told = "The list “roadmap” is dismissed; its page restores it."
    expect(status).to_have_text("List renamed. " + told)
    expect(status.get_by_role("link", name="its page")).to_have_attribute(
        "href", f"/memories/{old}"
    )
    page.go_back()  # the old name's page: where it went, not a 404
    expect(page.get_by_role("status")).to_have_text(told)
    expect(page.get_by_role("heading", name="New list")).to_be_visible()
    assert axe_violations(page) == []
    page.get_by_role("status").get_by_role("link", name="its page").click()
    expect(page.get_by_role("button", name="Restore")).to_be_visible()
    reply = server.request("GET", "/lists?" + urlencode({"project": "shop", "name": "roadmap"}))
    assert reply.status == 200
    assert f'The list “roadmap” is dismissed; <a href="/memories/{old}">' in text_of(reply)


def test_sign_in_without_a_key_says_there_is_nothing_to_sign_in_to(server: RunningServer) -> None:
    reply = server.request("GET", "/sign-in?next=/rules")
    page = text_of(reply)
    assert reply.status == 200
    assert "This server is protected by" not in page and 'name="key"' not in page
    assert "has no <code>ALETHEIA_API_KEY</code> set: there is nothing to sign in to." in page
    assert '<a href="/rules">Continue</a>' in page


def test_adding_a_disabled_rule_again_says_it_is_enabled_again(
    server: RunningServer, page: Page
) -> None:
    page.goto(server.url + "/rules")
    page.get_by_label("Rule", exact=True).fill("Rebase before you push")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("status")).to_have_text("Rule added.")
    row = page.locator("tr.rule", has_text="Rebase before you push")
    rule_id = row.get_attribute("data-rule")
    row.get_by_role("button", name="Disable").click()
    expect(page.get_by_role("status")).to_have_text("Rule disabled.")
    page.get_by_label("Rule", exact=True).fill("Rebase before you push")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Rule already saved ({rule_id}); it was disabled and is enabled again."
    )
    expect(row.get_by_role("button", name="Disable")).to_be_visible()
    # Added once more while enabled: the CLI's words.
    page.get_by_label("Rule", exact=True).fill("Rebase before you push")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Rule already saved ({rule_id}). An identical rule is not added twice."
    )


def test_an_offset_past_the_end_is_an_empty_page_without_more(server: RunningServer) -> None:
    write_list(server, "offset-check", ["x"])
    server.api("POST", "/api/memories", {"text": "Deploys go through the staging cluster"})
    for offset in ("999999999999999999999", "1000000", "5000"):
        for query in ("", "&q=staging"):
            page = text_of(server.request("GET", f"/?offset={offset}{query}"))
            assert "No more memories: this page is past the end of the list." in page, offset
            assert '<p id="more" hidden>' in page
            assert "staging cluster" not in page
    page = text_of(server.request("GET", "/rules?offset=999999999999999999999"))
    assert "Add a rule" in page


def test_a_refused_rule_keeps_the_form_as_typed(server: RunningServer, page: Page) -> None:
    page.goto(server.url + "/rules")
    page.get_by_label("Rule", exact=True).fill("Cite the ticket in each commit")
    page.get_by_label("When").fill("you commit")
    page.get_by_label("Scope").select_option("situation")
    page.get_by_label("Project or situation name").fill("hotfix")
    page.get_by_label("Evidence memories (ids)").fill("999999")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("alert")).to_have_text("Unknown evidence memory id #999999.")
    expect(page.get_by_role("heading", name="Rules", exact=True)).to_be_visible()
    expect(page.get_by_label("Rule", exact=True)).to_have_value("Cite the ticket in each commit")
    expect(page.get_by_label("When")).to_have_value("you commit")
    expect(page.get_by_label("Scope")).to_have_value("situation")
    expect(page.get_by_label("Project or situation name")).to_have_value("hotfix")
    expect(page.get_by_label("Evidence memories (ids)")).to_have_value("999999")
    assert axe_violations(page) == []
    reply = form_post(server, "/rules/add", {"then": "x", "evidence_fact_ids": "a, b"})
    assert reply.status == 400
    assert "Evidence facts must be ids like 12, 15." in text_of(reply)
    assert 'value="a, b"' in text_of(reply)


def test_pages_ask_for_no_address_that_is_missing(server: RunningServer, page: Page) -> None:
    missing: list[str] = []
    page.on(
        "response", lambda response: missing.append(response.url) if response.status >= 400 else 0
    )
    for path in ("/", "/rules", "/lists", "/nope"):
        page.goto(server.url + path)
    page.wait_for_load_state("networkidle")
    assert missing == [server.url + "/nope"]
    icon = server.request("GET", "/favicon.ico")
    assert icon.status == 200
    assert icon.header("content-type") == "image/svg+xml"
    assert icon.body.startswith(b"<svg")
