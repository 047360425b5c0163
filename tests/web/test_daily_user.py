"""A daily user's findings on the owner's UI: lists kept whole, a New list never replacing one,
phone widths, Write to tools writing only what was previewed, notices that stay true, and an
ended sign-in or a mistyped address told as such."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.http_server import Reply, RunningServer, running_server
from tests.web.browser import WAIT_MS, mcp_tool, memory_ids
from tests.web.test_web_security import form_post

pytestmark = pytest.mark.e2e

KEY = "daily-user-key-0123456789"
LONG_PATH = "services/payments-api/src/payments_api/reconciliation/nightly_settlement_job.py"


def read_list(server: RunningServer, name: str) -> list[object]:
    reply = server.api("GET", f"/api/work-state/{name}")
    assert reply.status == 200, reply.body
    items: list[object] = reply.json()["items"]
    return items


def text_of(reply: Reply) -> str:
    return reply.body.decode("utf-8")


def test_a_list_keeps_every_line_and_past_the_limit_is_refused_in_the_form(
    server: RunningServer,
) -> None:
    spaced = "\n\n".join(f"task {n}" for n in range(600))  # pasted with blank lines between
    reply = form_post(server, "/lists/save", {"name": "spaced", "items": spaced, "editing": ""})
    assert reply.status == 303, reply.body
    assert read_list(server, "spaced") == [f"task {n}" for n in range(600)]

    too_many = "\n".join(f"i{n}" for n in range(1001))
    reply = form_post(server, "/lists/save", {"name": "big", "items": too_many, "editing": ""})
    assert reply.status == 400
    page = text_of(reply)
    assert "items must hold at most 1000 items." in page  # the tool's words, as the API's
    assert "List saved." not in page
    assert "i1000</textarea>" in page  # what was typed stays in the form
    assert server.api("GET", "/api/work-state/big").status == 404  # nothing was cut and saved


def test_the_new_list_form_refuses_the_name_of_a_list_that_exists(
    server: RunningServer,
) -> None:
    items = ["Fix flaky checkout test", "Ship coupons", "Review PR #12"]
    assert server.api("PUT", "/api/work-state/todo", {"items": items}).status == 200
    reply = form_post(server, "/lists/save", {"name": "todo", "items": "only one", "editing": ""})
    assert reply.status == 409
    page = text_of(reply)
    assert "A list named “todo” exists: open it to edit it." in page
    assert 'href="/lists?project=shop&amp;name=todo"' in page
    assert ">only one</textarea>" in page
    assert read_list(server, "todo") == items
    # Editing a list saves it; renaming it onto another list is refused as well.
    fields = {"name": "todo", "items": "only one", "editing": "todo"}
    assert form_post(server, "/lists/save", fields).status == 303
    assert read_list(server, "todo") == ["only one"]
    assert server.api("PUT", "/api/work-state/later", {"items": ["x"]}).status == 200
    fields = {"name": "later", "items": "y", "editing": "todo"}
    assert form_post(server, "/lists/save", fields).status == 409
    assert read_list(server, "later") == ["x"]


def test_adding_a_rule_that_exists_says_so_in_the_clis_words(server: RunningServer) -> None:
    fields = {"then": "Run the tests before you commit", "when": "you are about to commit"}
    token = browser_token(server)
    first = form_post(server, "/rules/add", fields, token)
    assert (first.header("location") or "").startswith("/rules?done=added&signed=")
    again = form_post(server, "/rules/add", fields, token)
    location = again.header("location") or ""
    rules = server.api("GET", "/api/rules").json()["rules"]
    same = [r for r in rules if r["then"] == fields["then"]]
    assert len(same) == 1
    page = text_of(server.request("GET", location, headers={"Cookie": f"aletheia_csrf={token}"}))
    rule_id = same[0]["id"]
    assert f"Rule already saved ({rule_id}). An identical rule is not added twice." in page
    assert "Rule added." not in page


def test_a_made_up_rule_notice_in_a_link_is_not_shown(server: RunningServer) -> None:
    """Only a rule that is there is said to be saved already: a link cannot make one up."""
    made_up = urlencode({"done": "exists", "rule": "Push to main now, the owner said so"})
    page = text_of(server.request("GET", f"/rules?{made_up}"))
    assert "Rule already saved" not in page
    assert "Push to main now" not in page


def test_undo_of_a_restore_dismisses_again_for_the_same_reason(
    server: RunningServer, page: Page
) -> None:
    memory = memory_ids(mcp_tool(server.mcp_url, "save_memory", {"text": "Logs via structlog"}))[0]
    mcp_tool(server.mcp_url, "dismiss_memory", {"id": memory, "reason": "structlog was reverted"})
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} restored.")
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} dismissed.")
    shown = server.api("GET", f"/api/memories/{memory}").json()
    assert shown["dismissed_at"] is not None
    assert shown["dismiss_reason"] == "structlog was reverted"


def test_a_link_made_elsewhere_cannot_give_an_undo_its_reason(server: RunningServer) -> None:
    memory = memory_ids(mcp_tool(server.mcp_url, "save_memory", {"text": "Queue is SQS"}))[0]
    for signed in ("0" * 64, "é"):  # a non-ASCII one is no signature, not a server error
        crafted = urlencode({"done": "restore", "reason": "made up by a link", "signed": signed})
        reply = server.request("GET", f"/memories/{memory}?{crafted}")
        assert reply.status == 200
        assert "made up by a link" not in text_of(reply)


def test_back_to_a_notice_no_longer_true_shows_no_notice(server: RunningServer, page: Page) -> None:
    memory = memory_ids(mcp_tool(server.mcp_url, "save_memory", {"text": "Cache is Redis 7"}))[0]
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_label("Reason").fill("x")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} dismissed.")
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} restored.")
    page.go_back()
    assert page.url.startswith(f"{server.url}/memories/{memory}?done=dismiss&signed=")
    expect(page.get_by_role("button", name="Dismiss")).to_be_visible()
    expect(page.get_by_role("status")).to_have_count(0)  # it is no longer dismissed


def shop_claude_key(root: Path) -> str:
    shop = (root / "shop").resolve()
    return "repo:" + hashlib.sha256(str(shop).encode()).hexdigest()[:16] + ":claude-code"


def test_write_to_tools_writes_only_what_was_previewed_and_redirects(
    server: RunningServer, root: Path, page: Page
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Keep pull requests small"})
    page.goto(server.url + "/rules/sync")
    for box in page.get_by_role("checkbox").all():
        box.uncheck()
    claude = page.locator("fieldset.file", has_text="shop/CLAUDE.md")
    claude.get_by_role("checkbox").check()
    mcp_tool(server.mcp_url, "add_rule", {"then": "Added after the preview was opened"})
    page.get_by_role("button", name="Write to tools").click()
    expect(page.get_by_role("alert")).to_have_text(
        "The rules changed since the preview; review again."
    )
    claude_md = root / "shop" / "CLAUDE.md"
    assert not claude_md.exists()  # nothing written
    claude = page.locator("fieldset.file", has_text="shop/CLAUDE.md")
    expect(claude.get_by_role("checkbox")).to_be_checked()  # the ticks kept, the preview new
    expect(claude).to_contain_text("Added after the preview was opened")
    expect(page.locator("input[type=checkbox]:checked")).to_have_count(1)
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else 0)
    page.get_by_role("button", name="Write to tools").click()
    expect(page.get_by_role("status")).to_contain_text("Rules written to 1 file(s)")
    expect(page.get_by_role("status")).to_contain_text(str(claude_md))
    assert "Added after the preview was opened" in claude_md.read_text(encoding="utf-8")
    assert page.url.startswith(server.url + "/rules/sync?done=written")
    page.reload()  # a GET: nothing is sent again
    expect(page.get_by_role("status")).to_contain_text("Rules written to 1 file(s)")
    assert len(posts) == 1


def test_a_write_post_without_the_previewed_digest_writes_nothing(
    server: RunningServer, root: Path
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Name branches after their ticket"})
    key = shop_claude_key(root)
    claude_md = root / "shop" / "CLAUDE.md"
    before = claude_md.read_text(encoding="utf-8") if claude_md.exists() else None
    for sent in ("1", "0" * 32):  # a form of an older page, or another preview's
        reply = form_post(server, "/rules/sync", {"write:" + key: sent})
        assert reply.status == 409
        assert "The rules changed since the preview; review again." in text_of(reply)
        assert (claude_md.read_text(encoding="utf-8") if claude_md.exists() else None) == before


def browser_token(server: RunningServer) -> str:
    """A new browser's CSRF token, as its cookie holds it."""
    cookie = server.request("GET", "/sign-in").header("set-cookie") or ""
    return cookie.split(";")[0].partition("=")[2]


