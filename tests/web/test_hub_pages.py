"""The hub's Tokens and Audit pages, for an admin token, in a real Chromium."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from aletheia_mem.clock import system_clock
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.sqlite import SqliteStore
from tests.hub.helpers import INIT_PARAMS, Hub, Reply, running_hub
from tests.web.browser import axe_violations

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with running_hub(tmp_path_factory.mktemp("web-hub") / "hub.db") as running:
        yield running


def initialize_status(hub: Hub, secret: str) -> int:
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
    return hub.post("/mcp", message, secret).status


def form_post_status(hub: Hub, path: str, headers: dict[str, str]) -> int:
    """A form post with no sign-in cookie and no CSRF token."""
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        sent = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        conn.request("POST", path, "scope=admin&name=sneaky", sent)
        return conn.getresponse().status
    finally:
        conn.close()


def sign_in(page: Page, hub: Hub, secret: str) -> None:
    page.goto(hub.url + "/")
    expect(page).to_have_url(hub.url + "/sign-in?next=%2F")
    page.get_by_label("Admin token").fill(secret)
    page.get_by_role("button", name="Sign in").click()


def test_only_an_admin_token_signs_in(hub: Hub, page: Page) -> None:
    reader = hub.token("read", None, "reader-only")
    sign_in(page, hub, reader)
    expect(page.get_by_role("alert")).to_contain_text("not a live admin token")
    assert form_post_status(hub, "/tokens/create", {"Origin": hub.url}) == 401
    sign_in(page, hub, hub.token("admin", None, "ops"))
    expect(page).to_have_url(hub.url + "/tokens")
    nav = page.get_by_role("navigation")
    expect(nav.get_by_role("link", name="Tokens")).to_be_visible()
    expect(nav.get_by_role("link", name="Audit")).to_be_visible()
    expect(nav.get_by_role("link", name="Memories")).to_have_count(0)


def test_a_token_is_created_shown_once_and_revoked(hub: Hub, page: Page) -> None:
    admin = hub.token("admin", None, "ops-2")
    sign_in(page, hub, admin)
    page.get_by_label("Name").fill("bob-laptop")
    page.get_by_label("Scope").select_option("mcp")
    page.get_by_label("Projects (comma-separated, or * for every project)").fill("shop")
    page.get_by_label("Your admin token (to confirm)").fill(admin)
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("New token").input_value()
    assert secret.startswith("alt_")
    assert initialize_status(hub, secret) == 200  # the new token works over MCP
    expect(page.locator('tr[data-token="bob-laptop"]')).to_contain_text("shop")
    page.goto(hub.url + "/tokens")
    assert secret not in page.content()  # shown once: never again
    page.get_by_role("button", name="Revoke bob-laptop").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm with your admin token")
    assert axe_violations(page) == []
    page.get_by_label("Your admin token").fill(admin)
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_have_text("Token revoked.")
    expect(page.locator('tr[data-token="bob-laptop"]')).to_contain_text("revoked")
    assert initialize_status(hub, secret) == 401
    assert axe_violations(page) == []


def test_the_audit_filters_by_token_tool_project_and_result(hub: Hub, page: Page) -> None:
    alice = hub.token("read", ("shop",), "alice")
    session = hub.initialize(alice)
    hub.call_tool(alice, session, "search", query="anything", project="shop")
    _, refused = hub.call_tool(alice, session, "save_memory", text="not allowed", project="shop")
    assert refused
    sign_in(page, hub, hub.token("admin", None, "ops-3"))
    page.get_by_role("navigation").get_by_role("link", name="Audit").click()
    page.get_by_label("Token").select_option("alice")
    page.get_by_label("Result").select_option("refused")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("tr.audit-row")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("save_memory")
    page.get_by_label("Result").select_option("")
    page.get_by_label("Tool").fill("search")
    page.get_by_label("Project").fill("shop")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("ok")
    assert axe_violations(page) == []


def test_a_post_to_the_hub_pages_needs_the_csrf_token_even_with_an_admin_token(hub: Hub) -> None:
    admin = hub.token("admin", None, "ops-4")
    bearer = {"Authorization": f"Bearer {admin}"}
    assert form_post_status(hub, "/tokens/create", {"Origin": hub.url, **bearer}) == 403
    assert form_post_status(hub, "/tokens/create", {"Origin": "http://evil.example"}) == 403
    assert "sneaky" not in _token_names(hub)


def _token_names(hub: Hub) -> list[str]:
    store = SqliteStore(hub.db)
    try:
        return [token.name for token in store.list_tokens()]
    finally:
        store.close()


def page_status(hub: Hub, path: str, cookie: str) -> int:
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_sign_in_cookie_is_a_session_not_the_token_and_ends_with_it(
    hub: Hub, page: Page
) -> None:
    """Browsers send a host's cookies to every port of it: the cookie must be no bearer."""
    secret = hub.token("admin", None, "ops-cookie")
    sign_in(page, hub, secret)
    expect(page).to_have_url(hub.url + "/tokens")
    [cookie] = [c for c in page.context.cookies() if c["name"] == "aletheia_hub"]
    value = cookie["value"]
    assert secret not in value and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert initialize_status(hub, value) == 401  # not a token for /mcp
    assert initialize_status(hub, value.partition(":")[2]) == 401
    assert page_status(hub, "/tokens", f"aletheia_hub={value}") == 200
    forged = value.partition(":")[0] + ":" + "0" * 32
    assert page_status(hub, "/tokens", f"aletheia_hub={forged}") == 303
    assert page_status(hub, "/tokens", f"aletheia_hub={secret}") == 303  # the old cookie form

    store = SqliteStore(hub.db)
    try:
        store.revoke_token("ops-cookie", system_clock())
    finally:
        store.close()
    page.goto(hub.url + "/tokens")
    expect(page).to_have_url(hub.url + "/sign-in?next=%2Ftokens")


