"""An admin token limited to projects acts on the hub's pages (Tokens, Audit) only within them,
as it does over MCP; an admin token for every project sees and does everything. A real hub
process on each store, driven over HTTP as a browser's form posts are (its Origin, its CSRF)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path

import httpx2 as httpx
import pytest

from aletheia_mem.storage.open import open_hub_store
from tests.hub.helpers import Hub, running_hub


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


class Pages:
    """The hub's pages as one admin token's browser sees them (bearer, CSRF cookie)."""

    def __init__(self, hub: Hub, client: httpx.Client) -> None:
        self.hub = hub
        self.client = client

    def get(self, path: str) -> httpx.Response:
        return self.client.get(path)

    def post(self, path: str, **fields: str) -> httpx.Response:
        found = re.search(r'name="csrf" value="([^"]+)"', self.get("/tokens").text)
        assert found is not None
        form = {"csrf": found.group(1), **fields}
        return self.client.post(path, data=form, headers={"Origin": self.hub.url})

    def token_names(self) -> list[str]:
        return [
            unescape(name) for name in re.findall(r'data-token="([^"]+)"', self.get("/tokens").text)
        ]

    def audit_projects(self, query: str = "") -> set[str]:
        page = self.get("/audit" + query).text
        cells = re.findall(
            r'<tr class="audit-row">(?:<td[^>]*>[^<]*</td>){3}<td class="wrap"[^>]*>([^<]*)', page
        )
        return {unescape(cell) for cell in cells}


@contextmanager
def pages_of(hub: Hub, secret: str) -> Iterator[Pages]:
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx.Client(base_url=hub.url, headers=headers, timeout=10) as client:
        yield Pages(hub, client)


def live(hub: Hub, name: str) -> bool:
    store = open_hub_store(hub.db)
    try:
        return any(t.name == name and t.revoked_at is None for t in store.list_tokens())
    finally:
        store.close()


def search_refused(hub: Hub, secret: str, project: str) -> bool:
    session = hub.initialize(secret)
    _, refused = hub.call_tool(secret, session, "search", query="plan", project=project)
    return refused


@pytest.fixture(scope="module")
def tokens(hub: Hub) -> dict[str, str]:
    """Tokens of two projects, and the audit rows of a call in each."""
    made = {
        "shop-admin": hub.token("admin", ("shop",), "shop-admin"),
        "billing-writer": hub.token("sync", None, "billing-writer"),
        "billing-reader": hub.token("read", ("billing",), "billing-reader"),
        "shop-reader": hub.token("read", ("shop",), "shop-reader"),
        "root-admin": hub.token("admin", None, "root-admin"),
    }
    writer = made["billing-writer"]
    _, failed = hub.call_tool(
        writer, hub.initialize(writer), "save_memory", text="billing plan", project="billing"
    )
    assert not failed
    assert not search_refused(hub, made["shop-reader"], "shop")
    return made


@pytest.fixture(scope="module")
def limited(hub: Hub, tokens: dict[str, str]) -> Iterator[Pages]:
    """The pages as the admin token limited to shop sees them."""
    with pages_of(hub, tokens["shop-admin"]) as pages:
        yield pages


@pytest.fixture(scope="module")
def every(hub: Hub, tokens: dict[str, str]) -> Iterator[Pages]:
    """The pages as the admin token for every project sees them."""
    with pages_of(hub, tokens["root-admin"]) as pages:
        yield pages


def test_a_limited_admin_sees_only_tokens_and_audit_rows_of_its_projects(
    limited: Pages, every: Pages
) -> None:
    assert limited.get("/tokens").status_code == 200
    assert limited.token_names() == ["shop-admin", "shop-reader"]
    assert limited.audit_projects() == {"shop"}
    assert limited.audit_projects("?project=billing") == set()
    assert limited.audit_projects("?token=billing-writer") == set()
    assert "billing-writer" not in limited.get("/audit").text  # not even as a filter choice

    assert {"billing-writer", "root-admin", "shop-admin"} <= set(every.token_names())
    assert every.audit_projects() >= {"shop", "billing"}


def test_a_limited_admin_creates_tokens_only_within_its_projects(
    hub: Hub, limited: Pages, every: Pages
) -> None:
    for projects in ("*", "billing", "shop,billing"):
        refused = limited.post("/tokens/create", name="escalated", scope="admin", projects=projects)
        assert refused.status_code == 400, projects
        assert "limited to" in refused.text
    assert not live(hub, "escalated")

    made = limited.post("/tokens/create", name="shop-bot", scope="admin", projects="shop")
    assert made.status_code == 200
    found = re.search(r'id="secret" readonly value="([^"]+)"', made.text)
    assert found is not None
    assert not search_refused(hub, found.group(1), "shop")
    assert search_refused(hub, found.group(1), "billing")
    # Nothing typed: the admin's own projects, not every project.
    unnamed = limited.post("/tokens/create", name="shop-default", scope="read", projects="")
    assert unnamed.status_code == 200
    row = (
        r'<td class="wrap"[^>]*>shop-default</td><td[^>]*>read</td><td class="wrap"[^>]*>shop</td>'
    )
    assert re.search(row, unnamed.text)

    every_bot = every.post("/tokens/create", name="all-bot", scope="mcp", projects="*")
    assert every_bot.status_code == 200


def test_the_token_form_parts_projects_at_commas_only(hub: Hub, every: Pages) -> None:
    """Projects "My Project, shop" made a token of "my", "project" and "shop": a project key
    may hold a space, as the folder named "My Project" gives one."""
    made = every.post("/tokens/create", name="spaced", scope="read", projects="My Project, shop")
    assert made.status_code == 200
    row = r'>spaced</td><td[^>]*>read</td><td class="wrap"[^>]*>my project, shop</td>'
    assert re.search(row, made.text)
    found = re.search(r'id="secret" readonly value="([^"]+)"', made.text)
    assert found is not None
    assert not search_refused(hub, found.group(1), "my project")
    assert search_refused(hub, found.group(1), "my")


def test_the_token_form_reads_zero_width_projects_and_name_as_left_empty(
    hub: Hub, limited: Pages
) -> None:
    """Projects or Name of zero-width characters alone are blank (``is_blank``), as an empty
    field is: the admin's own projects and the default name, not a refusal of format
    characters."""
    zero_width = limited.post("/tokens/create", name="zw-default", scope="read", projects="\u200b")
    assert zero_width.status_code == 200
    row = r'<td class="wrap"[^>]*>zw-default</td><td[^>]*>read</td><td class="wrap"[^>]*>shop</td>'
    assert re.search(row, zero_width.text)
    unnamed = limited.post("/tokens/create", name="\u2060\ufeff", scope="read", projects="shop")
    assert unnamed.status_code == 200
    assert re.search(r'data-token="read-shop-[^"]+"', unnamed.text)


def test_a_limited_admin_revokes_only_tokens_within_its_projects(
    hub: Hub, tokens: dict[str, str], limited: Pages
) -> None:
    for victim in ("root-admin", "billing-writer", "billing-reader", tokens["root-admin"][:10]):
        refused = limited.post("/tokens/revoke", name=victim)
        assert refused.status_code == 404, victim
    assert live(hub, "root-admin") and live(hub, "billing-writer") and live(hub, "billing-reader")
    # Told as of a token that does not exist: nothing tells the names beyond its projects.
    assert "No live token named" in limited.post("/tokens/revoke", name="no-such").text
    pasted = limited.post("/tokens/revoke", name=tokens["root-admin"])  # the whole token
    assert pasted.status_code == 404 and tokens["root-admin"] not in pasted.text
    assert "No live token named &#34;[REDACTED]&#34;." in pasted.text

    done = limited.post("/tokens/revoke", name="shop-reader")
    assert done.status_code == 303
    assert done.headers["location"].startswith("/tokens?done=revoked&signed=")
    assert not live(hub, "shop-reader")