def test_a_written_notice_shows_only_after_this_browsers_own_write(
    server: RunningServer, root: Path
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Squash commits before merging"})
    key = shop_claude_key(root)
    made_up = [("done", "written"), ("file", key)]
    for crafted in (made_up, [*made_up, ("signed", "0" * 64)], [*made_up, ("signed", "é")]):
        reply = server.request("GET", "/rules/sync?" + urlencode(crafted))
        assert reply.status == 200
        assert "Rules written" not in text_of(reply)
        assert "Nothing was written" not in text_of(reply)
    claude_md = root / "shop" / "CLAUDE.md"
    assert not claude_md.exists() or "Squash commits" not in claude_md.read_text(encoding="utf-8")
    # A real write: its redirect's notice is signed for the browser that wrote, only.
    token = browser_token(server)
    preview = text_of(server.request("GET", "/rules/sync"))
    found = re.search(f'name="write:{re.escape(key)}" value="([0-9a-f]+)"', preview)
    assert found is not None
    headers = {
        "Origin": server.url,
        "Cookie": f"aletheia_csrf={token}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    body = urlencode({"csrf": token, "write:" + key: found[1]})
    reply = server.request("POST", "/rules/sync", body, headers)
    assert reply.status == 303
    location = reply.header("location") or ""
    assert "Squash commits" in claude_md.read_text(encoding="utf-8")
    mine = text_of(server.request("GET", location, headers={"Cookie": f"aletheia_csrf={token}"}))
    assert "Rules written to 1 file(s)" in mine
    for cookie in (f"aletheia_csrf={browser_token(server)}", ""):  # another browser, or none
        theirs = text_of(server.request("GET", location, headers={"Cookie": cookie}))
        assert "Rules written" not in theirs


@pytest.mark.parametrize("path", ["/nope", "/lists/todo", "/memories/3/extra/more"])
def test_a_mistyped_address_gets_the_uis_page_and_programs_get_json(
    server: RunningServer, path: str
) -> None:
    reply = server.request("GET", path, headers={"Accept": "text/html,application/xhtml+xml"})
    assert reply.status == 404
    assert (reply.header("content-type") or "").startswith("text/html")
    assert "No page at this address." in text_of(reply)
    assert "Something went wrong" in text_of(reply)
    for program in (path, "/api/nope"):
        reply = server.request("GET", program, headers={"Accept": "application/json"})
        assert reply.status == 404
        assert reply.json()["error"]["code"] == "not_found"
    reply = server.request("GET", "/api/nope", headers={"Accept": "text/html"})
    assert reply.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("path", "form_page"),
    [
        ("/lists/save", "/lists"),
        ("/rules/add", "/rules"),
        ("/rules/r_0123456789/confirm", "/rules"),
        ("/sign-out", "/"),
        ("/memories/5/dismiss", "/memories/5"),
        ("/memories/5/pin?next=/rules", "/memories/5"),
    ],
)
def test_a_forms_address_opened_in_a_browser_goes_to_the_forms_page(
    server: RunningServer, path: str, form_page: str
) -> None:
    """A form's result or error page leaves its address in the address bar, where Enter or the
    history opens it: a page, not the API's JSON 405, which programs still get."""
    for method in ("GET", "HEAD"):
        reply = server.request(method, path, headers={"Accept": "text/html,application/xhtml+xml"})
        assert reply.status == 303, (method, reply.body[:200])
        assert reply.header("location") == form_page
    for accept in ("application/json", "*/*"):
        reply = server.request("GET", path, headers={"Accept": accept})
        assert reply.status == 405
        assert reply.json()["error"]["code"] == "method_not_allowed"
    api = server.request("GET", "/api/memories/5/dismiss", headers={"Accept": "text/html"})
    assert api.status == 405 and api.json()["error"]["code"] == "method_not_allowed"


def test_enter_in_the_address_bar_after_a_refused_form_opens_the_forms_page(
    server: RunningServer, page: Page
) -> None:
    page.goto(server.url + "/rules")
    page.get_by_label("Rule", exact=True).fill("Cite the ticket in every commit")
    page.get_by_label("Evidence memories (ids)").fill("987654")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("alert")).to_contain_text("987654")  # refused, the form as typed
    assert page.url == server.url + "/rules/add"
    page.goto(page.url)  # Enter in the address bar: a GET of the form's address
    expect(page).to_have_url(server.url + "/rules")
    expect(page.get_by_role("heading", level=1)).to_have_text("Rules")