def test_sign_out_ends_the_hub_session_for_a_copied_cookie_too(hub: Hub, page: Page) -> None:
    sign_in(page, hub, hub.token("admin", None, "ops-sign-out"))
    expect(page).to_have_url(hub.url + "/tokens")
    [cookie] = [c for c in page.context.cookies() if c["name"] == "aletheia_hub"]
    copied = f"aletheia_hub={cookie['value']}"
    assert page_status(hub, "/tokens", copied) == 200
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(hub.url + "/sign-in")
    assert [c for c in page.context.cookies() if c["name"] == "aletheia_hub"] == []
    assert page_status(hub, "/tokens", copied) == 303
    assert axe_violations(page) == []


def replayed_post(hub: Hub, path: str, cookies: str, csrf: str, fields: dict[str, str]) -> Reply:
    """A form post as another service on the hub's host name can send it: the owner's cookies
    (the sign-in and the CSRF one, both sent to every port) and this origin, no token."""
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": hub.url,
            "Cookie": cookies,
        }
        conn.request("POST", path, urlencode({"csrf": csrf, **fields}), headers)
        answer = conn.getresponse()
        return Reply(answer.status, dict(answer.getheaders()), answer.read().decode())
    finally:
        conn.close()


def test_a_copied_sign_in_cookie_alone_creates_and_revokes_no_token(hub: Hub, page: Page) -> None:
    """Browsers send a host's cookies to every port of it: a copy must mint nothing."""
    owner = hub.token("admin", None, "ops-replayed")
    victim = hub.token("read", None, "victim-reader")
    other_admin = hub.token("admin", None, "ops-other")
    sign_in(page, hub, owner)
    expect(page).to_have_url(hub.url + "/tokens")
    jar = {c["name"]: c["value"] for c in page.context.cookies()}
    cookies = "; ".join(f"{name}={value}" for name, value in jar.items())
    csrf = jar["aletheia_csrf"]
    mint = {"name": "minted", "scope": "admin", "projects": "*"}

    asked = replayed_post(hub, "/tokens/create", cookies, csrf, mint)
    assert asked.status == 200 and "Confirm with your admin token" in asked.body
    assert 'id="secret"' not in asked.body
    for wrong in ("alt_" + "x" * 32, other_admin):
        refused = replayed_post(
            hub, "/tokens/create", cookies, csrf, {**mint, "admin_token": wrong}
        )
        assert refused.status == 401
        assert "not the admin token you signed in with" in refused.body
    asked = replayed_post(hub, "/tokens/revoke", cookies, csrf, {"name": "victim-reader"})
    assert asked.status == 200 and "Confirm with your admin token" in asked.body
    assert "minted" not in _token_names(hub)
    assert initialize_status(hub, victim) == 200

    made = replayed_post(hub, "/tokens/create", cookies, csrf, {**mint, "admin_token": owner})
    assert made.status == 200 and 'id="secret"' in made.body  # the owner, typing it again


