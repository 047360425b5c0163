"""`aletheia sync`'s engine through the hub's sync API on a PostgreSQL store, in process.

The stores are SQLite files; the hub's store is PostgreSQL. Only the transport is a stand-in:
each call goes to the sync API's own handler for it (what /sync/hello, /sync/push and
/sync/pull run behind HTTP), so paging, cursors and the push after a merge are the real ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import dismissals, facts, memories, rules
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.hub.sync_api import SyncApi
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync.engine import sync_store
from aletheia_mem.tools.app import AppContext
from tests.conftest import FakeClock
from tests.hub.sync_helpers import counts, items, open_pg_hub


@dataclass
class DirectClient:
    """A HubClient whose calls reach the sync API's handlers without HTTP."""

    api: SyncApi
    hub_token: HubToken
    url: str = "https://hub.test"
    token: str = "alt_direct"  # what a HubClient sends; the handlers get ``hub_token``
    calls: list[str] = field(default_factory=list)

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(path)
        handler = {"/sync/hello": self.api._hello, "/sync/push": self.api._push}.get(
            path, self.api._pull
        )
        return handler(self.hub_token, body)[0]


def _token(projects: tuple[str, ...] | None = None, name: str = "team") -> HubToken:
    return HubToken(1, name, "hash", "al_x", "sync", projects, 0, None)


@pytest.fixture
def hub(pg_url: str) -> Iterator[Any]:
    store = open_pg_hub(pg_url)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def api(hub: Any) -> SyncApi:
    """The hub's sync API; its clock is the real one, as the versions the triggers write are."""
    app = AppContext(store=hub, clock=system_clock, default_project="shop", caller="hub")
    return SyncApi(app, threading.Lock())


@pytest.fixture
def local(tmp_path: Path) -> Iterator[dict[str, SqliteStore]]:
    opened = {name: SqliteStore(tmp_path / f"{name}.db") for name in ("a", "b")}
    try:
        yield opened
    finally:
        for store in opened.values():
            store.close()


def save(store: SqliteStore, clock: FakeClock, text: str, project: str = "shop") -> Any:
    clock.advance(1000)
    item = memories.MemoryInput(text=text, project=project, tool="test")
    return memories.save_memory(store, clock, item)[0]


def test_two_stores_sync_through_a_postgres_hub_and_end_identical(
    api: SyncApi, hub: Any, local: dict[str, SqliteStore], clock: FakeClock
) -> None:
    a, b = local["a"], local["b"]
    for index in range(7):
        save(a, clock, f"note {index} from a")
    shared = save(a, clock, "Staging needs the VPN")
    clock.advance(-1000)
    save(b, clock, "Staging needs the VPN")  # the same memory, another uid
    facts.record_fact(
        b, project="shop", subject="db", predicate="is", object="postgres",
        valid_from=None, source="t", now=clock.now,
    )  # fmt: skip
    rules.add_rule(
        b, rules.RuleInput("Run tests first", "you commit", "everywhere", "", [], [], "t"), 1
    )
    dismissals.set_dismissed(
        a, item_type="memory", item_id=shared.id, dismiss=True, reason="dup", actor="t",
        now=clock.now,
    )  # fmt: skip
    client = DirectClient(api, _token())
    for _ in range(2):
        for store in (a, b):
            sync_store(store, client, system_clock, page_size=3)  # type: ignore[arg-type]
    expected = items(hub)
    assert items(a) == expected == items(b)
    assert counts(hub) == counts(a) == counts(b)
    assert counts(hub)["memories"] == 8 and counts(hub)["rules"] == 1  # the same memory: one
    authors = {data["tool"] for (kind, _), data in expected.items() if kind == "memory"}
    assert authors == {"team/test"}  # the hub names the token and the tool that saved it
    assert client.calls.count("/sync/push") > 2  # 3 records a page


def test_a_second_sync_sends_and_applies_nothing(
    api: SyncApi, hub: Any, local: dict[str, SqliteStore], clock: FakeClock
) -> None:
    save(local["a"], clock, "once")
    client = DirectClient(api, _token())
    sync_store(local["a"], client, system_clock)  # type: ignore[arg-type]
    sync_store(local["a"], client, system_clock)  # type: ignore[arg-type]  # the author comes back
    again = sync_store(local["a"], client, system_clock)  # type: ignore[arg-type]
    assert (again.pushed, again.pulled) == (0, 0)
    assert counts(hub)["memories"] == 1


def test_a_project_limited_token_syncs_only_its_projects(
    api: SyncApi, hub: Any, local: dict[str, SqliteStore], clock: FakeClock
) -> None:
    save(local["a"], clock, "shop note")
    save(local["a"], clock, "billing note", project="billing")
    client = DirectClient(api, _token(("shop",)))
    report = sync_store(local["a"], client, system_clock)  # type: ignore[arg-type]
    assert report.projects == ["shop"]
    assert {data["project"] for data in items(hub).values()} == {"shop"}


def test_the_hub_refuses_to_sync_with_itself(api: SyncApi, hub: Any) -> None:
    with pytest.raises(InvalidInputError):
        api._hello(_token(), {"store_id": hub.sync_store_id()})
