"""An outside checker's fifth round of the web UI and JSON API: a list saved from a stale Edit
form never drops what an agent wrote meanwhile, lists named with "/" work through the API,
the dismiss reason's limit is one limit, JSON string fields take strings only, bodies and
addresses that are not UTF-8 are refused, API answers are never cached or sniffed, and a
browser refused at the front door sees a page."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.http_server import RunningServer, exchange_raw
from tests.web.browser import axe_violations, mcp_tool
from tests.web.test_daily_user import browser_token, read_list, text_of
from tests.web.test_list_rename import write_list
from tests.web.test_web_security import form_post

pytestmark = pytest.mark.e2e

BASED_ON = re.compile(r'name="based_on" value="([^"]*)"')


def based_on(page: str) -> str:
    found = BASED_ON.search(page)
    assert found is not None, "the Edit form carries no based_on field"
    return found.group(1)


def edit_form(server: RunningServer, token: str, name: str) -> str:
    cookie = {"Cookie": f"aletheia_csrf={token}", "Accept": "text/html"}
    reply = server.request("GET", f"/lists?project=shop&name={quote(name)}", headers=cookie)
    assert reply.status == 200, reply.body
    return text_of(reply)


def test_a_save_from_a_stale_edit_form_keeps_the_agents_items(server: RunningServer) -> None:
    write_list(server, "todo2", ["write tests"])
    token = browser_token(server)
    shown = based_on(edit_form(server, token, "todo2"))
    # An agent writes the list while the form is open.
    agent = {"items": ["write tests", "agent: fix the build"], "project": "shop"}
    assert server.api("PUT", "/api/work-state/todo2", agent).status == 200
    fields = {
        "project": "shop",
        "name": "todo2",
        "editing": "todo2",
        "items": "write tests\nmine: review",
        "based_on": shown,
    }
    refused = form_post(server, "/lists/save", fields, token)
    assert refused.status == 409, refused.body
    page = html.unescape(text_of(refused))
    assert "changed since you opened it" in page
    assert "List saved." not in page
    assert ">write tests\nmine: review</textarea>" in page  # the user's text is kept
    assert "agent: fix the build" in page  # and the list's items now are shown
    assert read_list(server, "todo2") == ["write tests", "agent: fix the build"]
    # Saving the refused form again is a choice made having seen the list: it replaces it.
    again = {**fields, "based_on": based_on(page)}
    assert again["based_on"] != shown
    saved = form_post(server, "/lists/save", again, token)
    assert saved.status == 303, saved.body
    assert read_list(server, "todo2") == ["write tests", "mine: review"]


def test_the_edit_form_tells_the_owner_the_list_changed_and_keeps_the_text(
    server: RunningServer, page: Page
) -> None:
    write_list(server, "sprint", ["plan"])
    page.goto(server.url + "/lists?project=shop&name=sprint")
    mcp_items = {"list": "sprint", "items": ["plan", "agent: ship it"], "project": "shop"}
    mcp_tool(server.mcp_url, "work_state_write", mcp_items)
    page.get_by_label("Items, one per line").fill("plan\nmine: demo")
    page.get_by_role("button", name="Save list").click()
    expect(page.get_by_role("alert")).to_contain_text("The list changed since you opened it")
    expect(page.get_by_label("Items, one per line")).to_have_value("plan\nmine: demo")
    expect(page.get_by_text("agent: ship it")).to_be_visible()
    assert axe_violations(page) == []
    assert read_list(server, "sprint") == ["plan", "agent: ship it"]
    page.get_by_role("button", name="Save list").click()  # having seen the list: replace it
    expect(page.get_by_role("status")).to_contain_text("List saved.")
    assert read_list(server, "sprint") == ["plan", "mine: demo"]


def test_an_unchanged_list_saves_from_its_edit_form(server: RunningServer) -> None:
    write_list(server, "calm", ["one"])
    token = browser_token(server)
    shown = based_on(edit_form(server, token, "calm"))
    fields = {"name": "calm", "editing": "calm", "items": "one\ntwo", "based_on": shown}
    assert form_post(server, "/lists/save", fields, token).status == 303
    assert read_list(server, "calm") == ["one", "two"]


def test_an_api_write_based_on_a_stale_reading_is_refused(server: RunningServer) -> None:
    write_list(server, "shared", ["x"])
    seen = server.api("GET", "/api/work-state/shared").json()["version"]
    assert server.api("PUT", "/api/work-state/shared", {"items": ["x", "y"]}).status == 200
    stale = server.api("PUT", "/api/work-state/shared", {"items": ["z"], "based_on": seen})
    assert stale.status == 409
    assert stale.json()["error"]["message"].startswith('The list "shared" changed since it was')
    renamed = {"to": "shared2", "items": ["z"], "based_on": seen}
    assert server.api("POST", "/api/work-state/shared/rename", renamed).status == 409
    assert read_list(server, "shared") == ["x", "y"]
    now = server.api("GET", "/api/work-state/shared").json()["version"]
    fresh = server.api("PUT", "/api/work-state/shared", {"items": ["z"], "based_on": now})
    assert fresh.status == 200 and read_list(server, "shared") == ["z"]
    gone = server.api("PUT", "/api/work-state/none-yet", {"items": ["a"], "based_on": now})
    assert gone.status == 409


def test_a_list_named_with_a_slash_works_through_the_api(server: RunningServer) -> None:
    path = "/api/work-state/feature%2Flogin"
    put = server.api("PUT", path, {"items": ["a", "b"]})
    assert put.status == 200, put.body
    assert put.json()["name"] == "feature/login"
    assert server.api("GET", path).json()["items"] == ["a", "b"]
    moved = server.api("POST", path + "/rename", {"to": "feature/signin", "items": ["c"]})
    assert moved.status == 200, moved.body
    assert read_list(server, "feature%2Fsignin") == ["c"]
    assert server.api("GET", path).status == 404


@pytest.mark.parametrize("path", ["/api/nothing", "/api/memories/1/nothing", "/api/"])
def test_unknown_api_routes_answer_json_errors(server: RunningServer, path: str) -> None:
    for accept in ("application/json", "text/html"):
        reply = server.request("GET", path, headers={"Accept": accept})
        assert reply.status == 404
        error = reply.json()["error"]
        assert error["code"] == "not_found" and "/api/openapi.json lists them" in error["message"]


def test_the_dismiss_reason_has_one_limit(server: RunningServer) -> None:
    saved = server.api("POST", "/api/memories", {"text": "a reasoned memory", "title": "r"})
    memory_id = saved.json()["memory"]["id"]
    over = server.api("POST", f"/api/memories/{memory_id}/dismiss", {"reason": "x" * 301})
    assert over.status == 400
    assert over.json()["error"]["message"] == "reason must be at most 300 characters."
    assert server.api("GET", f"/api/memories/{memory_id}").json()["dismissed_at"] is None
    document = server.api("GET", "/api/openapi.json").json()
    body = document["paths"]["/api/memories/{memory_id}/dismiss"]["post"]["requestBody"]
    reason = body["content"]["application/json"]["schema"]["properties"]["reason"]
    assert reason["maxLength"] == 300
    page = text_of(server.request("GET", f"/memories/{memory_id}", headers={"Accept": "text/html"}))
    assert 'maxlength="300"' in page and "up to 300 characters" in page


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"text": 1e999}', "text"),
        ('{"text": 12}', "text"),
        ('{"text": "ok", "title": 7}', "title"),
        ('{"text": "ok", "project": 3}', "project"),
        ('{"text": "ok", "files": [1]}', "each of files"),
    ],
)
def test_a_number_for_a_string_field_is_refused(
    server: RunningServer, raw: str, field: str
) -> None:
    reply = server.request("POST", "/api/memories", raw, {"Content-Type": "application/json"})
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["message"] == f"{field} must be a string."


def test_a_json_body_that_is_not_utf8_is_told_so(server: RunningServer) -> None:
    raw = '{"text": "caf\xe9"}'.encode("latin-1")
    reply = server.request("POST", "/api/memories", raw, {"Content-Type": "application/json"})
    assert reply.status == 400
    assert reply.json()["error"]["message"] == "The request body is not UTF-8."


def test_a_form_body_that_is_not_utf8_is_refused(server: RunningServer) -> None:
    token = browser_token(server)
    for items in (b"caf\xe9", b"caf%E9"):
        body = b"csrf=" + token.encode() + b"&name=latin&editing=&items=" + items
        headers = {
            "Origin": server.url,
            "Cookie": f"aletheia_csrf={token}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        reply = server.request("POST", "/lists/save", body, headers)
        assert reply.status == 400, reply.body
        assert "not UTF-8" in text_of(reply)
    assert server.api("GET", "/api/work-state/latin").status == 404


@pytest.mark.parametrize("address", ["/?q=%ff", "/?q=x&upto=%F0%9F", "/memories/rows?at=%ff"])
def test_a_page_address_that_is_not_utf8_is_refused(server: RunningServer, address: str) -> None:
    reply = server.request("GET", address, headers={"Accept": "text/html"})
    assert reply.status == 400
    assert "not UTF-8" in text_of(reply)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/work-state"), ("GET", "/api/openapi.json"), ("GET", "/api/memories/abc")],
)
def test_api_answers_are_not_cached_or_sniffed(
    server: RunningServer, method: str, path: str
) -> None:
    reply = server.api(method, path)
    assert reply.header("cache-control") == "no-store"
    assert reply.header("x-content-type-options") == "nosniff"


def test_a_form_post_from_origin_null_shows_a_page(server: RunningServer) -> None:
    token = browser_token(server)
    headers = {
        "Origin": "null",
        "Cookie": f"aletheia_csrf={token}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "text/html",
    }
    reply = server.request("POST", "/lists/save", f"csrf={token}&name=n&items=x", headers)
    assert reply.status == 403
    assert (reply.header("content-type") or "").startswith("text/html")
    assert "jsonrpc" not in text_of(reply) and "Something went wrong" in text_of(reply)


def test_an_oversized_form_shows_a_page(server: RunningServer) -> None:
    request = (
        b"POST /lists/save HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nAccept: text/html\r\n"
        b"Content-Length: 99999999\r\nConnection: close\r\n\r\n"
    )
    answer = exchange_raw(server.port, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert b"text/html" in head and b"jsonrpc" not in body


def test_an_unknown_host_shows_a_page_naming_allow_host(server: RunningServer) -> None:
    reply = server.request("GET", "/", headers={"Host": "memory.example", "Accept": "text/html"})
    assert reply.status == 421
    page = html.unescape(text_of(reply))
    assert "jsonrpc" not in page and "--allow-host memory.example" in page
    api = server.request("GET", "/api/work-state", headers={"Host": "memory.example"})
    assert api.status == 421 and "--allow-host" in api.json()["error"]["message"]


def test_a_memory_address_that_is_no_number_says_so(server: RunningServer) -> None:
    reply = server.request("GET", "/memories/abc", headers={"Accept": "text/html"})
    assert reply.status == 404
    assert "A memory's id is a number" in html.unescape(text_of(reply))


def test_one_context_item_is_one_item(server: RunningServer) -> None:
    server.api("POST", "/api/memories", {"text": "alone here", "project": "solo"})
    markdown = server.api("GET", "/api/context?project=solo").json()["markdown"]
    assert "Context economics: 1 item listed;" in markdown