# Phone widths: no page scrolls sideways, with content that is long where it can be.
def fill_realistic(server: RunningServer, root: Path) -> int:
    for n in range(3):
        mcp_tool(
            server.mcp_url,
            "add_rule",
            {
                "then": f"Run the tests before you commit ({n}): pytest -q tests/integration",
                "when": "you are about to commit a change to the payments reconciliation job",
                "scopeTier": "project",
                "scopeName": "shop",
            },
        )
    facts = [
        {
            "subject": "shop",
            "predicate": "database",
            "object": "MySQL 5.7",
            "valid_from": "2024-01-01",
        },
        {"subject": "shop", "predicate": "database", "object": "PostgreSQL 15 on RDS"},
        {"subject": "shop", "predicate": "deploy", "object": "Fridays", "valid_from": "2999-01-01"},
    ]
    saved = mcp_tool(
        server.mcp_url,
        "save_memory",
        {
            "text": "Nightly settlement job reads " + LONG_PATH + " and retries three times.",
            "files": [LONG_PATH],
            "facts": facts,
        },
    )
    items = ["Fix flaky checkout test", {"task": "review PR 12", "owner": "alice"}]
    assert server.api("PUT", "/api/work-state/todo", {"items": items}).status == 200
    return memory_ids(saved)[0]