def test_the_audit_pages_to_older_rows_with_its_filter_kept(hub: Hub, page: Page) -> None:
    """A token's 200 cheap calls push no row out of reach: the page says how many match and
    links to the older ones, the filter kept."""
    hub.token("mcp", ("shop",), "flooder")
    store = SqliteStore(hub.db)
    try:
        for n in range(210):
            entry = AuditEntry(1_700_000_000_000 + n, "flooder", "search", "shop", "ok", f"#{n}")
            store.add_audit(entry)
    finally:
        store.close()
    sign_in(page, hub, hub.token("admin", None, "ops-audit-pages"))
    page.get_by_role("navigation").get_by_role("link", name="Audit").click()
    page.get_by_label("Token").select_option("flooder")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("tr.audit-row")
    expect(rows).to_have_count(200)
    pager = page.locator("p.pager").first
    expect(pager).to_contain_text("Rows 1 to 200 of 210 matching, newest first.")
    expect(pager).to_contain_text("10 older not shown")
    pager.get_by_role("link", name="Older rows").click()
    expect(rows).to_have_count(10)
    expect(rows.last).to_contain_text("#0")
    expect(page.locator("p.pager").first).to_contain_text("Rows 201 to 210 of 210")
    expect(page.get_by_label("Token")).to_have_value("flooder")
    assert axe_violations(page) == []
    page.locator("p.pager").first.get_by_role("link", name="Newer rows").click()
    expect(rows).to_have_count(200)
    expect(rows.first).to_contain_text("#209")


def get(hub: Hub, path: str, accept: str) -> Reply:
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        conn.request("GET", path, headers={"Accept": accept})
        answer = conn.getresponse()
        return Reply(answer.status, dict(answer.getheaders()), answer.read().decode())
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("path", "form_page"),
    [("/tokens/create", "/tokens"), ("/tokens/revoke", "/tokens"), ("/sign-out", "/")],
)
def test_a_forms_address_opened_in_a_browser_goes_to_the_forms_page_on_the_hub(
    hub: Hub, path: str, form_page: str
) -> None:
    opened = get(hub, path, "text/html,application/xhtml+xml")
    assert opened.status == 303 and opened.headers["location"] == form_page
    program = get(hub, path, "*/*")  # a program keeps its plain 405
    assert program.status == 405 and program.body == "Method Not Allowed"


def test_an_unknown_address_on_the_hub_gets_its_404_page(hub: Hub) -> None:
    opened = get(hub, "/tokens/nope", "text/html")
    assert opened.status == 404 and opened.headers["content-type"].startswith("text/html")
    assert "No page at this address. Check the address, or start from Tokens." in opened.body
    assert ">Back to Tokens</a>" in opened.body and "Memories" not in opened.body
    assert get(hub, "/tokens/nope", "*/*").body == "Not Found"
    assert get(hub, "/mcp", "text/html").status == 401  # MCP and sync answer as they did
    assert get(hub, "/sync/nope", "text/html").status == 401


def test_enter_in_the_address_bar_after_creating_a_token_opens_the_tokens_page(
    hub: Hub, page: Page
) -> None:
    admin = hub.token("admin", None, "ops-address-bar")
    sign_in(page, hub, admin)
    page.get_by_label("Name").fill("address-bar-bot")
    page.get_by_label("Your admin token (to confirm)").fill(admin)
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("New token").input_value()
    assert page.url == hub.url + "/tokens/create"
    page.goto(page.url)  # Enter in the address bar: a GET of the form's address
    expect(page).to_have_url(hub.url + "/tokens")
    expect(page.locator('tr[data-token="address-bar-bot"]')).to_be_visible()
    assert secret not in page.content()


@pytest.mark.parametrize(
    ("name", "projects", "said"),
    [
        ("carol", "sh\u200bop", "Projects must not contain control or format characters."),
        ("carol", " , ", 'Projects needs at least one project name, or "*" for all.'),
        ("carol/laptop", "shop", "Name may hold no / and no control, format or invisible"),
    ],
)
def test_the_token_forms_errors_name_its_fields_not_the_clis_flags(
    hub: Hub, page: Page, name: str, projects: str, said: str
) -> None:
    """A zero-width space is a format character, and the form has no --projects flag."""
    admin = hub.token("admin", None, f"ops-form-{len(said)}")
    sign_in(page, hub, admin)
    page.get_by_label("Name").fill(name)
    page.get_by_label("Projects (comma-separated, or * for every project)").fill(projects)
    page.get_by_label("Your admin token (to confirm)").fill(admin)
    page.get_by_role("button", name="Create token").click()
    expect(page.get_by_text(said)).to_be_visible()
    assert "--" not in page.content().split(said[:8], 1)[1][:300]
