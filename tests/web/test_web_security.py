"""The UI's defences, from a real browser and raw HTTP: headers, cross-site posts, sign-in."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.http_server import Reply, RunningServer, running_server
from tests.web.browser import WAIT_MS, mcp_tool, memory_ids

pytestmark = pytest.mark.e2e

KEY = "web-ui-key-123"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-security")) as running:
        yield running


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    env = {"ALETHEIA_API_KEY": KEY}
    with running_server(tmp_path_factory.mktemp("web-keyed"), env=env) as running:
        yield running


@pytest.fixture
def attacker_site(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Another origin on this machine (another port), serving whatever page a test writes."""
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *args, directory=str(tmp_path)
    )
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}", tmp_path
    finally:
        site.shutdown()
        site.server_close()


def save(server: RunningServer, text: str, key: str | None = None) -> int:
    answer = mcp_tool(server.mcp_url, "save_memory", {"text": text}, key)
    return memory_ids(answer)[0]


def test_pages_forbid_inline_script_sniffing_and_framing(server: RunningServer) -> None:
    for path in ("/", "/static/ui.js", "/sign-in"):
        reply = server.request("GET", path)
        policy = reply.header("content-security-policy") or ""
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        assert "frame-ancestors 'none'" in policy
        assert reply.header("x-content-type-options") == "nosniff"
        assert reply.header("x-frame-options") == "DENY"


def test_a_foreign_host_or_origin_is_refused_as_on_mcp(server: RunningServer) -> None:
    assert server.request("GET", "/", headers={"Host": "evil.example"}).status == 421
    assert server.request("GET", "/", headers={"Origin": "https://evil.example"}).status == 403


def test_a_cross_origin_form_post_is_refused(
    server: RunningServer, page: Page, attacker_site: tuple[str, Path]
) -> None:
    memory = save(server, "Cross-site forms must not dismiss this")
    page.goto(f"{server.url}/memories/{memory}")  # the owner's browser holds the UI's cookies
    origin, folder = attacker_site
    (folder / "evil.html").write_text(
        f'<form id="f" method="post" action="{server.url}/memories/{memory}/dismiss">'
        '<input name="reason" value="pwned"></form>'
        '<script>document.getElementById("f").submit()</script>',
        encoding="utf-8",
    )
    with page.expect_response(f"{server.url}/memories/{memory}/dismiss") as answer:
        page.goto(f"{origin}/evil.html")
    assert answer.value.status == 403
    assert memory in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Cross-site"}))