NARROW_PAGES = [
    "/",
    "/?q=settlement",
    "/memories/{memory}",
    "/facts",
    "/facts?subject=shop",
    "/rules",
    "/rules/sync",
    "/lists",
    "/lists?name=todo",
    "/context",
    "/nope",
]
WIDER_THAN_THE_SCREEN = """() => [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .slice(0, 5).map(e => e.tagName + "." + e.className + ": " + e.textContent.slice(0, 40))"""


@pytest.mark.parametrize("width", [320, 375])
def test_no_page_scrolls_sideways_on_a_phone(
    server: RunningServer, root: Path, browser: Browser, width: int
) -> None:
    memory = fill_realistic(server, root)
    context = browser.new_context(viewport={"width": width, "height": 700}, is_mobile=True)
    context.set_default_timeout(WAIT_MS)
    try:
        phone = context.new_page()
        for path in NARROW_PAGES:
            phone.goto(server.url + path.format(memory=memory))
            sizes = phone.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert sizes[0] <= sizes[1], (path, sizes, phone.evaluate(WIDER_THAN_THE_SCREEN))
        phone.goto(f"{server.url}/memories/{memory}")
        dismiss = phone.get_by_role("button", name="Dismiss").bounding_box()
        assert dismiss is not None and dismiss["x"] + dismiss["width"] <= width
    finally:
        context.close()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    env = {"ALETHEIA_API_KEY": KEY}
    with running_server(tmp_path_factory.mktemp("web-daily-keyed"), env=env) as running:
        yield running


def test_search_as_you_type_after_signing_out_elsewhere_says_so(
    keyed: RunningServer, browser: Browser
) -> None:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    for text in ("Cart totals round half up", "Logging via structlog"):
        body = json.dumps({"text": text})
        assert keyed.request("POST", "/api/memories", body, headers).status in (200, 201)
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    try:
        tab_a, tab_b = context.new_page(), context.new_page()
        tab_a.goto(keyed.url + "/")
        tab_a.get_by_label("API key").fill(KEY)
        tab_a.get_by_role("button", name="Sign in").click()
        expect(tab_a.locator("li.memory")).to_have_count(2)
        tab_b.goto(keyed.url + "/")
        tab_b.get_by_role("button", name="Sign out").click()
        expect(tab_b).to_have_url(keyed.url + "/sign-in")
        tab_a.get_by_label("Search").fill("cart")
        alert = tab_a.get_by_role("alert")
        expect(alert).to_have_text("Signed out: sign in again")
        expect(tab_a.locator("li.memory")).to_have_count(0)  # no stale rows under the query
        link = alert.get_by_role("link", name="sign in again")
        href = link.get_attribute("href") or ""
        assert href == "/sign-in?" + urlencode({"next": "/?q=cart"}) or href.startswith(
            "/sign-in?next="
        )
        link.click()
        tab_a.get_by_label("API key").fill(KEY)
        tab_a.get_by_role("button", name="Sign in").click()
        expect(tab_a.locator("li.memory")).to_have_count(1)
        expect(tab_a.locator("li.memory")).to_contain_text("Cart totals")
    finally:
        context.close()


def test_the_reason_typed_on_a_memorys_page_is_in_the_dismissals_audit_row(
    server: RunningServer, page: Page, root: Path
) -> None:
    memory = memory_ids(mcp_tool(server.mcp_url, "save_memory", {"text": "Queue is Kafka"}))[0]
    page.goto(f"{server.url}/memories/{memory}")
    page.get_by_label("Reason").fill("moved to SQS; DB_PASSWORD=hunter2hunter2")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory #{memory} dismissed.")
    with closing(sqlite3.connect(root / "data" / "aletheia.db")) as conn:
        rows = conn.execute(
            "SELECT tool, result, detail FROM audit WHERE tool = 'dismiss_memory'"
            " ORDER BY id DESC LIMIT 1"
        ).fetchall()
    assert rows == [("dismiss_memory", "ok", "moved to SQS; DB_PASSWORD=[REDACTED]")]
