"""The hub's Audit page shows 200 rows at a time, says how many match and pages to the older
ones, bounded to the rows its first page saw (rows written meanwhile shift no later page), its
filters kept: a real hub process on each store, read over HTTP as an admin's browser reads it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.open import open_hub_store
from tests.hub.helpers import Hub, running_hub
from tests.hub.test_hub_pages_projects import Pages, pages_of

START = 1_700_000_000_000  # 2023-11-14: older than any row the hub writes itself
FLOOD = 250  # rows of one token: more than a page of 200
DETAIL = re.compile(r'<td class="wrap" data-label="Detail">([^<]*)</td>')
LINK = re.compile(r'<a href="(/audit\?[^"]*)">{}</a>')


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def write_rows(hub: Hub, actor: str, count: int, project: str, first: int = 0) -> None:
    """``count`` rows of ``actor``, a second apart, each naming its number in its detail."""
    store = open_hub_store(hub.db)
    try:
        for n in range(first, first + count):
            at = START + n * 1000
            store.add_audit(AuditEntry(at, actor, "search", project, "ok", f"{actor} {n}"))
    finally:
        store.close()


@pytest.fixture(scope="module")
def admin(hub: Hub) -> Iterator[Pages]:
    write_rows(hub, "alice", FLOOD, "shop")
    write_rows(hub, "bob", 30, "billing")
    with pages_of(hub, hub.token("admin", None, "audit-admin")) as pages:
        yield pages


def details(html: str) -> list[str]:
    return [unescape(cell) for cell in DETAIL.findall(html)]


def link(html: str, name: str) -> str:
    found = re.search(LINK.pattern.format(name), html)
    assert found is not None, f"no {name} link"
    return unescape(found.group(1))


def test_the_audit_pages_to_older_rows_and_keeps_the_token_filter(hub: Hub, admin: Pages) -> None:
    first = admin.get("/audit?token=alice")
    assert first.status_code == 200
    assert details(first.text) == [f"alice {n}" for n in range(FLOOD - 1, FLOOD - 201, -1)]
    assert "Rows 1 to 200 of 250 matching, newest first." in first.text
    assert "50 older not shown" in first.text
    older = link(first.text, "Older rows")
    assert "token=alice" in older and "older=200" in older and "upto=" in older

    write_rows(hub, "alice", 3, "shop", first=FLOOD)  # written between the two pages
    second = admin.get(older)
    assert "Rows 201 to 250 of 250 matching, newest first." in second.text
    assert details(second.text) == [f"alice {n}" for n in range(49, -1, -1)]  # bob's: none
    assert "Older rows" not in second.text

    newer = admin.get(link(second.text, "Newer rows"))  # the first page, read anew
    assert "Rows 1 to 200 of 253 matching" in newer.text
    assert details(newer.text)[0] == f"alice {FLOOD + 2}"


def test_the_audit_says_how_many_rows_match_every_filter(admin: Pages) -> None:
    billing = admin.get("/audit?token=bob&project=billing&result=ok")
    assert "Rows 1 to 30 of 30 matching, newest first." in billing.text
    assert "Older rows" not in billing.text and "Newer rows" not in billing.text
    assert len(details(billing.text)) == 30
    none = admin.get("/audit?token=bob&project=shop")
    assert "No audit rows match." in none.text and "matching" not in none.text
    # Every row: more than a page, whoever wrote them.
    every = admin.get("/audit")
    total = int(re.sub(r"\D", "", re.search(r"of ([\d,]+) matching", every.text).group(1)))  # type: ignore[union-attr]
    assert total >= FLOOD + 30 and len(details(every.text)) == 200


def test_a_limited_admin_pages_through_rows_of_its_projects_only(hub: Hub, admin: Pages) -> None:
    with pages_of(hub, hub.token("admin", ("billing",), "billing-admin")) as limited:
        shown = limited.get("/audit")
        assert "of 30 matching" in shown.text
        assert {cell.split()[0] for cell in details(shown.text)} == {"bob"}
        past = limited.get("/audit?older=100").text  # past the end: the oldest row
        assert "Rows 30 to 30 of 30" in past and details(past) == ["bob 0"]
        assert "No audit rows match." in limited.get("/audit?token=alice").text


@pytest.mark.parametrize(
    ("query", "told"),
    [
        ("older=-5", "older= is not a number of rows"),
        ("older=abc", "older= is not a number of rows"),
        ("older=200&upto=abc", "upto= is not an audit row&#39;s id"),
        ("older=200&upto=-1", "upto= is not an audit row&#39;s id"),
        ("older=200&upto=0", "upto= is not an audit row&#39;s id"),
    ],
)
def test_an_odd_older_or_upto_on_the_audit_is_told(admin: Pages, query: str, told: str) -> None:
    shown = admin.get(f"/audit?token=alice&{query}")
    assert shown.status_code == 200 and told in shown.text
    assert "Traceback" not in shown.text
    assert "is not" not in admin.get("/audit?token=alice&older=200&upto=999999").text