def test_a_post_without_the_csrf_token_is_refused_even_from_this_origin(
    server: RunningServer,
) -> None:
    memory = save(server, "Token-less posts must not dismiss this")
    reply = server.request(
        "POST",
        f"/memories/{memory}/dismiss",
        "reason=x",
        {"Origin": server.url, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert reply.status == 403
    assert b"security token" in reply.body
    assert memory in memory_ids(mcp_tool(server.mcp_url, "search", {"query": "Token-less"}))


def test_with_an_api_key_nothing_is_shown_before_sign_in(keyed: RunningServer) -> None:
    save(keyed, "Secret plans for the keyed store", KEY)
    for path in ("/", "/memories/1", "/memories/rows?q=Secret", "/facts", "/rules", "/lists"):
        reply = keyed.request("GET", path)
        assert reply.status == 303, path
        assert reply.header(
            "location",
        ).startswith("/sign-in")  # type: ignore[union-attr]
        assert b"Secret" not in reply.body
    posted = keyed.request("POST", "/memories/1/pin", "", {"Origin": keyed.url})
    assert posted.status == 401


def test_sign_in_refuses_a_wrong_key_and_accepts_the_right_one(
    keyed: RunningServer, browser: Browser
) -> None:
    save(keyed, "Signed-in owners see this memory", KEY)
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        page.goto(keyed.url + "/")
        expect(page).to_have_url(f"{keyed.url}/sign-in?next=%2F")
        expect(page.locator("main")).not_to_contain_text("Signed-in owners")
        password = page.get_by_label("API key")
        assert password.get_attribute("type") == "password"
        password.fill("not-the-key")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("not the server's API key")
        page.get_by_label("API key").fill(KEY)
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(keyed.url + "/")
        expect(page.locator("#memories")).to_contain_text("Signed-in owners see this memory")
        cookie = next(c for c in context.cookies() if c["name"] == "aletheia_ui")
        assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    finally:
        context.close()


def form_post(
    server: RunningServer, path: str, fields: dict[str, str], token: str | None = None
) -> Reply:
    """A same-origin form post carrying this client's CSRF cookie and token (``token``: a
    browser's own, whose pages then show the notices of its redirects; else a new one)."""
    if token is None:
        cookie = server.request("GET", "/sign-in").header("set-cookie") or ""
        token = cookie.split(";")[0].partition("=")[2]
    body = urlencode({"csrf": token, **fields})
    headers = {
        "Origin": server.url,
        "Cookie": f"aletheia_csrf={token}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return server.request("POST", path, body, headers)


@pytest.mark.parametrize(
    "path",
    [
        "/?offset=%C2%B2",  # "²": str.isdigit() says yes, int() says no
        "/?offset=-3",
        "/?offset=1e9",
        "/memories/%C2%B2",
        "/memories/rows?after=%C2%B2",
        "/memories/rows?after=-1&offset=x",
    ],
)
def test_an_odd_number_in_the_address_gets_a_page_not_a_server_error(
    server: RunningServer, path: str
) -> None:
    reply = server.request("GET", path)
    assert reply.status in (200, 404), (path, reply.body[:200])
    assert (reply.header("content-type") or "").startswith("text/html")


def test_an_odd_evidence_id_in_the_rule_form_is_refused_as_invalid(server: RunningServer) -> None:
    reply = form_post(server, "/rules/add", {"then": "Odd evidence", "evidence_memory_ids": "²"})
    assert reply.status == 400
    assert b"must be ids like 12, 15." in reply.body


def test_sign_in_returns_to_the_page_asked_for_with_its_query(keyed: RunningServer) -> None:
    reply = keyed.request("GET", "/facts?subject=billing&project=shop")
    assert reply.status == 303
    location = reply.header("location") or ""
    assert parse_qs(urlsplit(location).query)["next"] == ["/facts?subject=billing&project=shop"]


def test_sign_out_ends_the_session_for_a_copied_cookie_too(
    keyed: RunningServer, browser: Browser
) -> None:
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        page.goto(keyed.url + "/")
        page.get_by_label("API key").fill(KEY)
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(keyed.url + "/")
        copied = next(c["value"] for c in context.cookies() if c["name"] == "aletheia_ui")
        replayed = {"Cookie": f"aletheia_ui={copied}"}
        assert keyed.request("GET", "/", headers=replayed).status == 200

        page.get_by_role("button", name="Sign out").click()
        expect(page).to_have_url(keyed.url + "/sign-in")
        assert [c for c in context.cookies() if c["name"] == "aletheia_ui"] == []
        # Ended in the store, not only in this browser: the copy no longer signs in.
        assert keyed.request("GET", "/", headers=replayed).status == 303
        page.goto(keyed.url + "/rules")
        expect(page).to_have_url(keyed.url + "/sign-in?next=%2Frules")
    finally:
        context.close()


def test_the_sign_in_cookie_lasts_a_week_and_sign_out_needs_the_csrf_token(
    keyed: RunningServer,
) -> None:
    reply = form_post(keyed, "/sign-in", {"key": KEY, "next": "/"})
    assert reply.status == 303
    cookie = next(
        value for name, value in reply.headers.items() if name == "set-cookie" and "ui=" in value
    )
    assert "Max-Age=604800" in cookie
    session = cookie.split(";")[0]
    assert keyed.request("GET", "/", headers={"Cookie": session}).status == 200
    forged = keyed.request(
        "POST", "/sign-out", "csrf=x", {"Origin": keyed.url, "Cookie": f"{session}; x=1"}
    )
    assert forged.status == 403
    assert keyed.request("GET", "/", headers={"Cookie": session}).status == 200


@pytest.fixture
def keyed_alone(tmp_path: Path) -> Iterator[RunningServer]:
    """A keyed server of one test's own: its failure counts are no other test's. One worker:
    each worker process counts its own, as each hub process does."""
    env = {"ALETHEIA_API_KEY": KEY, "ALETHEIA_WORKERS": "1"}
    with running_server(tmp_path, env=env) as running:
        yield running


def test_wrong_keys_are_throttled_per_address_as_the_hub_throttles_tokens(
    keyed_alone: RunningServer,
) -> None:
    statuses = [keyed_alone.api("GET", "/api/memories", key=f"guess-{n}").status for n in range(20)]
    assert statuses == [401] * 20
    throttled = keyed_alone.api("GET", "/api/memories", key="guess-20")
    assert throttled.status == 429
    assert int(throttled.header("retry-after") or "0") > 0
    assert keyed_alone.post_mcp({}, headers={"Authorization": "Bearer guess"}).status == 429
    # The sign-in form counts into the same.
    assert form_post(keyed_alone, "/sign-in", {"key": "guess", "next": "/"}).status == 429
    # From loopback the right key is still served: every local tool connects from there, and
    # one with a stale key must not lock out the others (from the network it waits too, see
    # tests/server/test_http_guard.py).
    assert keyed_alone.api("GET", "/api/memories?query=x", key=KEY).status == 200
    assert form_post(keyed_alone, "/sign-in", {"key": KEY, "next": "/"}).status == 303
